#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/install-genmc.sh without building anything: it parses (bash -n),
# its --dry-run prints the clone and the build steps, accepts a GenMC
# 0.10.3 source tree, and refuses another version, a non-GenMC directory
# and bad usage, each with its exit status.
#   install_genmc.sh SCRIPT WORKDIR
set -eu
script=$1 work=$2
rm -rf "$work"
mkdir -p "$work/genmc" "$work/other"
fail() { echo "FAIL: $*"; exit 1; }
# expect STATUS REGEX ARGS...: the exit status, and output matching REGEX.
expect() {
	want=$1 re=$2
	shift 2
	set +e
	bash "$script" "$@" >"$work/out" 2>&1
	got=$?
	set -e
	sed 's/^/  | /' "$work/out"
	[ "$got" -eq "$want" ] || fail "$* exited $got, expected $want"
	grep -q -E "$re" "$work/out" || fail "$*: no line matching '$re'"
	echo "ok: $* -> $got"
}
bash -n "$script" || fail "bash -n $script"
echo "ok: bash -n"
prefix=$work/prefix     # no genmc there, so nothing is skipped
expect 0 '^\+ timeout 300 git clone .*--branch v0\.10\.3 https://github\.com/MPI-SWS/genmc ' \
	--dry-run --prefix "$prefix"
grep -q -E "^\+ \./configure --prefix=$prefix --with-llvm=" "$work/out" || fail "no configure step"
grep -q '^+ make install' "$work/out" || fail "no make install step"
echo 'AC_INIT([GenMC], [0.10.3], [someone@example.org], [genmc])' >"$work/genmc/configure.ac"
expect 0 "^\+ cp -R $work/genmc " --dry-run --prefix "$prefix" -j 2 "$work/genmc"
echo 'AC_INIT([GenMC], [0.11.0], [someone@example.org], [genmc])' >"$work/genmc/configure.ac"
expect 1 'GenMC 0\.11\.0, this script builds 0\.10\.3' --dry-run --prefix "$prefix" "$work/genmc"
expect 1 'not a GenMC source tree' --dry-run --prefix "$prefix" "$work/other"
expect 1 'no such directory or file' --dry-run --prefix "$prefix" "$work/missing"
expect 2 'unknown option --frob' --frob
expect 2 'not a positive number' --jobs 0
expect 0 'install-genmc.sh \[--dry-run\]' --help
echo "install-genmc.sh: dry runs as expected"
