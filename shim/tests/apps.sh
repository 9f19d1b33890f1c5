#!/bin/bash
# SPDX-License-Identifier: MIT
# Real multi-threaded programs from Debian packages, run without and with
# the shim preloaded; their outputs (checksums) must be identical.
#   apps.sh SHIM [WORKDIR]
# Installs the packages with apt-get when they are missing and we are
# root; exits 77 (CTest: skipped) with a message when none can be had.
set -u
shim=$(readlink -f "$1")
work=${2:-$(mktemp -d)}
mkdir -p "$work"
trap 'kill $mc_pid 2>/dev/null; rm -rf "$work"' EXIT
mc_pid=

need=()
for p in pigz:pigz xz:xz-utils zstd:zstd sqlite3:sqlite3 memcached:memcached \
         memccp:libmemcached-tools; do
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
  a=$(cd "$work" && bash -c "$cmd" 2>&1); ra=$?
  b=$(cd "$work" && LD_PRELOAD="$shim" bash -c "$cmd" 2>&1); rb=$?
  if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ "$a" = "$b" ]; then
    echo "ok   $name: $(echo "$a" | head -c 80 | tr '\n' ' ')"; pass=$((pass+1))
  else
    echo "FAIL $name (exit $ra/$rb)"; echo "--- plain"; echo "$a" | head -20
    echo "--- preloaded"; echo "$b" | head -20; fail=$((fail+1))
  fi
}
have() { command -v "$1" >/dev/null || { echo "skip $2: $1 not installed"; skip=$((skip+1)); return 1; }; }

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

echo "apps: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $pass -gt 0 ] || { echo "no application could be run"; exit 77; }
exit 0
