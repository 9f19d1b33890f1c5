#!/usr/bin/env python3
"""Usage: map-peers-oversub-table-intel-xeon-2026-11-24.py MAP.json REF.json

Per-cell table of an oversubscribed peers map (no 1-thread cells): for each
lock its ratio to glibc, slowest share, p99, max wait and CPUs busy, and
whether it meets bench/report/map_targets.py's rules for threads >= 4x
cores (1.3x, or 95 % of the ceiling where glibc is within 1.3x of it;
slowest >= 30 %; p99 <= max(2x glibc's, 1 us); max <= max(glibc's, 10 ms)).
The rules and the ceilings are map_targets.py's own; the ceilings take
glibc's 1-thread cells from REF.json (a full library map of the same host).
Split cells are left out of every column."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "report"))
import map_targets as t  # noqa: E402

m = json.load(open(sys.argv[1]))
ref = json.load(open(sys.argv[2]))
ones = [c for c in ref["cells"] if c["threads"] == 1]
ceil = {}
for base in ("pthread-mutex", "pthread-rwlock"):
    ceil.update(t.ceilings({"machine": m["machine"],
                            "cells": ones + m["cells"]}, base)[0])
tally = {}
for c in m["cells"]:
    if c["split"]:
        continue
    g = c["locks"][0]
    fam = c["family"]
    cg = ceil[t.key(c)] / t.med(g, "kops")
    need = min(t.SPEEDUP, t.NOISE * cg) if cg < t.SPEEDUP else t.SPEEDUP
    hdr = (f"{fam} {c['threads']:2d} thr cs {c['cs_pauses']:3d} "
           f"gap {c['gap_pauses']:4d}"
           + (f" r{c['read_pct']}" if fam == "rwlock" else ""))
    gmax = g["wait_max_ns"]["max"]
    print(f"{hdr}: needs {need:.2f}x (ceiling {cg:.2f}x glibc); glibc cpu "
          f"{t.med(g, 'cpu_busy'):.2f} slow "
          f"{t.med(g, 'slowest_share') * 100:.0f}% max {gmax / 1e3:.0f}us")
    for lk in c["locks"][1:]:
        r, s = t.med(lk, "ratio_to_glibc"), t.med(lk, "slowest_share")
        mx, p99 = lk["wait_max_ns"]["max"], t.med(lk, "wait_p99_ns")
        ok = (r >= need - 1e-9, s >= t.SLOWEST, mx <= max(gmax, 10e6),
              p99 <= max(2 * t.med(g, "wait_p99_ns"), t.P99_FLOOR_NS))
        n = tally.setdefault((fam, lk["lock"]), [0] * 6)
        n[0] += 1
        for i, v in enumerate(ok + (all(ok),)):
            n[1 + i] += v
        mark = ["+" if v else "-" for v in ok]
        print(f"    {lk['lock']:18s} {r:5.2f}x{mark[0]} slow {s * 100:3.0f}%"
              f"{mark[1]} p99 {p99:8.0f}{mark[3]} max {mx / 1e3:7.0f}us"
              f"{mark[2]} cpu {t.med(lk, 'cpu_busy'):.2f}")
print("\nper lock, cells meeting: 1.3x/ceiling, slowest>=30%, max, p99, "
      "all four (of n)")
for (fam, name), n in tally.items():
    print(f"  {fam:6s} {name:18s} ratio {n[1]:2d}/{n[0]}  slowest "
          f"{n[2]:2d}/{n[0]}  max {n[3]:2d}/{n[0]}  p99 {n[4]:2d}/{n[0]}  "
          f"all {n[5]:2d}/{n[0]}")
