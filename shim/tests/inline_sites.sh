#!/bin/sh
# SPDX-License-Identifier: MIT
# Sites in code the compiler inlined: wrapped.cc (built -O2 -g: by the
# project's compiler, and by clang with DWARF 4 and DWARF 5 when given)
# takes std::mutex through std::lock_guard (tally), std::shared_mutex
# through std::shared_lock (peek) and std::unique_lock (post), whose lock
# calls are inlined into those functions: each site is the user's line,
# never the standard library header's (gthr-default.h, shared_mutex), and
# the folded stacks show the inlined functions as frames of their own.
# Then copies of the first program with damaged debugging information
# (.debug_info overwritten or cut short, .debug_abbrev zeroed, the range
# and address-range tables overwritten): each runs and reports, its sites
# still naming their functions.
#   inline_sites.sh RUN SOURCE PROG [PROG...]
set -u
run=$1 src=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
line_of() { grep -n "$1" "$src" | head -n 1 | cut -d: -f1; }
dep=$(line_of SITE_DEPOSIT) ta=$(line_of SITE_TALLY) pk=$(line_of SITE_PEEK) po=$(line_of SITE_POST)
rounds=500
expect_in() { # label, file, fixed string
	if grep -qF -- "$3" "$2"; then ok "$1: $3"; else
		bad "$1: no '$3'"; sed 's/^/     | /' "$2" | head -n 40; fi
}
expect_out() { # label, file, fixed string
	if grep -qF -- "$3" "$2"; then bad "$1: '$3'"; sed 's/^/     | /' "$2" | head -n 40; else
		ok "$1: no '$3'"; fi
}
profile() { # program, label: its JSON profile in $work/p.json, its report in $work/r
	rm -f "$work/p.json"
	timeout 120 "$run" --profile="$work/p.json" -- "$1" 4 "$rounds" >"$work/o" 2>"$work/r" ||
		bad "$2: exit status"
	[ -s "$work/p.json" ] || { bad "$2: no profile written"; cat "$work/r"; }
}

# 1. The inlined lock calls' sites are the user's lines; the folded
#    stacks go on through the inlined functions (tally's mutex is
#    contended, as deposit's: its holder yields).
for prog in "$@"; do
	l=$(basename "$prog")
	profile "$prog" "$l"
	expect_in "$l" "$work/p.json" "\"first_locked_at\": \"tally(long) (wrapped.cc:$ta)\""
	expect_in "$l" "$work/p.json" "\"first_read_locked_at\": \"peek() (wrapped.cc:$pk)\""
	expect_in "$l" "$work/p.json" "\"first_write_locked_at\": \"post(long) (wrapped.cc:$po)\""
	expect_in "$l" "$work/p.json" "\"site\": \"tally(long) (wrapped.cc:$ta)\""
	expect_out "$l" "$work/p.json" "gthr-default.h:"
	expect_out "$l" "$work/p.json" "(shared_mutex:"
	timeout 120 "$run" --profile="$work/p.folded" -- "$prog" 4 "$rounds" >"$work/o" 2>"$work/r" ||
		bad "$l folded: exit status"
	expect_in "$l folded" "$work/p.folded" ";worker;tally;std::lock_guard<std::mutex>::lock_guard;std::mutex::lock"
done

# 2. Damaged debugging information: no crash, the functions still named.
readelf -hSW "$1" >"$work/elf" 2>/dev/null || { echo "no readelf: damaged copies skipped"; set --; }
shoff=$(sed -n 's/.*Start of section headers: *\([0-9]*\).*/\1/p' "$work/elf")
# section name -> "index offset size" (decimal)
sec() {
	sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) *[^ ]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\) .*/\1 \2 \3 \4/p' \
		"$work/elf" | while read -r i n o z; do
		[ "$n" = "$1" ] && echo "$i $((0x$o)) $((0x$z))"
	done
}
fill() { # copy, byte (octal), offset, count
	head -c "$4" /dev/zero | tr '\0' "\\$2" |
		dd of="$1" bs=1 seek="$3" conv=notrunc status=none
}
le64() { # value -> its 8 bytes, little-endian
	i=0
	while [ $i -lt 8 ]; do
		printf "\\$(printf %03o $(($1 >> (8 * i) & 255)))"
		i=$((i + 1))
	done
}
damage() { # label, section, how: ff-middle | zero | short
	set -- "$1" "$2" "$3" $(sec "$2")
	[ $# -eq 6 ] || { echo "skip $1: no $2 section"; return 1; }
	cp "$prog" "$work/d"
	case $3 in
	ff-middle) n=$(($6 / 4)); [ $n -gt 4096 ] && n=4096; fill "$work/d" 377 $(($5 + $6 / 2)) $n ;;
	zero) fill "$work/d" 000 "$5" "$6" ;;
	short) le64 $(($6 / 3)) | dd of="$work/d" bs=1 seek=$((shoff + $4 * 64 + 32)) conv=notrunc status=none ;;
	esac
}
if [ $# -gt 0 ] && [ -n "$shoff" ] && command -v dd >/dev/null 2>&1; then
	prog=$1
	for d in ".debug_info ff-middle" ".debug_info short" ".debug_abbrev zero" \
		 ".debug_abbrev ff-middle" ".debug_rnglists ff-middle" ".debug_ranges ff-middle" \
		 ".debug_aranges ff-middle" ".debug_addr ff-middle"; do
		set -- $d
		damage "$1 $2" "$1" "$2" || continue
		profile "$work/d" "$1 $2"
		expect_in "$1 $2" "$work/p.json" "\"first_locked_at\": \"tally(long) ("
		echo "     $(grep -o '"tally(long) ([^"]*"' "$work/p.json" | head -n 1)"
		expect_in "$1 $2" "$work/p.json" "\"first_locked_at\": \"deposit(Account&, long) (wrapped.cc:$dep)\""
	done
fi

echo "inline_sites: $pass passed, $fail failed"
[ $fail -eq 0 ]
