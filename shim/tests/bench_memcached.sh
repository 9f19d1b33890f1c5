#!/bin/bash
# SPDX-License-Identifier: MIT
# Lock-heavier real program: memcached -t 4 under memcslap (16 concurrent
# clients, get test), plain vs shim, interleaved repetitions, medians.
#   bench_memcached.sh SHIM [REPS]
command -v memcached >/dev/null && command -v memcslap >/dev/null || { echo "needs memcached and libmemcached-tools"; exit 77; }
shim=$(readlink -f "$1"); reps=${2:-5}
one() { # preload-or-empty
  local port=$((30000 + RANDOM % 10000))
  env ${1:+LD_PRELOAD=$1} memcached $([ "$(id -u)" = 0 ] && echo -u root) -t 4 -p $port -U 0 -l 127.0.0.1 -m 256 & local pid=$!
  for i in $(seq 50); do memcstat --servers=127.0.0.1:$port >/dev/null 2>&1 && break; sleep 0.05; done
  local s=$(date +%s%N)
  memcslap --servers=127.0.0.1:$port --concurrency=16 --execute-number=4000 --test=get >/dev/null 2>&1
  local e=$(date +%s%N)
  kill $pid; wait $pid 2>/dev/null
  echo $(( (e - s) / 1000000 ))
}
p=(); q=()
for i in $(seq $reps); do p+=($(one)); q+=($(one "$shim")); done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "memcslap get x16 clients x4000: plain median $(med "${p[@]}") ms  shim median $(med "${q[@]}") ms  (plain: ${p[*]} | shim: ${q[*]})"
