#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make bench-apps`: real multi-threaded programs under glibc and under the
pthread drop-in (libqlock-pthread.so through qlock-run), interleaved, with
a glibc A/A control, CPU time per unit of work and the drop-in's lock
profile; a summary table with a verdict per program, and a JSON file that
`lockbench report --apps` shows (docs/bench-apps.md).

  bench_apps.py --qlock-run build/shim/qlock-run [--quick] [--all-algorithms]
                [--tools] [--baseline QLOCK_RUN] [--qlock-run-args ARGS]
                [--reps N] [--hogs N]
                [--budget SECONDS] [--only NAME,...] [--json FILE]
                [--table FILE]

Standard library only.  Every workload is a fixed amount of work (counts,
not durations) on a tmpfs directory or over 127.0.0.1; every run has a
time-out, and servers are killed when the driver exits, however it exits.

The driver's parts, one concern per module beside it: apps_programs.py (the
programs and the columns), apps_run.py (running and measuring),
apps_stats.py (statistics, the lock-bound rule, the verdict) and
apps_table.py (the summary table).
"""
import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from apps_programs import (ALGORITHM_COLUMNS, BASELINE, COLUMNS,
                           TOOL_COLUMNS, programs)
from apps_run import bench_program, cleanup, live, log
from apps_stats import (AA_TARGET, CPU_CEILING, FLOOR, LB_CONTENDED_PER_S,
                        LB_CONTENDED_SHARE, LOCK_BOUND_GAIN)
from apps_table import fmt_spread, table

SCHEMA = "qlock-bench-apps/1"


# ---- the machine -------------------------------------------------------------


def machine():
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = None
    return {"cpu_model": model, "online_cpus": os.cpu_count(),
            "nproc": len(os.sched_getaffinity(0)),
            "kernel": platform.release(), "glibc": glibc,
            "python": platform.python_version(),
            "loadavg_start": os.getloadavg()[0],
            "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}


# ---- the suite ---------------------------------------------------------------


def find_tool(name, build_dirs):
    for d in build_dirs:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return None


def install_missing(pkgs):
    """apt-get as root, best effort, like scripts/install-deps.sh."""
    if not pkgs:
        return
    if os.getuid() != 0 or not shutil.which("apt-get"):
        log("bench-apps: not root or no apt-get; not installing %s"
            % " ".join(sorted(pkgs)))
        return
    log("bench-apps: installing %s" % " ".join(sorted(pkgs)))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"]
    try:
        r = subprocess.run(cmd + sorted(pkgs), env=env, timeout=600,
                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        if r.returncode:
            subprocess.run(["apt-get", "update", "-qq"], env=env, timeout=300,
                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
            for p in sorted(pkgs):     # one at a time: a missing one is alone
                subprocess.run(cmd + [p], env=env, timeout=600,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.STDOUT)
    except (OSError, subprocess.SubprocessError) as err:
        log("bench-apps: apt-get failed: %s" % err)


# ---- main --------------------------------------------------------------------


def main(argv):
    ap = argparse.ArgumentParser(
        prog="bench-apps", description="Application benchmark: glibc vs "
        "the qlock pthread drop-in (docs/bench-apps.md).")
    ap.add_argument("--qlock-run", required=True, metavar="PATH")
    ap.add_argument("--build-dir", default=None, metavar="DIR",
                    help="where bench/apps/sqlite_threads was built "
                    "(default: beside qlock-run's build tree)")
    ap.add_argument("--quick", action="store_true",
                    help="small workloads, 2 rounds: for development")
    ap.add_argument("--all-algorithms", action="store_true",
                    help="also a column per --mutex/--rwlock choice")
    ap.add_argument("--tools", action="store_true",
                    help="also a column per diagnostic (qlock-run --profile, "
                    "--lockdep): its cost against the plain drop-in")
    ap.add_argument("--baseline", default=None, metavar="QLOCK_RUN",
                    help="one more column: another build's qlock-run "
                    "(its drop-in), compared with this build's per round")
    ap.add_argument("--qlock-run-args", default="", metavar="ARGS",
                    help="more qlock-run options for every drop-in column "
                    "(one string, split at spaces; e.g. '--profile=FILE')")
    ap.add_argument("--reps", type=int, default=None,
                    help="rounds per program at most (default 21; --quick 2)")
    ap.add_argument("--min-reps", type=int, default=None,
                    help="rounds run even past the budget (default 5; "
                    "--quick 1)")
    ap.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                    help="time for all programs' rounds (default 780; "
                    "--quick 150); shared out evenly")
    ap.add_argument("--hogs", type=int, default=0, metavar="N",
                    help="N processes that only spin, at the same "
                    "priority, run beside every program (a machine that "
                    "also runs other programs; default 0)")
    ap.add_argument("--only", default=None, metavar="NAME,...",
                    help="programs whose name contains one of these")
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--json", default=None, metavar="FILE")
    ap.add_argument("--table", default=None, metavar="FILE")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    qr = os.path.abspath(args.qlock_run)
    if not os.access(qr, os.X_OK):
        log("bench-apps: %s: not found (build first: make build)" % qr)
        return 2
    bdir = args.build_dir or os.path.dirname(os.path.dirname(qr))
    tools = {"sqlite_threads": find_tool("sqlite_threads",
                                         [os.path.join(bdir, "bench/apps"),
                                          bdir])}
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
        else sys.executable
    size = "quick" if args.quick else "default"
    reps = args.reps or (2 if args.quick else 21)
    min_reps = min(reps, args.min_reps or (1 if args.quick else 5))
    budget = args.budget or (150.0 if args.quick else 780.0)
    cols = COLUMNS + (TOOL_COLUMNS if args.tools else []) + \
        (ALGORITHM_COLUMNS if args.all_algorithms else [])
    base_run = None
    if args.baseline:
        base_run = os.path.abspath(args.baseline)  # run; shown as given
        if not os.access(base_run, os.X_OK):
            log("bench-apps: --baseline %s: not an executable qlock-run"
                % args.baseline)
            return 2
        cols = cols + [(BASELINE, {"run": base_run})]

    progs, mb = programs(size, py, tools)
    if args.only:
        keys = args.only.split(",")
        progs = [p for p in progs if any(k in p.name for k in keys)]
    need = {pkg for p in progs for b, pkg in p.needs
            if not shutil.which(b) and not pkg.startswith("libsqlite3")}
    if need and not args.no_install:
        install_missing(need)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, lambda *a: (cleanup(), sys.exit(130)))
    base = "/dev/shm" if os.path.isdir("/dev/shm") and \
        os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="qlock-bench-apps.", dir=base)
    ncpu = len(os.sched_getaffinity(0))
    ctx = {"dir": work, "qlock_run": qr, "sqlite": tools["sqlite_threads"], "input": os.path.join(work,
                                                               "input.txt"),
           "input_mb": mb, "ncpu": ncpu, "first_timeout": 300.0,
           "extra_args": args.qlock_run_args.split(),
           "max_timeout": 60.0 if args.quick else 120.0}
    doc = {"schema": SCHEMA, "machine": machine(), "mode": size,
           "all_algorithms": args.all_algorithms, "tools": args.tools,
           "qlock_run_args": args.qlock_run_args,
           "baseline": args.baseline, "hogs": args.hogs,
           "command": "bench_apps.py " + " ".join(argv),
           "workdir_fs": "tmpfs" if base else "disk",
           "columns": [c for c, _ in cols], "reps": reps,
           "min_reps": min_reps, "budget_s": budget,
           "rule": {"floor": FLOOR, "cpu_ceiling": CPU_CEILING,
                    "lock_bound_gain": LOCK_BOUND_GAIN,
                    "lock_bound": {"contended_per_s": LB_CONTENDED_PER_S,
                                   "contended_share": LB_CONTENDED_SHARE},
                    "aa_target": AA_TARGET, "band": "p25..p75"},
           "programs": []}
    t0 = time.monotonic()
    try:
        # Busy processes at our priority, killed with the servers.
        for _ in range(max(args.hogs, 0)):
            live.append(subprocess.Popen(
                [py, "-c", "while True: pass"], stdin=subprocess.DEVNULL,
                start_new_session=True))
        runnable = []
        for p in progs:
            miss = [(b, pkg) for b, pkg in p.needs if not shutil.which(b)]
            if miss:
                log("skip %s: %s not installed (package %s)"
                    % (p.name, miss[0][0], miss[0][1]))
                doc["programs"].append({"name": p.name, "skipped":
                                        "%s not installed (package %s)"
                                        % miss[0]})
            else:
                runnable.append(p)
        for i, p in enumerate(runnable):
            left = budget - (time.monotonic() - t0)
            allot = max(left, 0) / (len(runnable) - i)
            log("bench-apps: %s (%d/%d, %.0f s allotted)" % (
                p.name, i + 1, len(runnable), allot))
            try:
                e = bench_program(p, ctx, cols, reps, min_reps, allot,
                                  args.verbose)
            except (OSError, subprocess.SubprocessError) as err:
                log("skip %s: %s" % (p.name, err))
                e = {"name": p.name, "skipped": str(err)}
            doc["programs"].append(e)
            if not e.get("skipped"):
                q = e["columns"]["qlock"]
                log("  %s: qlock/glibc %s, A/A %s, %d rounds, %.0f s" % (
                    p.name, fmt_spread(q["ratio"]),
                    fmt_spread(e["aa_band"]), e["rounds"], e["seconds"]))
    finally:
        cleanup()
        shutil.rmtree(work, ignore_errors=True)
    doc["machine"]["loadavg_end"] = os.getloadavg()[0]
    doc["seconds"] = time.monotonic() - t0
    order = [e["name"] for e in doc["programs"]]
    doc["programs"].sort(key=lambda e: [p.name for p in progs].index(e["name"])
                         if e["name"] in order else 0)
    txt = table(doc)
    sys.stdout.write(txt)
    if args.json:
        with open(args.json + ".part", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(args.json + ".part", args.json)
        log("bench-apps: %s" % args.json)
    if args.table:
        with open(args.table, "w") as f:
            f.write(txt)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
