#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the shell commands of README.md's "Using the library" exactly as
# written, on a clean copy of the committed tree (git archive HEAD), as a
# new user would: every ```sh block of that section, in order, in one
# `sh -ex` session (an `export` holds for the blocks after it), from the
# copy's top directory, with HOME a fresh directory (so "$HOME/.local" is
# the install prefix the README names).  The files the README says to
# bring are copied beside them: app.c (examples/c/app.c), app.cpp
# (examples/cxx/app.cpp), myapp (a copy of examples/cmake).  The program
# the last block built runs too.
#   readme-check.sh [WORKDIR]     (default: a temporary directory, removed)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then work=$1; mkdir -p "$work"; else
	work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
work=$(cd "$work" && pwd)

mkdir -p "$work/copy" "$work/home" "$work/blocks"
git -C "$src" archive HEAD | tar -x -C "$work/copy"
cd "$work/copy"

# The section's ```sh blocks, one file each.
awk -v dir="$work/blocks" '
	/^## / { in_sec = ($0 == "## Using the library") }
	in_sec && /^```sh$/ { n++; f = sprintf("%s/%02d.sh", dir, n); inb = 1; next }
	inb && /^```$/ { inb = 0; close(f); next }
	inb { print > f }' README.md
n=$(ls "$work/blocks" | wc -l)
if [ "$n" -eq 0 ]; then
	echo "readme-check: no sh blocks under \"## Using the library\" in README.md"; exit 1
fi

cp examples/c/app.c app.c
cp examples/cxx/app.cpp app.cpp
cp -r examples/cmake myapp

export HOME="$work/home"
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH CFLAGS CXXFLAGS
# One shell session, as a user's terminal: a block's `export` holds for
# the blocks after it.
for b in "$work"/blocks/*.sh; do
	echo "echo 'readme-check: block $(basename "$b" .sh) of $n'"
	cat "$b"
done >"$work/all.sh"
if ! sh -ex "$work/all.sh"; then
	echo "readme-check: FAILED (the last command shown above)"; exit 1
fi
# The C++ block built ./app last: it runs too.
if [ -x app ]; then ./app >/dev/null || { echo "readme-check: ./app failed"; exit 1; }; fi
echo "readme-check: the $n command blocks of \"Using the library\" ran as written"
