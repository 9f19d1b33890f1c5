#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/ against an installed qlock: install the build to a scratch
# prefix, then for each example run the build-and-run commands written in
# its header comment (PREFIX replaced by the scratch prefix), in a copy of
# its directory, with nothing else pointing at the build tree.  Each
# example checks its own result (exit status); the drop-in example's runs
# must name libc.so.6 once (the plain run) and libqlock-pthread.so for each
# run under qlock-run or LD_PRELOAD.  Then each source compiles with
# -Wall -Wextra -Werror, and the installed lockbench runs.
#   examples.sh BUILD_DIR EXAMPLES_DIR WORKDIR [with-lockbench]
# Fails at the first step that fails; exit status 77 (skipped) when
# pkg-config or g++ is missing, after running what does not need them.
set -eu
build=$1 examples=$2 work=$3 lockbench=${4:-}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH LD_PRELOAD QLOCK_STATS \
	QLOCK_PROFILE QLOCK_MUTEX QLOCK_RWLOCK QLOCK_LOCKDEP || true
step() { echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }

step "cmake --install $build --prefix PREFIX"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/qlock-run lib/libqlock.so lib/libqlock.a lib/libqlock-pthread.so \
	 lib/pkgconfig/qlock.pc lib/cmake/qlock/qlockConfig.cmake \
	 include/qlock/qlock.hpp; do
	[ -e "$prefix/$f" ] || fail "the install has no $f"
done

# The indented command lines of a file's header comment (" *   cmd",
# "//   cmd", "#   cmd"), PREFIX (not CMAKE_PREFIX_PATH) replaced.
commands() {
	sed -n -E 's@^( \*|//|#)   ([^ ].*)$@\2@p' "$1" |
		sed -E "s@(^|[^_A-Z])PREFIX@\\1$prefix@g"
}

# run EXAMPLE FILE: FILE's commands in a copy of examples/EXAMPLE.
run() {
	dir=$work/$1
	cp -R "$examples/$1" "$dir"
	commands "$dir/$2" >"$dir/commands.sh"
	[ -s "$dir/commands.sh" ] || fail "no build commands in examples/$1/$2"
	sed 's/^/$ /' "$dir/commands.sh"
	(cd "$dir" && sh -eu commands.sh) >"$dir/out" 2>"$dir/err" || {
		cat "$dir/out" "$dir/err"
		fail "examples/$1: a command failed"
	}
	cat "$dir/out"
}

skipped=
have() { command -v "$1" >/dev/null 2>&1; }

step "examples/c: C with pkg-config"
if have pkg-config; then run c app.c; else skipped="$skipped c(pkg-config)"; echo "skip: no pkg-config"; fi

step "examples/cxx: C++17 with qlock.hpp, pkg-config and g++"
if have pkg-config && have g++; then run cxx app.cpp; else skipped="$skipped cxx(pkg-config,g++)"; echo "skip: no pkg-config or g++"; fi

step "examples/cmake: find_package(qlock)"
run cmake CMakeLists.txt

step "examples/dropin: a pthread program under qlock-run and LD_PRELOAD"
run dropin workq.c
d=$work/dropin
glibc=$(grep -c 'pthread_mutex_lock is from libc\.so' "$d/out" || true)
qlock=$(grep -c 'pthread_mutex_lock is from libqlock-pthread\.so' "$d/out" || true)
runs=$(grep -c '^workq: .* sum right$' "$d/out" || true)
preloaded=$(grep -c -E 'qlock-run|LD_PRELOAD=' "$d/commands.sh")
[ "$glibc" -eq 1 ] || fail "dropin: $glibc runs on glibc's locks, expected 1"
[ "$qlock" -eq "$preloaded" ] ||
	fail "dropin: $qlock runs on libqlock-pthread.so, expected $preloaded"
[ "$runs" -eq $((preloaded + 1)) ] || fail "dropin: $runs runs finished right"
grep -q 'most contended' "$d/err" || fail "dropin: no --stats report on stderr"
echo "(stderr of the --stats run: $(grep -c 'most contended' "$d/err") lock table, algorithms: $(sed -n 's/^libqlock-pthread: \(mutex=.*\)/\1/p' "$d/err" | head -n 1))"

step "warning-free: -Wall -Wextra -Werror"
inc=$prefix/include
cc -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$examples/c/app.c"
cc -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$examples/cmake/app.c"
cc -Wall -Wextra -Werror -fsyntax-only "$examples/dropin/workq.c"
if have g++; then
	g++ -std=c++17 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$examples/cxx/app.cpp"
fi
echo "ok"

if [ -n "$lockbench" ]; then
	step "the installed lockbench"
	lb=$prefix/bin/lockbench
	[ -x "$lb" ] || fail "the install has no bin/lockbench"
	"$lb" --version
	(cd "$work" && "$lb" -w rate -d 0.05 -t 2 -r 1 pthread-mutex,tp-mutex >lockbench.out) ||
		{ cat "$work/lockbench.out"; fail "lockbench run"; }
	echo "a 2-thread run of pthread-mutex,tp-mutex: verified"
	# map --dropin finds the installed libqlock-pthread.so by itself.
	(cd "$work" && "$lb" map --dropin -t 2 --cs 1 --gap 0 -r 1 -d 0.02 \
		>map.out 2>&1) ||
		{ cat "$work/map.out"; fail "lockbench map --dropin"; }
	echo "map --dropin: ran with the installed libqlock-pthread.so"
	# lockbench report finds its installed scripts (their --help needs
	# nothing but Python 3).
	if have python3; then
		(cd "$work" && "$lb" report --help >report.out 2>&1) ||
			{ cat "$work/report.out"; fail "lockbench report --help"; }
		echo "report: its installed generator answered --help"
	fi
fi

if [ -n "$skipped" ]; then
	echo "examples: skipped:$skipped (the rest passed)"
	exit 77
fi
echo "examples: all ran against the installed qlock"
