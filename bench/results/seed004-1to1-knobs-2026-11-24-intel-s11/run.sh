#!/bin/bash
# (the inline summary printer read a wrong key; summary.txt was made from the JSON afterwards)
# seed 004 1:1 command under env variants, twice each, alternating
cd /work/main
for round in 1 2; do
for v in base SPIN_LIMIT=64 SPIN_LIMIT=4096 POLL_MAX=64 POLL_MAX=8192 OWNER_SPIN_NS=5000 OWNER_SPIN_NS=100000 HANDOFF_NS=1000000; do
  if [ $v = base ]; then e=""; else e="QLOCK_$v"; fi
  env $e build-rel/bench/lockbench -w futex -d 1 -t 8,16 -r 5 --read-pct 50 -b ww-rwlock-rpref ww-rwlock-rpref,tp-rwlock --json > /tmp/s11/s004-$v-$round.json 2>/dev/null
  python3 - "$v" "$round" <<'PY'
import json,sys
d=json.load(open(f"/tmp/s11/s004-{sys.argv[1]}-{sys.argv[2]}.json"))
pts=d['experiments'][0]['points']
out=[]
for p in pts:
    if p.get('lock')=='tp-rwlock':
        r=p['ratio_to_baseline']; out.append(f"{p['threads']}thr {r['med']:.2f}x[{r['min']:.2f}-{r['max']:.2f}]")
print(sys.argv[1], sys.argv[2], ' '.join(out), flush=True)
PY
done; done
