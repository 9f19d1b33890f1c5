#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""map_targets.py's A/A control, on a made-up map of two mutex cells.

Cell A: the drop-in and glibc-again both read 0.90x glibc; cell B: the
drop-in reads 0.90x, glibc-again 1.00x.  The ratio check must MISS both
cells (the verdict is the lock's own), say that glibc-again passes 1 of
the 2 cells, and mark cell A only as missed by glibc-again too.  The
slowest-thread, p99 and max checks pass and carry their A/A line too;
without a glibc-again column no A/A line is printed.  A missed ratio
cell shows the CPUs busy of the lock and of glibc where the map has them
(maps with `cpu_busy`), and nothing of the kind where it has not.  App
cells (family "apps", no cs or gap) are no target's: a map with one, even
a slow one, checks as the same map without it.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "bench", "report", "map_targets.py")


def stat(v):
    return {"med": v, "min": v, "max": v, "n": 3}


def lock(name, ratio):
    return {"lock": name, "kops": stat(1000 * ratio),
            "ratio_to_glibc": stat(ratio), "slowest_share": stat(0.9),
            "wait_p50_ns": stat(30), "wait_p99_ns": stat(100),
            "wait_max_ns": stat(1e6), "reader_rate": None,
            "writer_rate": stat(1e6 * ratio)}


def cell(threads, aa, dropin, control=True, cpu=None):
    locks = [lock("pthread-mutex", 1.0), lock("glibc-again", aa),
             lock("dropin-mutex", dropin), lock("library", dropin)]
    if cpu:
        for l, v in zip(locks, (cpu[0], cpu[0], cpu[1], cpu[1])):
            l["cpu_busy"] = stat(v)
    if not control:
        del locks[1]
    return {"family": "mutex", "threads": threads, "cs_pauses": 1,
            "gap_pauses": 0, "read_pct": 0, "split": False, "locks": locks}


def app_cell(threads, dropin):
    c = cell(threads, 1.0, dropin)
    for k in ("cs_pauses", "gap_pauses", "read_pct", "split"):
        del c[k]
    c.update(family="apps", pattern="holder-yields",
             setup={"mutexes": 2})
    return c


def run(cells):
    machine = {"cpu_model": "test", "online_cpus": 2, "kernel": "-",
               "glibc": "-", "date_utc": "-"}
    dropin = {"schema": "qlock-lockbench-map/1", "dropin": True, "reps": 3,
              "machine": machine, "cells": cells}
    lib = dict(dropin, dropin=False, cells=[])
    with tempfile.TemporaryDirectory() as d:
        pd, pl = os.path.join(d, "dropin.json"), os.path.join(d, "map.json")
        for path, obj in ((pd, dropin), (pl, lib)):
            with open(path, "w") as f:
                json.dump(obj, f)
        r = subprocess.run([sys.executable, TOOL, "--map", pl, "--dropin",
                            pd], capture_output=True, text=True)
    return r, r.stdout.splitlines()


def after(lines, head):
    i = next(n for n, s in enumerate(lines) if s.startswith(head))
    return lines[i], lines[i + 1]


def main():
    r, lines = run([cell(2, 0.90, 0.90), cell(4, 1.00, 0.90)])
    assert r.returncode == 1, (r.returncode, r.stderr)
    head, aa = after(lines, "MISS  dropin-mutex: ratio")
    assert "(0/2 cells)" in head, head
    assert "A/A: glibc-again passes 1/2 cells" in aa, aa
    i = lines.index(head)
    a = next(s for s in lines[i:] if "mutex 2 thr cs 1 gap 0" in s)
    b = next(s for s in lines[i:] if "mutex 4 thr cs 1 gap 0" in s)
    assert a.endswith("(glibc-again misses it too)"), a
    assert "glibc-again" not in b, b
    assert "CPUs busy" not in a, a
    for check in ("PASS  dropin-mutex: slowest", "PASS  dropin-mutex: p99",
                  "PASS  dropin-mutex: max"):
        head, aa = after(lines, check)
        assert "A/A: glibc-again passes 2/2 cells" in aa, (head, aa)

    r, lines = run([cell(2, 1.0, 0.90, control=False)])
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert not any("A/A" in s for s in lines), lines

    r, lines = run([cell(2, 1.0, 0.90, cpu=(1.04, 1.71))])
    a = next(s for s in lines if "mutex 2 thr cs 1 gap 0: 0.90x" in s)
    assert "CPUs busy 1.71 (glibc 1.04)" in a, a

    plain = run([cell(1, 1.0, 1.0), cell(8, 1.0, 1.5)])
    apps = run([cell(1, 1.0, 1.0), cell(8, 1.0, 1.5), app_cell(16, 0.5)])
    assert apps[0].returncode == plain[0].returncode, apps[0].stderr
    assert apps[1] == plain[1], (apps[1], plain[1])
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
