#!/bin/sh
# SPDX-License-Identifier: MIT
# README.md's usage section, run as written: its install command (on this
# build), its pkg-config, CMake, C, C++ and qlock-run examples, with HOME
# pointing at a scratch directory so "$HOME/.local" is a fresh prefix.
# The C, C++ and CMake snippets must be excerpts (whole lines, in order,
# contiguous) of the examples/ files the README names, and the drop-in
# block the commands of examples/dropin/workq.c's header comment with the
# prefix written out; the commands then build those complete files.
# qlock-run lines whose program is not installed are skipped with a notice.
#   readme.sh README.md BUILD_DIR WORKDIR
set -eu
readme=$1 build=$2 work=$3
dir=$(cd "$(dirname "$readme")" && pwd)
readme=$dir/$(basename "$readme") examples=$dir/examples
rm -rf "$work"
mkdir -p "$work/home" "$work/blocks"
HOME=$work/home
export HOME
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH LD_PRELOAD || true

# Blocks of the usage section, by language: blocks/sh1, sh2, ..., c1, cpp1.
awk -v dir="$work/blocks" '
	/^## Using the library/ { on = 1 }
	/^## Reading the benchmark output/ { on = 0 }
	!on { next }
	/^```/ {
		if (out) { close(out); out = ""; next }
		lang = substr($0, 4); if (lang == "") lang = "text"
		n[lang]++; out = dir "/" lang n[lang]; printf "" > out; next
	}
	out { print > out }
' "$readme"
b=$work/blocks
for f in sh1 sh2 sh3 sh4 sh5 sh6 c1 cpp1 cmake1; do
	[ -s "$b/$f" ] || { echo "FAIL: README usage block $f missing"; exit 1; }
done
step() { echo "== $*"; }
cd "$work"

# excerpt BLOCK FILE: BLOCK's lines appear in FILE, contiguous and in order.
excerpt() {
	awk 'NR == FNR { want[++n] = $0; next }
	     { have[++m] = $0 }
	     END {
		for (i = 1; i + n - 1 <= m; i++) {
			for (j = 1; j <= n && have[i + j - 1] == want[j]; j++)
				;
			if (j > n)
				exit 0
		}
		exit 1
	     }' "$1" "$2"
}
step "snippets are excerpts of examples/"
for pair in c1:c/app.c cpp1:cxx/app.cpp cmake1:cmake/CMakeLists.txt; do
	blk=${pair%%:*} file=${pair#*:}
	grep -q "examples/$file" "$readme" ||
		{ echo "FAIL: README does not name examples/$file"; exit 1; }
	excerpt "$b/$blk" "$examples/$file" ||
		{ echo "FAIL: README's $blk block is not an excerpt of examples/$file"; exit 1; }
	echo "$blk: examples/$file"
done
# The drop-in block: workq.c's header comment commands, PREFIX written as
# $HOME/.local (quotes aside).
grep -q "examples/dropin/workq.c" "$readme" ||
	{ echo "FAIL: README does not name examples/dropin/workq.c"; exit 1; }
sed -n -E 's@^ \*   ([^ ].*)$@\1@p' "$examples/dropin/workq.c" >workq.commands
sed 's/"//g; s@\$HOME/\.local@PREFIX@g' "$b/sh6" >workq.readme
excerpt workq.readme workq.commands ||
	{ echo "FAIL: README's drop-in block is not the commands of examples/dropin/workq.c"; exit 1; }
echo "sh6: examples/dropin/workq.c"

step "install (README's cmake --install, on this build)"
grep '^cmake --install' "$b/sh1" | sed -E "s#--install [^ ]+#--install \"$build\"#" >install.sh
sh -eu install.sh >/dev/null

cp "$examples/c/app.c" app.c
step "pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
	cat "$b/sh2"
	. "$b/sh2"   # sourced: its export stays, as in the reader's shell
	echo "ran"
else
	echo "skip: pkg-config is not installed"
fi

step "CMake"
cp -R "$examples/cmake" myapp
cat "$b/sh3"
sh -eu "$b/sh3" >/dev/null
myapp/build/app
echo "ran"

step "C++"
cp "$examples/cxx/app.cpp" app.cpp
if command -v pkg-config >/dev/null 2>&1; then
	cat "$b/sh4"
	. "$b/sh4"
	./app
	echo "ran"
else
	echo "skip: pkg-config is not installed"
fi

step "qlock-run"
head -c 2000000 /dev/zero | tr '\0' 'q' >big.file
while IFS= read -r line; do
	prog=$(echo "$line" | sed 's/.* -- \([^ ]*\).*/\1/')
	if ! command -v "$prog" >/dev/null 2>&1; then
		echo "skip: $prog not installed: $line"
		continue
	fi
	echo "$line"
	sh -eu -c "$line" 2>stats.err
	grep -q "most contended" stats.err && echo "(stats printed)"
done <"$b/sh5"

step "the drop-in example"
mkdir dropin
cp "$examples/dropin/workq.c" dropin/
cat "$b/sh6"
(cd dropin && sh -eu "$b/sh6") >dropin.out 2>dropin.err ||
	{ cat dropin.out dropin.err; echo "FAIL: the drop-in block"; exit 1; }
cat dropin.out
[ "$(grep -c 'is from libqlock-pthread' dropin.out)" -eq "$(grep -c -E 'qlock-run|LD_PRELOAD=' "$b/sh6")" ] ||
	{ echo "FAIL: the drop-in block's runs did not all preload qlock"; exit 1; }
echo "readme: usage section ran as written"
