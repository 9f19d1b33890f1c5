#!/usr/bin/env python3
"""Usage: peers-table.py MAP.json REF.json

Per-cell table of an oversubscribed peers map: for each lock ratio to glibc,
slowest share, p99, max wait, CPUs busy; and whether it meets the issue-15
rules for threads >= 4x cores (1.3x or 95 % of ceiling; slowest >= 30 %;
max <= max(glibc, 10 ms); p99 <= max(2x glibc, 1 us)).  Ceilings from a
reference map's glibc 1-thread cells (R1)."""
import json, sys
m = json.load(open(sys.argv[1])); ref = json.load(open(sys.argv[2]))
P = m['machine']['online_cpus']
def k1(c): return (c['family'], c['cs_pauses'], c['gap_pauses'], c['read_pct'], c['split'])
R1 = {}
for c in ref['cells']:
    if c['threads'] == 1:
        R1[k1(c)] = c['locks'][0]['kops']['med']
tally = {}
for c in m['cells']:
    if c['split']: continue
    g = c['locks'][0]
    fam = c['family']
    r1 = R1.get(k1(c)); r1g0 = R1.get((fam, c['cs_pauses'], 0, c['read_pct'], c['split']))
    Pn = min(c['threads'], P)
    if fam == 'mutex':
        ceil = min(Pn * r1, r1g0)
    else:
        w = (100 - c['read_pct']) / 100
        ceil = min(Pn * r1, r1g0 / (w + (1 - w) / Pn))
    cg = ceil / g['kops']['med']
    # rule: where glibc is within 1.3x of the ceiling (cg <= 1.3) -> 0.95*cg; else 1.3
    need = 0.95 * cg if cg <= 1.3 else 1.3
    hdr = f"{fam} {c['threads']:2d} thr cs {c['cs_pauses']:3d} gap {c['gap_pauses']:4d}" + (f" r{c['read_pct']}" if fam == 'rwlock' else '')
    print(f"{hdr}: needs {need:.2f}x (ceiling {cg:.2f}x glibc); glibc cpu {g['cpu_busy']['med']:.2f} slow {g['slowest_share']['med']*100:.0f}% max {g['wait_max_ns']['max']/1e3:.0f}us")
    for l in c['locks'][1:]:
        r = l['ratio_to_glibc']['med']; s = l['slowest_share']['med']
        mx = l['wait_max_ns']['max']; p99 = l['wait_p99_ns']['med']
        ok_r = r >= need; ok_s = s >= 0.30
        ok_m = mx <= max(g['wait_max_ns']['max'], 10e6)
        ok_p = p99 <= max(2 * g['wait_p99_ns']['med'], 1000)
        t = tally.setdefault((fam, l['lock']), [0, 0, 0, 0, 0, 0])
        t[0] += 1; t[1] += ok_r; t[2] += ok_s; t[3] += ok_m; t[4] += ok_p; t[5] += ok_r and ok_s and ok_m and ok_p
        print(f"    {l['lock']:18s} {r:5.2f}x{'+' if ok_r else '-'} slow {s*100:3.0f}%{'+' if ok_s else '-'} p99 {p99:8.0f}{'+' if ok_p else '-'} max {mx/1e3:7.0f}us{'+' if ok_m else '-'} cpu {l['cpu_busy']['med']:.2f}")
print("\nper lock, cells meeting: 1.3x/ceiling, slowest>=30%, max, p99, all four (of n)")
for (fam, lk), t in tally.items():
    print(f"  {fam:6s} {lk:18s} ratio {t[1]:2d}/{t[0]}  slowest {t[2]:2d}/{t[0]}  max {t[3]:2d}/{t[0]}  p99 {t[4]:2d}/{t[0]}  all {t[5]:2d}/{t[0]}")
