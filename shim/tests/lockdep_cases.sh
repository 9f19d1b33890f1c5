#!/bin/sh
# SPDX-License-Identifier: MIT
# One small program with a known answer under qlock-run --lockdep: the
# reports it gets must be exactly the expected ones.
#   lockdep_cases.sh QLOCK_RUN PROGRAM CASE EXPECTED [CHECK] [-- ARGS...]
# EXPECTED: "clean" (no report) or the report kinds joined by "+" (each
# exactly once): cycle, self, rwread, upgrade, unlock, destroy, and
# watchdog (the deadlock watchdog's report of a live deadlock: the case
# hangs for real and is killed once the report is there; the wait for it
# only fails a hang).  CHECK: further fixed strings the report must hold,
# joined by " && " (optional; "-" for none); @MARKER@ in one stands for the
# number of the line of CASES_SOURCE (the program's source, from the
# environment) that holds MARKER.  Prints "case expected got" and passes when
# got = expected.  The JSON report (--lockdep=FILE.json) is checked to
# parse and to hold as many reports, when python3 is there.
set -u
run=$1 prog=$2 case=$3 want=$4 check=${5:--}
shift 4
[ $# -gt 0 ] && shift
[ "${1:-}" = -- ] && shift
# The cases keep some of their heap to the end (an AddressSanitizer build
# would call that a leak).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env_opts=
pcase=$case
case $case in
wrapper_pattern) env_opts=--lockdep-wrapper=acquire_resource ;;
# the same wrapper through the option the profile shares
wrapper_pattern_shared) env_opts="--lockdep --wrapper=acquire_resource" pcase=wrapper_pattern ;;
esac
hang=0
case $want in *watchdog*) hang=1 ;; esac
if [ $hang = 1 ]; then
	"$run" --lockdep-file="$work/rep" --lockdep="$work/rep.json" --deadlock-after=1 \
		"$prog" "$pcase" "$@" >"$work/out" 2>"$work/err" &
	pid=$!
	i=0 # until the watchdog's report (600 x 0.1 s only fails a hang)
	while [ $i -lt 600 ] && ! grep -q "libqlock-pthread: deadlock" "$work/err"; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	st=0
else
	"$run" --lockdep-file="$work/rep" --lockdep="$work/rep.json" $env_opts \
		"$prog" "$pcase" "$@" >"$work/out" 2>"$work/err"
	st=$?
fi
touch "$work/rep"
n() { grep -c -- "$1" "$work/rep"; }
got=
add() { [ "$2" -gt 0 ] || return 0; k=$1; [ "$2" -gt 1 ] && k="$1x$2"; got=${got:+$got+}$k; }
add cycle "$(n '^qlock-lockdep: possible deadlock')"
add self "$(n '^qlock-lockdep: self-deadlock')"
add rwread "$(n '^qlock-lockdep: recursive read lock')"
add upgrade "$(n '^qlock-lockdep: read -> write upgrade')"
add unlock "$(n '^qlock-lockdep: unlock of a lock')"
add destroy "$(n '^qlock-lockdep: destroy of a lock')"
add watchdog "$(grep -c 'libqlock-pthread: deadlock' "$work/err")"
other=$(grep '^qlock-lockdep: ' "$work/rep" | grep -v -e 'possible deadlock' -e self-deadlock \
	-e 'recursive read' -e 'read -> write' -e 'unlock of' -e 'destroy of' \
	-e 'lock objects\? in' -e 'lock classes (objects')
[ -n "$other" ] && add other 1
got=${got:-clean}
printf '%-28s %-18s %s\n' "$case" "$want" "$got"
fail=0
[ "$got" = "$want" ] || fail=1
if [ $st -ne 0 ]; then
	echo "exit status $st"
	fail=1
fi
if [ $hang = 0 ] && ! grep -q "problems reported:" "$work/rep"; then
	echo "no summary line"
	fail=1
fi
rest=$check
[ "$rest" = - ] && rest=
while [ -n "$rest" ]; do
	one=${rest%% && *}
	case $rest in *" && "*) rest=${rest#* && } ;; *) rest= ;; esac
	case $one in *@*@*)
		m=${one#*@} m=${m%%@*}
		n=$(grep -n -- "$m" "${CASES_SOURCE:-/dev/null}" | head -n 1 | cut -d: -f1)
		one=$(printf '%s\n' "$one" | sed "s/@$m@/${n:-?}/") ;;
	esac
	if ! grep -qF -- "$one" "$work/rep" "$work/err"; then
		echo "the report lacks '$one'"
		fail=1
	fi
done
if [ $hang = 0 ] && command -v python3 >/dev/null 2>&1; then
	nrep=$(grep -c '^  hint: ' "$work/rep")
	python3 - "$work/rep.json" "$nrep" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
if len(d["reports"]) != int(sys.argv[2]) or d["summary"]["reports"] != int(sys.argv[2]):
    sys.exit("JSON: %d reports, the text has %s" % (len(d["reports"]), sys.argv[2]))
PY
fi
if [ $fail = 1 ]; then
	echo "--- report"; cat "$work/rep"; echo "--- stderr"; cat "$work/err"
fi
exit $fail
