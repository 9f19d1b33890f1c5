#!/bin/sh
# SPDX-License-Identifier: MIT
# README.md's usage section, run as written: its install command (on this
# build), its pkg-config, CMake, C, C++ and qlock-run examples, with HOME
# pointing at a scratch directory so "$HOME/.local" is a fresh prefix.
# The C and C++ snippets get a main() that calls them; qlock-run lines
# whose program is not installed are skipped with a notice.
#   readme.sh README.md BUILD_DIR WORKDIR
set -eu
readme=$1 build=$2 work=$3
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
for f in sh1 sh2 sh3 sh4 sh5 c1 cpp1 cmake1; do
	[ -s "$b/$f" ] || { echo "FAIL: README usage block $f missing"; exit 1; }
done
step() { echo "== $*"; }
cd "$work"

step "install (README's cmake --install, on this build)"
grep '^cmake --install' "$b/sh1" | sed "s#--install build#--install \"$build\"#" >install.sh
sh -eu install.sh >/dev/null

{ cat "$b/c1"; echo 'int main(void) { update(); return 0; }'; } >app.c
step "pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
	cat "$b/sh2"
	. "$b/sh2"   # sourced: its export stays, as in the reader's shell
	echo "ran"
else
	echo "skip: pkg-config is not installed"
fi

step "CMake"
mkdir -p myapp
cp app.c myapp/
{ echo 'cmake_minimum_required(VERSION 3.25)'; echo 'project(app C)'
  echo 'add_executable(app app.c)'; cat "$b/cmake1"; } >myapp/CMakeLists.txt
cat "$b/sh3"
sh -eu "$b/sh3" >/dev/null
myapp/build/app
echo "ran"

step "C++"
{ cat "$b/cpp1"; echo 'int main() { produce(); consume(); return lookup() ? 0 : 1; }'; } >app.cpp
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
echo "readme: usage section ran as written"
