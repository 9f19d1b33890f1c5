#!/bin/bash
# Seed 004's 1:1 command under each tunable setting, two rounds,
# alternating settings; run from the top of the source tree, with a
# Release build in build-rel/; writes s004-SETTING-ROUND.json into OUT (default: this
# directory) and prints one line per run, the figures of summary.txt.
set -e
out=${OUT:-$(dirname "$0")}
for round in 1 2; do
for v in base SPIN_LIMIT=64 SPIN_LIMIT=4096 POLL_MAX=64 POLL_MAX=8192 OWNER_SPIN_NS=5000 OWNER_SPIN_NS=100000 HANDOFF_NS=1000000; do
  if [ $v = base ]; then e=""; else e="QLOCK_$v"; fi
  env $e build-rel/bench/lockbench -w futex -d 1 -t 8,16 -r 5 --read-pct 50 -b ww-rwlock-rpref ww-rwlock-rpref,tp-rwlock --json > "$out/s004-$v-$round.json" 2>/dev/null
  python3 - "$out/s004-$v-$round.json" "$v" "$round" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for p in d['experiments'][0]['points']:
    if p.get('lock') == 'tp-rwlock':
        r = p['ratio_to_baseline']
        out.append(f"{p['threads']}thr {r['median']:.2f}x[{r['min']:.2f}-{r['max']:.2f}]")
print(sys.argv[2], sys.argv[3], ' '.join(out), flush=True)
PY
done; done
