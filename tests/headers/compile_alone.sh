#!/bin/sh
# SPDX-License-Identifier: MIT
# Every public header compiles alone, as the first and only include of a
# translation unit, in each language mode a user may pick: strict ISO C99
# and C11 and their GNU dialects with -pedantic, and C++17/C++20 with
# -pedantic, with gcc/g++ and clang/clang++ (each when installed).
#   compile_alone.sh INCLUDE_DIR
set -u
inc=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
warn="-Wall -Wextra -Werror -pedantic"

pick() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 && { echo "$c"; return; }; done; }
ccs="$(pick gcc cc) $(pick clang-14 clang)"
cxxs="$(pick g++ c++) $(pick clang++-14 clang++)"

pass=0 fail=0
try() { # compiler, flags, source
	if "$1" $2 $warn -fsyntax-only -I"$inc" "$3" 2>"$work/err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $(basename "$3" | sed 's/^hdr_//') with $1 $2:"
		head -n 5 "$work/err"
	fi
}

for h in "$inc"/qlock/*.h "$inc"/qlock/*.hpp; do
	[ -e "$h" ] || continue
	name=$(basename "$h")
	case $name in
	*.hpp) langs=cxx ;;
	*) langs="c cxx" ;;
	esac
	for lang in $langs; do
		if [ $lang = c ]; then
			src="$work/hdr_$name.c" comps=$ccs
			stds="-std=c99 -std=c11 -std=gnu99 -std=gnu11"
		else
			src="$work/hdr_$name.cpp" comps=$cxxs
			stds="-std=c++17 -std=c++20"
		fi
		echo "#include <qlock/$name>" >"$src"
		for c in $comps; do
			for s in $stds; do
				try "$c" "$s" "$src"
			done
		done
	done
done
echo "headers: $pass passed, $fail failed"
[ $fail -eq 0 ]
