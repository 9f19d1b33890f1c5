#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a tiny `lockbench map` and checks its JSON document: it is valid
against bench/map/lockbench-map.schema.json, the machine is recorded, every
cell of the requested grid is there, each lock has its figures and the
baseline's ratio to itself is 1; app cells (--family apps) run glibc and
the TP mutex (or the drop-in's columns) and no lock without a condition
variable.
usage: map_check.py LOCKBENCH OUT.json CELLS [map options...]"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "core"))  # validate_json
import validate_json  # noqa: E402

# Mutexes without a condition variable of their own: never in an app cell.
NO_COND = {"qspinlock", "ck-mcs", "absl-mutex", "tbb-spin-mutex",
           "tbb-queuing-mutex", "pthread-spinlock", "ticket", "ttas",
           "ww-mutex"}


def fail(msg):
    print("map_check: FAIL: " + msg)
    sys.exit(1)


def main():
    lockbench, out, cells = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cmd = [lockbench, "map", "--json", out] + sys.argv[4:]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        fail("%s exited %d: %s" % (cmd, run.returncode, run.stderr))
    if "summary (" not in run.stdout:
        fail("no summary in the heat table")
    with open(out) as f:
        doc = json.load(f)
    with open(os.path.join(HERE, "lockbench-map.schema.json")) as f:
        schema = json.load(f)
    try:
        validate_json.validate(schema, doc)
    except validate_json.Invalid as e:
        fail("not valid against lockbench-map.schema.json: %s" % e)
    for k in ("cpu_model", "online_cpus", "kernel", "glibc", "date_utc"):
        if k not in doc["machine"]:
            fail("machine lacks " + k)
    args = sys.argv[4:]
    hogs = int(args[args.index("--hogs") + 1]) if "--hogs" in args else 0
    if doc.get("hogs", 0) != hogs:
        fail("hogs %s, expected %d" % (doc.get("hogs"), hogs))
    if doc["wait_timestamp"]["cost_ns"] <= 0:
        fail("no timestamp cost")
    if len(doc["cells"]) != cells:
        fail("%d cells, expected %d" % (len(doc["cells"]), cells))
    # On a loaded machine a tiny run may see no operation at all (threads
    # not scheduled before the stop flag): then only kops (0) is required.
    for c in doc["cells"]:
        base = c["locks"][0]
        if c["family"] == "apps":
            names = [lk["lock"] for lk in c["locks"]]
            if set(names) & NO_COND or "glibc-again" not in names \
                    or len(names) < 3:
                fail("app cell %s %d thr runs %s" % (c["pattern"],
                                                     c["threads"], names))
        if base["kops"]["med"] > 0 and \
                abs(base["ratio_to_glibc"]["med"] - 1) > 1e-9:
            fail("baseline ratio %s" % base["ratio_to_glibc"])
        for lk in c["locks"]:
            if not lk["kops"] or lk["kops"]["n"] < 1:
                fail("%s: no kops in %s" % (lk["lock"], c))
            if lk["kops"]["med"] == 0:
                continue
            for k in ("slowest_share", "wait_p50_ns", "wait_p99_ns",
                      "wait_max_ns"):
                if not lk[k] or lk[k]["n"] < 1:
                    fail("%s: %s missing in %s" % (lk["lock"], k, c))
            if lk["wait_p50_ns"]["med"] > lk["wait_max_ns"]["max"]:
                fail("%s: p50 above max" % lk["lock"])
            # CPU-seconds per second of the run: above 0 (the threads ran)
            # and at most the online CPUs (clock granularity aside).
            cpu = lk.get("cpu_busy")
            if not cpu or cpu["n"] < 1:
                fail("%s: cpu_busy missing in %s" % (lk["lock"], c))
            if not 0 < cpu["med"] <= 1.1 * doc["machine"]["online_cpus"]:
                fail("%s: cpu_busy %s" % (lk["lock"], cpu))
            if not lk.get("ops_per_cpu_s") or (
                    base["kops"]["med"] > 0 and
                    not lk.get("ops_per_cpu_s_ratio_to_glibc")):
                fail("%s: no ops per CPU-second in %s" % (lk["lock"], c))
    print("map_check: ok, %d cells" % cells)


main()
