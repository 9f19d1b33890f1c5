#!/bin/bash
# SPDX-License-Identifier: MIT
# Throughput of real programs with and without the shim, same run,
# interleaved repetitions (plain, shim, plain, shim, ...), medians.
#   bench_apps.sh SHIM [REPS]
set -u
shim=$(readlink -f "$1"); reps=${2:-7}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
awk 'BEGIN { srand(7); for (i = 0; i < 600000; i++)
  printf "%08d,%s,%d,%d\n", i, (rand() < 0.5 ? "alpha beta gamma" : "delta epsilon"),
         int(rand() * 100000), int(rand() * 1000) }' > "$work/in.txt"
mb=$(( $(stat -c %s "$work/in.txt") / 1048576 ))
t() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
run() { # label, then a command reading $work/in.txt
  local label=$1; shift
  local p=() q=() i
  for i in $(seq "$reps"); do
    p+=($(t "$@")); q+=($(LD_PRELOAD="$shim" t "$@"))
  done
  local mp mq
  mp=$(printf '%s\n' "${p[@]}" | median); mq=$(printf '%s\n' "${q[@]}" | median)
  printf '%-34s plain %6s ms  shim %6s ms  shim/plain %.3f   (plain: %s | shim: %s)\n' \
    "$label" "$mp" "$mq" "$(echo "$mq / $mp" | bc -l)" "${p[*]}" "${q[*]}"
}
echo "input ${mb} MB, $reps interleaved repetitions, median wall time; $(nproc) CPUs"
cmd() { bash -c "$1"; }
run "pigz -p 8 -6" cmd "pigz -p 8 -6 -c $work/in.txt"
run "pigz -p 32 -1 -b 32" cmd "pigz -p 32 -1 -b 32 -c $work/in.txt"
run "zstd -T8 -1" cmd "zstd -q -T8 -1 -c $work/in.txt"
run "xz -T4 -0 (1 MiB blocks)" cmd "xz -T4 -0 --block-size=1MiB -c $work/in.txt"
