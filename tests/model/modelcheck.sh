#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Model-checks every tests/model harness with GenMC under RC11 and IMM, and
# each harness's mutations, which must be caught, then prints the table:
# "mutant", a weakened ordering (QLOCK_MUTATE_<NAME>), and for a lock that
# sleeps, "wake-mutant", its key futex wake dropped
# (QLOCK_MUTATE_WAKE_<NAME>, with the futex model's lost-wake check,
# QC_MODEL_LOST_WAKE_CHECK).  Exit 0 only when every harness is verified
# under both models and every mutation is reported as an error.
#
#   tests/model/modelcheck.sh [--quick] [-j JOBS] [-o LOGDIR] [harness ...]
#
# A harness states its own GenMC options, and the variants to check (each
# is one run with -DMODEL_VARIANT=v), on a line of its opening comment:
#   " * modelcheck: -unroll=3 variants=0,1,2"
# "mutants=0,2" limits the mutation runs to those variants (a variant
# that never runs the mutated code cannot catch it; default: all of them),
# "mutant-models=rc11" to those models (a weakening that one model does
# not tell apart from the original; default: rc11 and imm).
# "variant-unroll=7:3" gives variant 7 its own -unroll (a variant whose
# threads need one more loop iteration than the others').
# "wake-unroll=4" the -unroll of its wake-mutant runs (a lost wake-up
# that only shows after a loop's further iterations; default: the
# variant's own).
# "wake-mutants=0,1" lists the variants of the wake-mutant runs (none
# without it), under both models (--quick: RC11 only; a lost wake-up is
# a waiter left asleep, which does not depend on the memory model).
# "full-only=1:imm,7" marks verify runs too long for every `make test`
# (variant 1 under IMM, variant 7 under both models): --quick leaves them
# out and lists them as "full check only"; the full check runs them.
# "modelcheck: skip REASON" keeps a harness out of the run (listed in the
# table with its reason, not counted as a failure).
# GENMC (default genmc) names the checker, MODELCHECK_TIMEOUT
# (default 1800) bounds one run in seconds: a guard against a checker
# that never ends, not a time limit (a run's work is fixed, its time is
# not: the slowest full-only runs take minutes on a quiet 2-CPU machine
# and several times that beside other work).  Logs, with the error
# traces, go to LOGDIR (default build/modelcheck).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GENMC=${GENMC:-genmc}
TIMEOUT=${MODELCHECK_TIMEOUT:-1800}
jobs=2
quick=0
logdir=$root/build/modelcheck

# The options and the variants a harness lists.
harness_flags() {
	sed -n 's/^ \* modelcheck:\(.*\)$/\1/p' "$here/$1.c" | head -1 |
		sed 's/wake-mutants=[0-9,]*//; s/variants=[0-9,]*//;
		     s/mutant-models=[a-z0-9,]*//; s/mutants=[0-9,]*//;
		     s/variant-unroll=[0-9:,]*//; s/wake-unroll=[0-9]*//;
		     s/full-only=[0-9a-z:,]*//'
}
# Is the verify run of harness $1, variant $2, under model $3 for the full
# check only ("full-only=V" or "full-only=V:model")?
harness_full_only() {
	local m
	m=$(sed -n 's/^ \* modelcheck:.*full-only=\([0-9a-z:,]*\).*$/\1/p' "$here/$1.c" | head -1)
	[ -n "$m" ] && echo ",$m," | grep -qE ",$2(:$3)?,"
}
# The -unroll a harness's "variant-unroll=7:3,8:4" gives variant $2, if any.
variant_unroll() {
	sed -n 's/^ \* modelcheck:.*variant-unroll=\([0-9:,]*\).*$/\1/p' \
		"$here/$1.c" | head -1 | tr , '\n' | sed -n "s/^$2:\([0-9]*\)$/\1/p"
}
harness_variants() {
	local v
	v=$(sed -n 's/^ \* modelcheck:.*variants=\([0-9,]*\).*$/\1/p' "$here/$1.c" | head -1)
	echo "${v:-0}" | tr , ' '
}
# Does the harness's mutation run on variant $2 (under model $3, if given)?
harness_mutates() {
	local m
	m=$(sed -n 's/^ \* modelcheck:.*[ ]mutants=\([0-9,]*\).*$/\1/p' "$here/$1.c" | head -1)
	[ -z "$m" ] || echo ",$m," | grep -q ",$2," || return 1
	[ -z "${3:-}" ] && return 0
	m=$(sed -n 's/^ \* modelcheck:.*mutant-models=\([a-z0-9,]*\).*$/\1/p' "$here/$1.c" | head -1)
	[ -z "$m" ] || echo ",$m," | grep -q ",$3,"
}

# Does the harness's wake mutation run on variant $2?
harness_wake_mutates() {
	local m
	m=$(sed -n 's/^ \* modelcheck:.*[ ]wake-mutants=\([0-9,]*\).*$/\1/p' "$here/$1.c" | head -1)
	[ -n "$m" ] && echo ",$m," | grep -q ",$2,"
}

# One run: harness[:variant], model, kind (verify|mutant|wake-mutant) ->
# one result line.
run_one() {
	local h=${1%%:*} v=${1#*:} model=$2 kind=$3 flags defs log rc t0 t1 u w
	local src="$here/${1%%:*}.c"
	flags=$(harness_flags "$h")
	u=$(variant_unroll "$h" "$v")
	if [ "$kind" = wake-mutant ]; then
		w=$(sed -n 's/^ \* modelcheck:.*wake-unroll=\([0-9]*\).*$/\1/p' \
			"$src" | head -1)
		[ -n "$w" ] && u=$w
	fi
	[ -n "$u" ] && flags=$(echo "$flags" | sed "s/-unroll=[0-9]*/-unroll=$u/")
	defs="-DMODEL_VARIANT=$v"
	[ "$kind" = mutant ] && defs="$defs -DQLOCK_MUTATE_$(echo "$h" | tr a-z A-Z)"
	[ "$kind" = wake-mutant ] && defs="$defs -DQC_MODEL_LOST_WAKE_CHECK \
		-DQLOCK_MUTATE_WAKE_$(echo "$h" | tr a-z A-Z)"
	log="$logdir/$h-v$v-$model-$kind.log"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	timeout "$TIMEOUT" "$GENMC" "--$model" -disable-mm-detector \
		--disable-estimation $flags -- -I "$root/src" -I "$root/include" \
		-I "$here" $defs "$src" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	local execs blocked
	execs=$(sed -n 's/^Number of complete executions explored: \([0-9]*\).*/\1/p' "$log" | tail -1)
	blocked=$(sed -n 's/^Number of blocked executions seen: \([0-9]*\).*/\1/p' "$log" | tail -1)
	printf '%s %s %s %s %s %s %.1f\n' "$1" "$model" "$kind" "$rc" \
		"${execs:-0}" "${blocked:-0}" "$(awk "BEGIN { print $t1 - $t0 }")" >"$log.result"
}

if [ "${1:-}" = --one ]; then
	logdir=$MODELCHECK_LOGDIR
	run_one "$2" "$3" "$4"
	exit 0
fi

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	-j) jobs=$2; shift 2 ;;
	-o) logdir=$2; shift 2 ;;
	-*) echo "usage: $0 [--quick] [-j JOBS] [-o LOGDIR] [harness ...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
if ! command -v "$GENMC" >/dev/null 2>&1; then
	echo "modelcheck: $GENMC not found (GenMC v0.10.3: docs/testing.md, \"Model checking\")" >&2
	exit 2
fi
if [ $# -gt 0 ]; then
	harnesses="$*"
else
	harnesses=$(cd "$here" && ls -- *.c | sed 's/\.c$//')
fi
mkdir -p "$logdir"
rm -f "$logdir"/*.result

runs=
skipped=
for h in $harnesses; do
	if harness_flags "$h" | grep -q '^ *skip'; then
		skipped="$skipped $h"
		continue
	fi
	for v in $(harness_variants "$h"); do
		runs="$runs $h:$v"
	done
done

# Does --quick leave out run $3 of harness:variant $1 under model $2?
quick_leaves_out() {
	case $3 in
	wake-mutant) [ "$2" = imm ] ;;
	verify) harness_full_only "${1%%:*}" "${1#*:}" "$2" ;;
	*) return 1 ;;
	esac
}

start=$(date +%s)
for h in $runs; do
	for model in rc11 imm; do
		[ $quick = 1 ] && harness_full_only "${h%%:*}" "${h#*:}" "$model" ||
			echo "$h $model verify"
		harness_mutates "${h%%:*}" "${h#*:}" "$model" && echo "$h $model mutant"
		harness_wake_mutates "${h%%:*}" "${h#*:}" &&
			{ [ $quick = 0 ] || [ $model = rc11 ]; } &&
			echo "$h $model wake-mutant"
	done
done | MODELCHECK_LOGDIR=$logdir xargs -P "$jobs" -L 1 "$0" --one
end=$(date +%s)

status=0
printf '%-14s %-5s %-11s %-22s %10s %8s %8s\n' harness model run result executions blocked seconds
for h in $runs; do
	for kind in verify mutant wake-mutant; do
		[ $kind = mutant ] && ! harness_mutates "${h%%:*}" "${h#*:}" && continue
		[ $kind = wake-mutant ] &&
			! harness_wake_mutates "${h%%:*}" "${h#*:}" && continue
		for model in rc11 imm; do
			[ $kind = mutant ] &&
				! harness_mutates "${h%%:*}" "${h#*:}" "$model" && continue
			f="$logdir/${h%%:*}-v${h#*:}-$model-$kind.log.result"
			if [ $quick = 1 ] && quick_leaves_out "$h" "$model" "$kind"; then
				run=harness
				[ "$kind" != verify ] && run=$kind
				printf '%-14s %-5s %-11s %-22s\n' "$h" "$model" "$run" "full check only"
				continue
			fi
			if [ ! -f "$f" ]; then
				printf '%-14s %-5s %-11s %-22s\n' "$h" "$model" "$kind" "not run"
				status=1
				continue
			fi
			read -r _ _ _ rc execs blocked secs <"$f"
			case $kind:$rc in
			verify:0) result=verified ;;
			verify:42) result="ERROR"; status=1 ;;
			*mutant:42) result="error (caught)" ;;
			*mutant:0) result="MISSED (no error)"; status=1 ;;
			*:124) result="tool error (timeout)"; status=1 ;;
			*) result="tool error (rc $rc)"; status=1 ;;
			esac
			run=harness
			[ "$kind" != verify ] && run=$kind
			printf '%-14s %-5s %-11s %-22s %10s %8s %8s\n' "$h" "$model" \
				"$run" "$result" "$execs" "$blocked" "$secs"
		done
	done
done
for h in $skipped; do
	printf '%-14s %-5s %-11s not checked:%s\n' "$h" - - \
		"$(harness_flags "$h" | sed 's/^ *skip//')"
done
set=full; [ $quick = 1 ] && set=quick
echo "modelcheck ($set): $((end - start)) s wall, -j $jobs, logs in $logdir"
exit $status
