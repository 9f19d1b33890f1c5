#!/bin/bash
# SPDX-License-Identifier: MIT
# Real multi-threaded programs from Debian packages, run without and with
# the shim preloaded; their outputs (checksums, counts) must be identical.
# The smoke version of `make bench-apps` (docs/bench-apps.md): each of its
# programs once, small, no timing.
#   apps.sh SHIM [SQLITE_THREADS [PY_THREADS]]
# SQLITE_THREADS: bench/apps' sqlite_threads binary (skipped when empty);
# PY_THREADS: bench/apps/py_threads.py.  Every command has a time-out, so a
# hang fails the test.  Installs the packages with apt-get when they are
# missing and we are root; skips each program still missing with one line;
# exits 77 (CTest: skipped) when none can be run.
set -u
shim=$(readlink -f "$1")
sqlite_threads=${2:-}
py_threads=${3:-$(dirname "$(readlink -f "$0")")/../../bench/apps/py_threads.py}
work=$(mktemp -d "${TMPDIR:-/tmp}/qlock-apps.XXXXXX")
trap 'kill $mc_pid 2>/dev/null; rm -rf "$work"' EXIT
mc_pid=

need=()
for p in pigz:pigz xz:xz-utils zstd:zstd sqlite3:sqlite3 memcached:memcached \
         memccp:libmemcached-tools db_bench:rocksdb-tools \
         kccachetest:kyotocabinet-utils sysbench:sysbench; do
  command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing: ${need[*]}"
  (apt-get install -y -qq --no-install-recommends "${need[@]}" ||
   { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}"; }) \
    > "$work/apt.log" 2>&1 ||
    echo "apps: could not install ${need[*]} ($(tail -n 1 "$work/apt.log")); skipping what is missing"
elif [ ${#need[@]} -gt 0 ]; then
  echo "apps: not root or no apt-get, so not installing ${need[*]}; skipping what is missing"
fi

pass=0 fail=0 skip=0
check() { # name, then the command (a shell string) printing what to compare
  local name=$1 cmd=$2 a b
  a=$(cd "$work" && timeout -k 5 120 bash -c "$cmd" 2>&1); ra=$?
  b=$(cd "$work" && LD_PRELOAD="$shim" timeout -k 5 120 bash -c "$cmd" 2>&1); rb=$?
  [ $ra -eq 124 ] || [ $rb -eq 124 ] && echo "$name: timed out after 120 s (exit $ra/$rb)"
  if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ "$a" = "$b" ]; then
    echo "ok   $name: $(echo "$a" | head -c 80 | tr '\n' ' ')"; pass=$((pass+1))
  else
    echo "FAIL $name (exit $ra/$rb)"; echo "--- plain"; echo "$a" | head -20
    echo "--- preloaded"; echo "$b" | head -20; fail=$((fail+1))
  fi
}
have() { command -v "$1" >/dev/null || { echo "skip $2: $1 not installed (package ${3:-$2})"; skip=$((skip+1)); return 1; }; }

# A deterministic, compressible input (5 MB; in3.txt 15 MB).
awk 'BEGIN { srand(7); for (i = 0; i < 150000; i++)
  printf "%08d,%s,%d,%d\n", i, (rand() < 0.5 ? "alpha beta gamma" : "delta epsilon"),
         int(rand() * 100000), int(rand() * 1000) }' > "$work/in.txt"
cat "$work/in.txt" "$work/in.txt" "$work/in.txt" > "$work/in3.txt"

# The preloaded process must really run on the shim.
if ! LD_PRELOAD="$shim" LD_DEBUG=bindings pigz --version 2>&1 | grep -q 'to .*libqlock-pthread.so .*pthread_mutex_lock'; then
  command -v pigz >/dev/null && { echo "FAIL: pigz's pthread_mutex_lock is not bound to the shim"; fail=$((fail+1)); }
fi

have pigz pigz && {
  check "pigz -p 8" "pigz -p 8 -c in3.txt | sha256sum"
  check "pigz -p 8 round trip" "pigz -p 8 -c in3.txt | pigz -d -p 8 | sha256sum"
}
have xz xz && check "xz -T 4" "xz -T 4 -0 --block-size=1MiB -c in3.txt > o.xz; xz -d -T 4 -c o.xz | sha256sum; sha256sum < o.xz"
have zstd zstd && check "zstd -T4" "zstd -q -T4 -3 -c in3.txt | sha256sum; zstd -q -T4 -c in3.txt | zstd -q -d -T4 | sha256sum"
have sqlite3 sqlite3 && check "sqlite3 threads=4" "rm -f t.db; sqlite3 t.db <<'SQL'
PRAGMA threads = 4;
CREATE TABLE t(a INTEGER, b TEXT, c INTEGER, d INTEGER);
.mode csv
.separator ,
.import in.txt t
CREATE INDEX ti ON t(c, d);
SELECT count(*), sum(c), max(d) FROM t;
SELECT a, c FROM t ORDER BY c DESC, d, a LIMIT 3;
SELECT b, count(*), avg(d) FROM t GROUP BY b ORDER BY b;
SQL"

if have memcached memcached && have memccp libmemcached-tools; then
  # memcached with 4 worker threads serves 8 parallel clients.
  mc_check() {
    local port=$((20000 + RANDOM % 20000)) out i
    memcached $([ "$(id -u)" = 0 ] && echo -u root) -t 4 -p $port -U 0 -l 127.0.0.1 -m 128 & mc_pid=$!
    for i in $(seq 50); do memcstat --servers=127.0.0.1:$port >/dev/null 2>&1 && break; sleep 0.1; done
    mkdir -p mc; split -n 64 -d -a 3 in.txt mc/part.
    ls mc/part.* | xargs -P 8 -n 8 memccp --servers=127.0.0.1:$port
    for f in mc/part.*; do memccat --servers=127.0.0.1:$port "$(basename "$f")"; done | sha256sum
    memcslap --servers=127.0.0.1:$port --concurrency=8 --execute-number=500 --test=set >/dev/null 2>&1 || echo "memcslap failed"
    memcstat --servers=127.0.0.1:$port | grep -E 'curr_items' | awk '{print $1, ($2 >= 64 ? "ok" : "few")}'
    kill $mc_pid; wait $mc_pid 2>/dev/null; mc_pid=
    rm -rf mc
  }
  export -f mc_check
  check "memcached -t 4 + 8 clients" "$(declare -f mc_check); mc_check"
fi

# The rest of `make bench-apps`' programs, each once at a small size.
have db_bench "rocksdb db_bench" rocksdb-tools &&
  check "rocksdb db_bench fillrandom,readrandom 8 threads" \
    "db_bench --benchmarks=fillrandom,readrandom --threads=8 --num=2000 --seed=42 --compression_type=none --db=\$PWD/rdb 2>&1 | grep -o '([0-9]* of [0-9]* found)'"
have cache_bench "rocksdb cache_bench" rocksdb-tools && for bits in 0 6; do
  check "rocksdb cache_bench $((1 << bits)) shard(s)" \
    "cache_bench --threads=8 --num_shard_bits=$bits --ops_per_thread=20000 --cache_size=8388608 --value_bytes=1024 | grep -E '^(Number of threads|Ops per thread|Num shard bits)'"
done
have kccachetest "kyotocabinet kccachetest" kyotocabinet-utils && {
  check "kccachetest order -th 8" "kccachetest order -th 8 10000 | grep -E '^(count|size):|^ok'"
  check "kccachetest wicked -th 8" "kccachetest wicked -th 8 -it 1 2000 | grep -x ok"
}
# An ASan-instrumented shim (the test-asan build) preloaded into a program
# whose libraries call pthread functions from their constructors can be
# entered before the sanitizer runtime (loaded as the shim's dependency,
# so initialised late) is set up, and crash at the first instrumented
# instruction (sysbench: libgnutls's constructor takes an rwlock).  Such
# a program is skipped in that build only; elsewhere a crash is a failure.
asan_shim=
ldd "$shim" 2>/dev/null | grep -q libasan && asan_shim=1
asan_early() { # PROGRAM ARGS: runs plain, dies at start-up preloaded
  [ -n "$asan_shim" ] || return 1
  timeout 30 "$@" >/dev/null 2>&1 || return 1
  ! LD_PRELOAD="$shim" timeout 30 "$@" >/dev/null 2>&1
}
if have sysbench sysbench && asan_early sysbench --version; then
  echo "skip sysbench: the ASan build's shim is entered from a library constructor before ASan is initialised (sysbench --version crashes preloaded)"
  skip=$((skip+1))
elif command -v sysbench >/dev/null; then {
  check "sysbench mutex 16 threads" "sysbench mutex --threads=16 --time=0 --mutex-num=64 --mutex-locks=2000 --mutex-loops=200 run | grep 'total number of events'"
  check "sysbench threads 16 threads, 2 locks" "sysbench threads --threads=16 --thread-locks=2 --thread-yields=100 --time=0 --events=30 run | grep 'total number of events'"
}; fi
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
if [ -n "$py" ] && [ -f "$py_threads" ]; then
  check "python queue.Queue 4+4 threads" "$py $py_threads queue 5000 | sed -n 1p"
  check "python threading.Lock 8 threads" "$py $py_threads lock 20000 | sed -n 1p"
else
  echo "skip python threads: python3 or py_threads.py not found"; skip=$((skip+1))
fi
if [ -n "$sqlite_threads" ] && [ -x "$sqlite_threads" ]; then
  check "sqlite multi-thread mode, 8 threads" "$sqlite_threads 8 3000 | sed -n 1p"
else
  echo "skip sqlite_threads: not built (libsqlite3-dev not installed when configured)"; skip=$((skip+1))
fi
if have memcached memcached && have memcaslap memcaslap libmemcached-tools; then
  mcs_check() {
    local port=$((20000 + RANDOM % 20000)) i
    memcached $([ "$(id -u)" = 0 ] && echo -u root) -t 4 -p $port -U 0 -l 127.0.0.1 -m 64 & mc_pid=$!
    for i in $(seq 50); do memcstat --servers=127.0.0.1:$port >/dev/null 2>&1 && break; sleep 0.1; done
    memcaslap -s 127.0.0.1:$port -T 2 -c 8 -x 5000 2>&1 | grep -oE 'Ops: [0-9]+'
    kill $mc_pid; wait $mc_pid 2>/dev/null; mc_pid=
  }
  check "memcached -t 4 + memcaslap" "$(declare -f mcs_check); mcs_check"
fi

echo "apps: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $pass -gt 0 ] || { echo "no application could be run"; exit 77; }
exit 0
