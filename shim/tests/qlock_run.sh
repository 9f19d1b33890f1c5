#!/bin/sh
# SPDX-License-Identifier: MIT
# qlock-run, the launcher: options reach the shim, the exit status passes
# through, missing programs and libraries are clear errors, it finds the
# library when installed, and --stats reports exact per-lock counts.
#   qlock_run.sh BUILD_DIR CONTEND_PROGRAM API_PROGRAM FROZEN_CLOCK_LIBRARY STATIC_PROGRAM|none
set -u
build=$1 contend=$2 api=$3 frozen=$4 static=${5:-none}
run=$build/shim/qlock-run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
expect() { # name, expected status, command...
	name=$1 want=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	got=$?
	if [ $got -eq "$want" ]; then ok "$name (exit $got)"; else
		bad "$name: exit $got, expected $want"; cat "$work/out" "$work/err"; fi
}

expect "exit status passes through" 7 "$run" sh -c 'exit 7'
expect "-- separates the program" 0 "$run" --mutex=tp -- true
expect "missing program" 2 "$run" /no/such/program
grep -q "program not found" "$work/err" && ok "missing program: message" || bad "missing program: message"
expect "program not in PATH" 2 "$run" no-such-program-anywhere
grep -q "no-such-program-anywhere: program not found (not in PATH)" "$work/err" &&
	ok "program not in PATH: message" || bad "program not in PATH: message"
printf 'echo hi\n' >"$work/noexec"
expect "program not executable" 2 "$run" "$work/noexec"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "noexec: not executable" "$work/err" &&
	ok "program not executable: one line: $(cat "$work/err")" || { bad "program not executable: message"; cat "$work/err"; }
expect "program is a directory" 2 "$run" "$work"
grep -q "a directory, not a program" "$work/err" && ok "program is a directory: message" ||
	bad "program is a directory: message"
# A statically linked program: warned when a report is asked for (the
# preload cannot reach it), silent on a plain run.
if [ "$static" != none ]; then
	expect "static program runs" 0 "$run" --profile "$static"
	grep -q "statically linked" "$work/err" && ok "static program: warned ($(cat "$work/err"))" ||
		bad "static program: no warning"
	expect "static program, no report asked" 0 "$run" "$static"
	[ -s "$work/err" ] && bad "static program: a plain run warned" || ok "static program: a plain run is silent"
	expect "dynamic program with --stats" 0 "$run" --stats="$work/dyn.txt" "$contend" 2 10
	grep -q "statically linked" "$work/err" && bad "a dynamic program was called static" ||
		ok "dynamic program: no warning"
else
	echo "note no static C library: the static program's warning is not checked"
fi
expect "unknown algorithm" 2 "$run" --mutex=spinning true
grep -q "choose one of: tp qspinlock glibc" "$work/err" && ok "unknown algorithm: choices" || bad "unknown algorithm: choices"
expect "unknown option" 2 "$run" --frobnicate true
expect "--deadlock-after alone" 2 env -u QLOCK_PROFILE "$run" --deadlock-after=5 true
grep -q "needs --profile or --lockdep" "$work/err" && ok "--deadlock-after alone: message" || bad "--deadlock-after alone: message"
expect "--deadlock-after with --lockdep" 0 "$run" --lockdep-file="$work/ld" --deadlock-after=5 true
expect "--lockdep=FILE.json" 0 "$run" --lockdep="$work/ld.json" true
grep -q '"tool":"qlock-lockdep"' "$work/ld.json" && ok "--lockdep=FILE.json: written" || bad "--lockdep=FILE.json: written"
expect "--lockdep-suppress of a missing file" 2 "$run" --lockdep-suppress="$work/none" true
expect "no program" 2 "$run"
expect "version" 0 "$run" --version
grep -q "^qlock-run (qlock) [0-9]" "$work/out" && ok "version: $(cat "$work/out")" || bad "version"

# The chosen algorithms reach the shim.
for m in tp qspinlock glibc; do
	for r in tp qrwlock rwsem glibc; do
		w=$("$run" --mutex=$m --rwlock=$r -- "$api" which)
		case $w in
		"qlock mutex=$m rwlock=$r "*) ;;
		*) bad "--mutex=$m --rwlock=$r: served by '$w'"; continue ;;
		esac
	done
done
[ $fail -eq 0 ] && ok "--mutex/--rwlock reach the shim (12 combinations)"

# A launcher without its library says so.
mkdir -p "$work/lonely"
cp "$run" "$work/lonely/"
expect "library missing" 127 "$work/lonely/qlock-run" true
grep -q "libqlock-pthread.so not found" "$work/err" && ok "library missing: message" || bad "library missing: message"

# Installed: bin/qlock-run finds lib*/libqlock-pthread.so.
cmake --install "$build" --prefix "$work/prefix" >/dev/null 2>&1 || bad "cmake --install"
lib=$("$work/prefix/bin/qlock-run" --library)
case $lib in
"$(cd "$work/prefix" && pwd -P)"/lib*/libqlock-pthread.so) ok "installed launcher uses $lib" ;;
*) bad "installed launcher uses '$lib'" ;;
esac
w=$("$work/prefix/bin/qlock-run" "$api" which)
case $w in qlock*) ok "installed launcher runs on qlock: $w" ;; *) bad "installed: '$w'" ;; esac

# Relative paths: the files are made absolute against the caller's directory
# (the program may change its own), and a directory is not a file.
w=$(cd "$work" && "$run" --stats=st.txt -- sh -c 'echo "$QLOCK_STATS"')
[ "$w" = "$work/st.txt" ] && ok "--stats=st.txt: $w" || bad "--stats=st.txt gave '$w'"
# The installed launcher however it is called: a relative path, a PATH
# entry with a trailing slash (dash then gives $0 as bin//qlock-run), a
# path through bin/. or from a directory below bin/.
mkdir -p "$work/prefix/bin/sub"
for how in "cd '$work/prefix' && sh bin/qlock-run --library" \
	"PATH='$work/prefix/bin/':\$PATH sh -c 'qlock-run --library'" \
	"sh '$work/prefix/bin//qlock-run' --library" \
	"sh '$work/prefix/bin/./qlock-run' --library" \
	"cd '$work/prefix/bin/sub' && sh ../qlock-run --library"; do
	w=$(sh -c "$how" 2>&1)
	if [ -f "$w" ]; then ok "finds the library: $how"; else bad "$how: '$w'"; fi
done
expect "--profile=DIR/" 2 "$run" --profile="$work/" true
grep -q "a directory, not a file" "$work/err" && ok "--profile=DIR/: message" || bad "--profile=DIR/: message"
expect "--stats=DIR" 2 "$run" --stats="$work" true
grep -q "a directory, not a file" "$work/err" && ok "--stats=DIR: message" || bad "--stats=DIR: message"
# A report at exit visits only the lock rows and thread records in use:
# the rest (20 MiB of zero pages) stays unmapped, so a short program's
# exit is not slowed by page faults (1,300 of them if every record and row
# were visited).
if command -v python3 >/dev/null 2>&1; then
	minflt() { python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt)' "$@"; }
	base=$(minflt "$run" -- true)
	for opt in "--profile=$work/pf.txt" "--stats=$work/st.txt"; do
		n=$(minflt "$run" "$opt" -- true)
		if [ -n "$base" ] && [ -n "$n" ] && [ "$n" -lt $((base + 300)) ]; then
			ok "${opt%%=*}: $n page faults, plain $base"
		else
			bad "${opt%%=*}: $n page faults, plain $base (the report visits unused records?)"
		fi
	done
else
	ok "page faults of the report: no python3, not checked"
fi

# A CLOCK_MONOTONIC that does not advance (a faked or failing clock) must
# not hold the statistics' set-up, which measures the TSC against it.
LD_PRELOAD=$frozen timeout 20 "$run" --stats="$work/fz.txt" -- true
st=$?
[ $st -eq 0 ] && ok "--stats with a frozen clock starts (exit 0)" ||
	bad "--stats with a frozen clock: exit $st (124: hung in the clock's set-up)"

# The launcher forks nothing before it execs the program (a short program
# would pay for each fork), save for the static-program check of a run
# that asked for a report (its line says so).
if grep -n '\$([^(]\|`' "$run" | grep -v 'the fork of a run with a report'; then
	bad "qlock-run has command substitutions"; else ok "qlock-run forks nothing on a plain run"; fi

# --stats: exact acquisition counts, the contended lock, on stderr or in a file.
check_stats() { # label, stats file, contend's stdout
	st=$1 f=$2 o=$3
	while read -r name addr n rest; do
		kind=mutex
		[ "$name" = table ] && kind=rwlock-rd
		row=$(grep -E "^libqlock-pthread: $addr +$kind " "$f" | head -n 1)
		set -- $row
		if [ -z "$row" ]; then
			bad "$st: no row for $name ($addr)"
		elif [ "$4" != "$n" ]; then
			bad "$st: $name acquired $4, expected $n"
		elif [ "$name" != hot ] && [ "$name" != cold ] &&
			[ "$name" != table ] && [ "$5" -lt 1 ]; then
			bad "$st: $name not counted as contended: $row"
		else
			ok "$st: $name $kind acquired $4, contended $5, wait $6 ms, max $7 ms"
		fi
	done <"$o"
	grep -q "most contended" "$f" || bad "$st: no most-contended table"
}
"$run" --stats -- "$contend" 4 20000 >"$work/c.out" 2>"$work/c.err" || bad "contend under --stats failed"
check_stats "--stats" "$work/c.err" "$work/c.out"
# `contend nap`: a mutex held across usleep() while its waiter arrives.
# The TP mutex (the default) sees its owner off the CPU and the report
# says so; the qspinlock does not look, and the line must be missing.
off_cpu_line='^libqlock-pthread: off-CPU owners +[1-9][0-9]* waits found the owner in sched_yield\(\), a sleep'
"$run" --stats -- "$contend" nap >"$work/n.out" 2>"$work/n.err" || bad "contend nap under --stats failed"
check_stats "--stats nap" "$work/n.err" "$work/n.out"
if grep -Eq "$off_cpu_line" "$work/n.err"; then
	ok "--stats nap: $(grep "off-CPU owners" "$work/n.err" | cut -c19-)"
else
	bad "--stats nap: no off-CPU owners line for a lock held across usleep()"; cat "$work/n.err"
fi
"$run" --stats --mutex=qspinlock -- "$contend" nap >"$work/n2.out" 2>"$work/n2.err" ||
	bad "contend nap --mutex=qspinlock failed"
if grep -Eq "$off_cpu_line" "$work/n2.err"; then
	bad "--stats nap --mutex=qspinlock: an off-CPU owners line from a lock that does not look"
else
	ok "--stats nap --mutex=qspinlock: no off-CPU owners line"
fi
(cd "$work" && "$run" --stats=st.txt --mutex=qspinlock --rwlock=qrwlock -- "$contend" 3 1000 >c2.out 2>c2.err) ||
	bad "contend under --stats=FILE failed"
[ -s "$work/c2.err" ] && { bad "--stats=FILE still printed on stderr"; cat "$work/c2.err"; }
check_stats "--stats=FILE (qspinlock, qrwlock)" "$work/st.txt" "$work/c2.out"

echo "qlock-run: $pass passed, $fail failed"
[ $fail -eq 0 ]
