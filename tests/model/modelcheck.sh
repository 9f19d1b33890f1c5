#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Model-checks every tests/model harness with GenMC under RC11 and IMM, and
# each harness's mutation (QLOCK_MUTATE_<NAME>), which must be caught, then
# prints the table.  Exit 0 only when every harness is verified under both
# models and every mutation is reported as an error.
#
#   tests/model/modelcheck.sh [-j JOBS] [-o LOGDIR] [harness ...]
#
# A harness states its own GenMC options on a line of its opening comment:
#   " * modelcheck: -unroll=8"
# GENMC (default genmc) names the checker, MODELCHECK_TIMEOUT (default 600)
# bounds one run in seconds.  Logs, with the error traces, go to LOGDIR
# (default build/modelcheck).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GENMC=${GENMC:-genmc}
TIMEOUT=${MODELCHECK_TIMEOUT:-600}
jobs=2
logdir=$root/build/modelcheck

# One run: harness, model, kind (verify|mutant) -> one result line.
run_one() {
	local h=$1 model=$2 kind=$3 src="$here/$1.c" flags defs="" log rc t0 t1
	flags=$(sed -n 's/^ \* modelcheck:\(.*\)$/\1/p' "$src" | head -1)
	[ "$kind" = mutant ] && defs="-DQLOCK_MUTATE_$(echo "$h" | tr a-z A-Z)"
	log="$logdir/$h-$model-$kind.log"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	timeout "$TIMEOUT" "$GENMC" "--$model" -disable-mm-detector -check-liveness \
		--disable-estimation $flags -- -I "$root/src" -I "$root/include" \
		-I "$here" $defs "$src" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	local execs blocked
	execs=$(sed -n 's/^Number of complete executions explored: \([0-9]*\).*/\1/p' "$log" | tail -1)
	blocked=$(sed -n 's/^Number of blocked executions seen: \([0-9]*\).*/\1/p' "$log" | tail -1)
	printf '%s %s %s %s %s %s %.1f\n' "$h" "$model" "$kind" "$rc" \
		"${execs:-0}" "${blocked:-0}" "$(awk "BEGIN { print $t1 - $t0 }")" >"$log.result"
}

if [ "${1:-}" = --one ]; then
	logdir=$MODELCHECK_LOGDIR
	run_one "$2" "$3" "$4"
	exit 0
fi

while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-o) logdir=$2; shift 2 ;;
	-*) echo "usage: $0 [-j JOBS] [-o LOGDIR] [harness ...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
if ! command -v "$GENMC" >/dev/null 2>&1; then
	echo "modelcheck: $GENMC not found (install it: bash ../shared/tools/genmc/install.sh)" >&2
	exit 2
fi
if [ $# -gt 0 ]; then
	harnesses="$*"
else
	harnesses=$(cd "$here" && ls -- *.c | sed 's/\.c$//')
fi
mkdir -p "$logdir"
rm -f "$logdir"/*.result

start=$(date +%s)
for h in $harnesses; do
	for model in rc11 imm; do
		for kind in verify mutant; do
			echo "$h $model $kind"
		done
	done
done | MODELCHECK_LOGDIR=$logdir xargs -P "$jobs" -L 1 "$0" --one
end=$(date +%s)

status=0
printf '%-12s %-5s %-16s %-24s %10s %8s %8s\n' harness model run result executions blocked seconds
for h in $harnesses; do
	for kind in verify mutant; do
		for model in rc11 imm; do
			f="$logdir/$h-$model-$kind.log.result"
			if [ ! -f "$f" ]; then
				printf '%-12s %-5s %-16s %-24s\n' "$h" "$model" "$kind" "not run"
				status=1
				continue
			fi
			read -r _ _ _ rc execs blocked secs <"$f"
			case $kind:$rc in
			verify:0) result=verified ;;
			verify:42) result="ERROR"; status=1 ;;
			mutant:42) result="error (caught)" ;;
			mutant:0) result="MISSED (no error)"; status=1 ;;
			*:124) result="tool error (timeout)"; status=1 ;;
			*) result="tool error (rc $rc)"; status=1 ;;
			esac
			run=harness
			[ "$kind" = mutant ] && run="mutant"
			printf '%-12s %-5s %-16s %-24s %10s %8s %8s\n' "$h" "$model" \
				"$run" "$result" "$execs" "$blocked" "$secs"
		done
	done
done
echo "modelcheck: $((end - start)) s wall, -j $jobs, logs in $logdir"
exit $status
