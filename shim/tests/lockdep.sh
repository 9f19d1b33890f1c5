#!/bin/sh
# SPDX-License-Identifier: MIT
# The lock-order checker (QLOCK_LOCKDEP): each case of the lockdep program
# runs to its end (exit 0; its alarm fails a hang) and the reports name
# what they must, once; the clean case gets none.
#   lockdep.sh SHIM LOCKDEP_PROGRAM [names|nonames]
# names: the program has its symbols (function names and, built with -g,
# file:line are required); nonames: stripped (module+offset required).
set -u
shim=$1 prog=$2 syms=${3:-names}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

run() { # case [env...]
	c=$1
	shift
	rm -f "$work/rep"
	env LD_PRELOAD="$shim" QLOCK_LOCKDEP=1 QLOCK_LOCKDEP_FILE="$work/rep" "$@" \
		"$prog" "$c" >"$work/out" 2>"$work/err"
	st=$?
	touch "$work/rep"
	if [ $st -ne 0 ]; then
		bad "$c: exit $st"
		cat "$work/out" "$work/err" "$work/rep"
		return 1
	fi
	return 0
}
has() { # case, description, fixed string
	if grep -qF -- "$3" "$work/rep"; then ok "$1: $2"; else
		bad "$1: $2: no '$3' in the report:"; cat "$work/rep"; fi
}
count() { # case, pattern, expected number of lines
	n=$(grep -c -- "$2" "$work/rep")
	if [ "$n" -eq "$3" ]; then ok "$1: $3 x '$2'"; else
		bad "$1: $n x '$2', expected $3:"; cat "$work/rep"; fi
}
site() { # case, function, line-pattern (in the -g build)
	if [ "$syms" = names ]; then
		has "$1" "site $2" "$2"
	else
		has "$1" "site (stripped)" "$(basename "$prog")+0x"
	fi
}

if run abba; then
	count abba "lock-order cycle of 2 locks" 1
	has abba "thread name (now)" 'thread "backward"'
	has abba "thread name (before)" 'thread "forward"'
	site abba abba_forward
	site abba abba_backward
	site abba init_locks
	has abba "summary" "problems reported: 1 "
	has abba "summary: one dependency, in the singular" ", 1 dependency, "
fi
if run cycle3; then
	count cycle3 "lock-order cycle of 3 locks" 1
	count cycle3 "before: thread" 2
	site cycle3 take_two
fi
if run static; then
	count static "lock-order cycle of 2 locks" 1
	has static "static locks named" "static mutex"
	site static take_two
fi
if run trylock; then
	count trylock "^qlock-lockdep: " 1 # the summary only
	has trylock "summary" "problems reported: 0"
fi
if run self; then
	grep -q "timedlock: ETIMEDOUT" "$work/out" && ok "self: ETIMEDOUT" || bad "self: no ETIMEDOUT"
	count self "self-deadlock: a thread locks a mutex it holds" 1
	site self self_deadlock
fi
if run unlock; then
	count unlock "unlock of a lock this thread does not hold" 1
	site unlock unlock_unheld
fi
if run foreign; then
	count foreign "unlock of a lock this thread does not hold" 1
	count foreign "self-deadlock" 0
fi
if run deep; then # no ceiling on the locks a thread holds
	count deep "locks held" 0
	count deep "^qlock-lockdep: " 1 # the summary only
fi
if run destroy; then
	count destroy "destroy of a lock this thread holds" 2
	has destroy "mutex" "mutex 0x"
	has destroy "rwlock" "rwlock 0x"
	has destroy "class" ", initialised at "
	site destroy destroy_held
fi
if run rwread; then
	count rwread "recursive read lock that can deadlock" 1
	count rwread "read -> write upgrade" 1
	site rwread rw_recursive_read
fi
for alg in tp qspinlock glibc; do
	if run clean QLOCK_MUTEX=$alg QLOCK_RWLOCK=$([ $alg = glibc ] && echo glibc || echo tp); then
		count "clean ($alg)" "^qlock-lockdep: " 1
		has "clean ($alg)" "summary" "problems reported: 0"
	fi
done
# Suppressions: a site pattern drops the ABBA, the summary counts it; a
# pattern that matches nothing drops nothing.
if [ "$syms" = names ]; then pat='*abba_backward*'; else pat='start_thread*'; fi
printf '# test\nsite:%s\n' "$pat" >"$work/supp"
if run abba QLOCK_LOCKDEP_SUPPRESS="$work/supp"; then
	count "suppress (site)" "possible deadlock" 0
	has "suppress (site)" "counted" "suppressed: 1"
fi
printf 'class:*no_such_function*\n' >"$work/supp"
if run abba QLOCK_LOCKDEP_SUPPRESS="$work/supp"; then
	count "suppress (no match)" "possible deadlock" 1
fi
# The classes formed, listed at exit; every report has its hint.
if run abba QLOCK_LOCKDEP_CLASSES=1; then
	count classes "^  #[0-9]* mutex: 1 object, " 3
	has classes "listing" "lock classes (objects made, alive at exit)"
	count classes "^  hint: " 1
fi
# QLOCK_LOCKDEP=abort stops at the first report.
rm -f "$work/rep"
env LD_PRELOAD="$shim" QLOCK_LOCKDEP=abort QLOCK_LOCKDEP_FILE="$work/rep" "$prog" abba \
	>"$work/out" 2>"$work/err"
st=$?
if [ $st -eq 134 ] && grep -q "aborting" "$work/rep"; then ok "abort: SIGABRT after the report"
else bad "abort: exit $st"; cat "$work/rep"; fi
# Off: no report, no summary.
rm -f "$work/rep"
env LD_PRELOAD="$shim" QLOCK_LOCKDEP_FILE="$work/rep" "$prog" abba >/dev/null 2>&1
[ ! -s "$work/rep" ] && ok "off: nothing written" || bad "off: wrote $(cat "$work/rep")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
