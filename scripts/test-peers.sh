#!/bin/bash
# SPDX-License-Identifier: MIT
# Other projects' test suites and threaded programs under the pthread
# drop-in, for every `qlock-run --mutex=M --rwlock=R` combination, each
# compared with the same run on plain glibc (docs/testing.md, "Other
# projects' suites under the drop-in"):
#   glib       GLib's installed thread tests (libglib2.0-tests)
#   python     CPython's thread test modules (libpython3.11-testsuite):
#              the same set of test cases passes, fails and skips
#   perl       tests/peers/threads.pl (ithreads, threads::shared, queues)
#   ruby       tests/peers/threadpool.rb (a pool, Mutex, ConditionVariable)
#   node       tests/peers/threadpool.js (libuv's pool, worker threads)
#   stress-ng  its mutex and pthread stressors with --verify
#   compress   xz -T4, pigz, zstd -T4, pbzip2: byte-identical output
#
#   test-peers.sh [--quick] [-j JOBS] [-c MUTEX/RWLOCK]... [--keep] [SUITE...]
#     --quick  four combinations that together take every --mutex and every
#              --rwlock choice, and the shorter half of the glib and python
#              sets (a few minutes)
#     -j JOBS  runs at once (default 4: much of the suites' time is sleeps;
#              more at once make CPython's timing tests fail more often,
#              and each difference is run again, one at a time)
#     -c MUTEX/RWLOCK  only this combination (repeatable; plain glibc always)
#     --keep   keep the outputs and logs (they are kept anyway on a failure)
# BUILD_DIR (default build) holds shim/qlock-run.  A suite whose package is
# missing is skipped with one line.  Every run has a time-out: a hang is a
# FAIL, never a stuck run.  A result that differs from glibc's is run once
# more; one that then agrees is shown as ok* and named, and does not fail.
# Plain glibc's run is then repeated too: a test whose result changes
# between glibc's own two runs (a timing test on a busy machine) says
# nothing about the drop-in, so it is left out of the comparison, and a
# combination that differs from glibc only there is shown as ok~ with the
# tests named.
# Exit status: 0 when no combination differs from glibc, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
peers=$top/tests/peers
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
qrun=$build/shim/qlock-run

quick=0 jobs=4 keep=0 only=() pick=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	-j) jobs=$2; shift ;;
	-j*) jobs=${1#-j} ;;
	-c) pick+=("$2"); shift ;;
	--keep) keep=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "test-peers: unknown option $1" >&2; exit 2 ;;
	*) only+=("$1") ;;
	esac
	shift
done
[ -x "$qrun" ] || { echo "test-peers: $qrun not found (make build first)" >&2; exit 2; }
lib=$("$qrun" --library) || exit 2

all_suites=(python glib stress-ng compress node ruby perl)
suites=("${all_suites[@]}")
if [ ${#only[@]} -gt 0 ]; then
	for s in "${only[@]}"; do
		case " ${all_suites[*]} " in *" $s "*) ;; *) echo "test-peers: unknown suite $s (${all_suites[*]})" >&2; exit 2 ;; esac
	done
	suites=("${only[@]}")
fi

# The combinations: every choice qlock-run offers, read from its usage
# line, so a new algorithm joins the matrix by itself.
choices() { "$qrun" --help | sed -n "s/.*\[--$1=\([a-z0-9|]*\)\].*/\1/p" | head -n 1 | tr '|' ' '; }
mutexes=$(choices mutex) rwlocks=$(choices rwlock)
[ -n "$mutexes" ] && [ -n "$rwlocks" ] || { echo "test-peers: no --mutex/--rwlock choices in qlock-run --help" >&2; exit 2; }
combos=()
for m in $mutexes; do for r in $rwlocks; do combos+=("$m/$r"); done; done
if [ $quick = 1 ]; then
	# Mutex choice i with rwlock choice i+1 (tp/qrwlock, the default, first),
	# then a pair for each rwlock choice not yet taken: every choice of
	# either lock at least once.
	set -- $rwlocks
	q=() i=1
	for m in $mutexes; do
		eval "r=\${$(( i % $# + 1 ))}"
		q+=("$m/$r")
		i=$((i + 1))
	done
	for r in $rwlocks; do
		case " ${q[*]} " in *"/$r "*) ;; *) q+=("${mutexes%% *}/$r") ;; esac
	done
	combos=("${q[@]}")
fi
if [ ${#pick[@]} -gt 0 ]; then
	for c in "${pick[@]}"; do
		case " $mutexes " in *" ${c%/*} "*) ;; *) echo "test-peers: -c $c: no such --mutex choice ($mutexes)" >&2; exit 2 ;; esac
		case " $rwlocks " in *" ${c#*/} "*) ;; *) echo "test-peers: -c $c: no such --rwlock choice ($rwlocks)" >&2; exit 2 ;; esac
	done
	combos=("${pick[@]}")
fi

# The sets.  GLib: the tests of its threads and of what is built on them
# (GRWLock and GRecMutex are pthread rwlocks and recursive mutexes;
# GThreadPool, GAsyncQueue, GOnce, GPrivate, GTask, GMainContext).  GMutex,
# GCond and the bit locks are GLib's own futex code on Linux: its mutex,
# 1bit-mutex and bitlock tests would spend a minute without touching the
# drop-in.
glib_dir=/usr/libexec/installed-tests/glib
glib_tests="rwlock rec-mutex cond thread thread-deprecated threadtests thread-pool asyncqueue once onceinit private task mainloop contexts cancellable spawn-multithreaded slice-concurrent"
py=/usr/bin/python3.11
py_tests="test_threading test_thread test_threading_local test_threadsignals test_queue test_threadedtempfile test_concurrent_futures"
# Process pools only with fork (the drop-in's fork handling): spawn and
# forkserver add minutes of interpreter start-ups and no pthread locking.
py_ignore=(-i '*ProcessPoolSpawn*' -i '*ProcessPoolForkserver*')
if [ $quick = 1 ]; then
	glib_tests="rwlock rec-mutex cond thread thread-pool asyncqueue once private task mainloop"
	py_tests="test_threading test_thread test_queue"
fi

# Time-outs (s): a whole GLib test program, the python run, one test
# module in it, a script, the stress-ng run, one compressor round trip.
t_glib=300 t_py=1500 t_pymod=600 t_script=180 t_stress=60 t_prog=180

out=$(mktemp -d "${TMPDIR:-/tmp}/qlock-peers.XXXXXX")
trap 'if [ $keep = 1 ] || [ -e "$out/failed" ]; then echo "test-peers: outputs and logs kept in $out"; else rm -rf "$out"; fi' EXIT
mkdir -p "$out/res"
start=$(date +%s)

# --- what is installed (each missing suite: one line) ---
declare -A skip
need() { # suite, program, package
	command -v "$2" >/dev/null 2>&1 && return 0
	skip[$1]="$2 not installed (package $3)"
	return 1
}
for s in "${suites[@]}"; do
	case $s in
	glib) [ -d "$glib_dir" ] || skip[glib]="$glib_dir not installed (package libglib2.0-tests)" ;;
	python) if ! [ -x "$py" ]; then skip[python]="$py not installed (package python3.11)"
		elif ! [ -f /usr/lib/python3.11/test/test_threading.py ]; then
			skip[python]="CPython's test modules not installed (package libpython3.11-testsuite)"; fi ;;
	perl) need perl perl perl && ! perl -Mthreads -e1 2>/dev/null &&
		skip[perl]="perl built without ithreads" ;;
	ruby) need ruby ruby ruby ;;
	node) need node node nodejs ;;
	stress-ng) need stress-ng stress-ng stress-ng ;;
	compress) ;; # each compressor on its own, below
	esac
	[ -n "${skip[$s]:-}" ] && echo "skip $s: ${skip[$s]}"
done
progs=()
for p in xz:xz-utils pigz:pigz zstd:zstd pbzip2:pbzip2; do
	if command -v "${p%%:*}" >/dev/null 2>&1; then progs+=("${p%%:*}")
	else case " ${suites[*]} " in *" compress "*) echo "skip compress ${p%%:*}: not installed (package ${p#*:})" ;; esac; fi
done
[ ${#progs[@]} -gt 0 ] || skip[compress]="no compressor installed"

# Each program must really run on the drop-in: its pthread_mutex_lock
# bound to libqlock-pthread.so.
bound() { # suite, command...
	local s=$1
	shift
	LD_PRELOAD=$lib LD_DEBUG=bindings "$@" </dev/null 2>&1 >/dev/null |
		grep -q "to $lib .*\`pthread_mutex_lock'" && return 0
	echo "FAIL $s: $1 does not bind pthread_mutex_lock to the drop-in"
	: > "$out/failed"
}
for s in "${suites[@]}"; do
	[ -n "${skip[$s]:-}" ] && continue
	case $s in
	glib) bound glib "$glib_dir/thread" -l ;;
	python) bound python "$py" -c pass ;;
	perl) bound perl perl -e1 ;;
	ruby) bound ruby ruby -e1 ;;
	node) bound node node -e 0 ;;
	stress-ng) bound stress-ng stress-ng --version ;;
	compress) for p in "${progs[@]}"; do bound compress "$p" --version; done ;;
	esac
done

# A deterministic input for the compressors: 4 MB of compressible text.
if [ -z "${skip[compress]:-}" ]; then
	awk 'BEGIN { srand(42); for (i = 0; i < 120000; i++)
		printf "%08d,%s,%d,%d\n", i, (rand() < 0.5 ? "alpha beta gamma" : "delta epsilon"),
			int(rand() * 100000), int(rand() * 1000) }' > "$out/in.txt"
	in_sum=$(sha256sum < "$out/in.txt")
fi

# --- one suite under one combination ---
# Writes res/SUITE.COMBO.out (what must equal glibc's), .log (everything
# the programs said) and .rc (0 when the run passed its own checks).
launcher() { # combo -> the words that run a program under it
	if [ "$1" = plain ]; then L=(env)
	else L=("$qrun" "--mutex=${1%/*}" "--rwlock=${1#*/}"); fi
}
# run TIMEOUT LOGFILE CMD...: the exit status, 124 for a time-out; no
# terminal to read from (under timeout a program is not in the foreground)
run() {
	local t=$1 log=$2
	shift 2
	timeout -k 10 "$t" "$@" </dev/null >>"$log" 2>&1
}
note_rc() { [ "$1" = 124 ] || [ "$1" = 137 ] && echo "timed out after $2 s (a hang)"; }

suite_glib() { # combo dir
	local c=$1 d=$2 t rc
	for t in $glib_tests; do
		[ -x "$glib_dir/$t" ] || { echo "$t: not installed" >> "$d/out"; continue; }
		(cd "$d" && run $t_glib "$d/$t.log" "${L[@]}" "$glib_dir/$t")
		rc=$?
		cat "$d/$t.log" >> "$d/log"
		# TAP results without the random seed and the timings.
		grep -E '^(not )?ok ' "$d/$t.log" | sed "s|^|$t: |" >> "$d/out"
		note_rc $rc $t_glib | sed "s|^|$t: |" >> "$d/out"
		echo "$t: exit $rc" >> "$d/out"
		[ $rc = 0 ] || echo 1 > "$d/rc"
	done
}

suite_python() {
	local c=$1 d=$2 rc
	# One worker process (-j1): a test module that crashes or hangs is
	# that module's failure, and the others still report.
	(cd "$d" && run $t_py "$d/log" "${L[@]}" "$py" -m test -j1 --timeout $t_pymod \
		--tempdir "$d/tmp" --junit-xml "$d/junit.xml" "${py_ignore[@]}" $py_tests)
	rc=$?
	[ $rc = 0 ] || echo 1 > "$d/rc"
	if [ -s "$d/junit.xml" ]; then
		# Each test case: passed, failed or skipped.
		"$py" - "$d/junit.xml" >> "$d/out" <<'PY' || echo "junit: unreadable" >> "$d/out"
import sys, xml.etree.ElementTree as ET
rows = []
for tc in ET.parse(sys.argv[1]).iter('testcase'):
    kids = {k.tag for k in tc}
    st = 'fail' if kids & {'failure', 'error'} else 'skip' if 'skipped' in kids else 'pass'
    rows.append('%s %s' % (st, tc.get('name')))
print('\n'.join(sorted(rows)))
PY
		grep -oE 'test_[a-z_]+ (failed|crashed|timed out)' "$d/log" | sed 's/^/module /' >> "$d/out"
	else
		echo "no results (exit $rc)" >> "$d/out"
	fi
	note_rc $rc $t_py >> "$d/out"
}

script_suite() { # combo dir interpreter script
	local c=$1 d=$2 rc
	(cd "$d" && run $t_script "$d/log" "${L[@]}" "$3" "$peers/$4")
	rc=$?
	cat "$d/log" >> "$d/out"
	note_rc $rc $t_script >> "$d/out"
	echo "exit $rc" >> "$d/out"
	[ $rc = 0 ] || echo 1 > "$d/rc"
}
suite_perl() { script_suite "$1" "$2" perl threads.pl; }
suite_ruby() { script_suite "$1" "$2" ruby threadpool.rb; }
suite_node() { UV_THREADPOOL_SIZE=4 script_suite "$1" "$2" node threadpool.js; }

suite_stress-ng() {
	local c=$1 d=$2 rc
	(cd "$d" && run $t_stress "$d/log" "${L[@]}" stress-ng --mutex 2 --pthread 2 \
		--pthread-max 64 --verify --timeout 3s --temp-path "$d" --metrics-brief)
	rc=$?
	# Its verdict, not its figures.
	grep -E 'fail|error|successful run' "$d/log" | sed 's/^stress-ng: [a-z]*: *\[[0-9]*\] *//; s/ in [0-9.]*s$//' >> "$d/out"
	note_rc $rc $t_stress >> "$d/out"
	echo "exit $rc" >> "$d/out"
	[ $rc = 0 ] || echo 1 > "$d/rc"
}

suite_compress() {
	local c=$1 d=$2 p rc cmd
	for p in "${progs[@]}"; do
		case $p in
		xz) cmd='xz -T4 -1 --block-size=512KiB -c "$1" > o && xz -d -T4 -c o' ;;
		pigz) cmd='pigz -p 4 -6 -c "$1" > o && pigz -d -p 4 -c o' ;;
		zstd) cmd='zstd -q -T4 -3 -B512K -c "$1" > o && zstd -q -d -T4 -c o' ;;
		pbzip2) cmd='pbzip2 -p4 -1 -c < "$1" > o && pbzip2 -d -p4 -c < o' ;;
		esac
		(cd "$d" && run $t_prog "$d/log" "${L[@]}" sh -c "$cmd > back" sh "$out/in.txt")
		rc=$?
		# Byte-identical to glibc's output, and back to the input.
		echo "$p: $(sha256sum < "$d/o" 2>/dev/null | cut -c1-16) exit $rc" >> "$d/out"
		[ "$(sha256sum < "$d/back" 2>/dev/null)" = "$in_sum" ] &&
			echo "$p: round trip identical" >> "$d/out" ||
			{ echo "$p: round trip differs" >> "$d/out"; echo 1 > "$d/rc"; }
		note_rc $rc $t_prog | sed "s|^|$p: |" >> "$d/out"
		[ $rc = 0 ] || echo 1 > "$d/rc"
		rm -f "$d/o" "$d/back"
	done
}

task() { # suite combo [tag]: run it, keep out, log and rc under res/
	local s=$1 c=$2 tag=${3:-} d t0 name
	name=$s.${c/\//-}$tag
	d=$out/work/$name
	rm -rf "$d"
	mkdir -p "$d/tmp"
	: > "$d/out"
	: > "$d/log"
	echo 0 > "$d/rc"
	launcher "$c"
	t0=$(date +%s)
	TMPDIR=$d/tmp "suite_$s" "$c" "$d"
	echo "$(( $(date +%s) - t0 ))" > "$d/secs"
	# The CPU time of its processes (user + system), for the summary.
	times > "$d/times" # a builtin in this shell: a pipe's fork would see no children
	awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); c += t[1] * 60 + t[2] } }
		END { printf "%.0f\n", c }' "$d/times" > "$d/cpu"
	mv "$d/out" "$out/res/$name.out"
	mv "$d/log" "$out/res/$name.log"
	mv "$d/rc" "$out/res/$name.rc"
	mv "$d/secs" "$out/res/$name.secs"
	mv "$d/cpu" "$out/res/$name.cpu"
	[ -f "$d/junit.xml" ] && mv "$d/junit.xml" "$out/res/$name.junit.xml"
	rm -rf "$d"
	echo "ran $s under $c: $(cat "$out/res/$name.secs") s, $(cat "$out/res/$name.cpu") CPU-s"
}

# --- the runs: glibc's first, then every combination, JOBS at once ---
tasks=()
for c in plain "${combos[@]}"; do
	for s in "${suites[@]}"; do
		[ -n "${skip[$s]:-}" ] || tasks+=("$s $c")
	done
done
echo "test-peers: ${#tasks[@]} runs (${#combos[@]} combinations and plain glibc, $jobs at once): ${combos[*]}"
n=0
for t in "${tasks[@]}"; do
	if [ $n -ge "$jobs" ]; then wait -n; n=$((n - 1)); fi
	task $t &
	n=$((n + 1))
done
wait

# --- compare with glibc, run differences once more, tabulate ---
# The tests whose result changed between plain glibc's two runs of suite
# $1 (their names: the second field of an output line), one per line;
# glibc's second run is made the first time it is asked for.
glibc_flaky() {
	local base=$out/res/$1.plain
	if [ ! -e "$base.flaky" ]; then
		(task "$1" plain .again > /dev/null)
		comm -3 <(sort -u "$base.out") <(sort -u "$base.again.out") |
			awk '{ print $2 }' | sort -u > "$base.flaky"
	fi
	cat "$base.flaky"
}

# Does result $2 agree with glibc's on suite $1, leaving out the tests
# glibc itself flips?  (Only asked after a plain comparison failed.)
agrees_but_flaky() {
	local base=$out/res/$1.plain flaky
	flaky=$(glibc_flaky "$1")
	[ -n "$flaky" ] || return 1
	cmp -s <(awk 'NR == FNR { f[$1] = 1; next } !($2 in f)' "$base.flaky" "$base.out") \
		<(awk 'NR == FNR { f[$1] = 1; next } !($2 in f)' "$base.flaky" "$2")
}

declare -A cell
retried=() flaked=()
for s in "${suites[@]}"; do
	if [ -n "${skip[$s]:-}" ]; then
		for c in plain "${combos[@]}"; do cell[$s,$c]=skip; done
		continue
	fi
	base=$out/res/$s.plain
	if [ "$(cat "$base.rc")" = 0 ]; then cell[$s,plain]=ok; else cell[$s,plain]=fails; fi
	for c in "${combos[@]}"; do
		r=$out/res/$s.${c/\//-}
		if cmp -s "$base.out" "$r.out"; then cell[$s,$c]=ok; continue; fi
		if agrees_but_flaky "$s" "$r.out"; then
			cell[$s,$c]=ok~
			flaked+=("$s under $c: $(glibc_flaky "$s" | tr '\n' ' ')")
			continue
		fi
		echo "differs: $s under $c; running it once more"
		(task "$s" "$c" .again > /dev/null) # a subshell: its CPU time is its own
		if cmp -s "$base.out" "$r.again.out"; then
			cell[$s,$c]=ok*
			retried+=("$s under $c")
			continue
		fi
		if agrees_but_flaky "$s" "$r.again.out"; then
			cell[$s,$c]=ok~
			flaked+=("$s under $c: $(glibc_flaky "$s" | tr '\n' ' ')")
			continue
		fi
		cell[$s,$c]=FAIL
		: > "$out/failed"
		echo "FAIL $s under $c: differs from glibc (<) twice; the second run:"
		diff "$base.out" "$r.again.out" | head -n 30
		echo "  (logs: $r.log, $r.again.log)"
	done
done

printf '\n%-18s' "combination"
for s in "${suites[@]}"; do printf ' %-9s' "$s"; done
printf '\n%-18s' "plain glibc"
for s in "${suites[@]}"; do printf ' %-9s' "${cell[$s,plain]}"; done
for c in "${combos[@]}"; do
	printf '\n%-18s' "$c"
	for s in "${suites[@]}"; do printf ' %-9s' "${cell[$s,$c]}"; done
done
echo
echo "(mutex/rwlock; ok: the same result as plain glibc; plain glibc \"fails\": its own"
echo " run failed a check, which every combination must then repeat exactly)"
for r in "${retried[@]}"; do echo "ok*: $r differed from glibc once and agreed on the run again"; done
for r in "${flaked[@]}"; do echo "ok~: $r: differs from glibc only in tests whose result changed between glibc's own two runs"; done
echo "test-peers: $(( $(date +%s) - start )) s, the runs' processes $(cat "$out"/res/*.cpu | awk '{ c += $1 } END { print c }') CPU-s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ -e "$out/failed" ] && exit 1
exit 0
