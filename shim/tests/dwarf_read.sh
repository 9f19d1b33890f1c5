#!/bin/sh
# SPDX-License-Identifier: MIT
# The reader of inlined calls with its limits, with tiny ones (and no
# probes: every unit's table made at its first look-up) and with probes
# only (a unit's entries walked for each address, skipping what cannot
# hold it; dwarf_read.c) gives the same calls at 3000 addresses spread
# over each file's code; the first file (wrapped, built -O2 -g) has some,
# each in the function's line that addr2line -i names.
#   dwarf_read.sh DWARF_READ DWARF_READ_SMALL DWARF_READ_PROBE FILE...
set -u
read=$1 small=$2 probe=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0 first=1
for f; do
	b=$(basename "$f")
	if ! timeout 600 "$read" "$f" 3000 >"$work/a" 2>"$work/ae" ||
	   ! timeout 600 "$small" "$f" 3000 >"$work/b" 2>"$work/be" ||
	   ! timeout 600 "$probe" "$f" 3000 >"$work/c" 2>"$work/ce"; then
		echo "FAIL $b: exit status"; cat "$work/ae" "$work/be" "$work/ce"; fail=1; continue
	fi
	n=$(wc -l <"$work/a")
	if [ $first = 1 ] && [ "$n" -eq 0 ]; then
		echo "FAIL $b: no address in inlined code"; fail=1
	fi
	# The first file against binutils' addr2line -i: its last line (the
	# function's own, where the outermost inlined call is) is ours.  Not
	# for clang's output (binutils 2.40 misreads some of its DWARF 5).
	if [ $first = 1 ] && [ "$n" -gt 0 ] && command -v addr2line >/dev/null 2>&1 &&
	   ! readelf -p .comment "$f" 2>/dev/null | grep -q clang; then
		cut -d' ' -f1 "$work/a" >"$work/addrs"
		addr2line -a -i -e "$f" $(cat "$work/addrs") |
			awk '/^0x/ { if (a) print a, l; a = $1; next } { l = $0 } END { if (a) print a, l }' |
			sed -E 's/ \(discriminator [0-9]+\)//; s# [^ ]*/# #' >"$work/theirs"
		awk -F' [|] ' '{ split($2, x, " "); print $1, x[1] }' "$work/a" >"$work/ours"
		if cmp -s "$work/ours" "$work/theirs"; then
			echo "ok   $b: the function's line of each is addr2line -i's"
		else
			echo "FAIL $b: addr2line -i names other lines"
			diff "$work/ours" "$work/theirs" | head -n 20; fail=1
		fi
	fi
	if cmp -s "$work/a" "$work/b"; then
		echo "ok   $b: $(sed 's/^dwarf_read: //' "$work/ae"), the same with tiny limits"
	else
		echo "FAIL $b: the tiny limits give other calls"; diff "$work/a" "$work/b" | head -n 20; fail=1
	fi
	if cmp -s "$work/a" "$work/c"; then
		echo "ok   $b: the same with probes only"
	else
		echo "FAIL $b: probes give other calls"; diff "$work/a" "$work/c" | head -n 20; fail=1
	fi
	first=0
done
[ $fail -eq 0 ]
