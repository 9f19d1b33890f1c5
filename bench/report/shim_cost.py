#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The drop-in's uncontended cost against the library and glibc.

    shim_cost.py SHIM_COST_EXE LIBQLOCK_PTHREAD_SO [-r N] [--json FILE]

Runs bench/micro/shim_cost N times without and N times with
LD_PRELOAD=libqlock-pthread.so, alternately (A B A B ...), and prints per
pair kind the median ns per lock+unlock pair and its spread: glibc (plain
run, pthread calls), library (plain run, the drop-in's default locks called
directly, as a program linked with libqlock.so does: TP mutex, qrwlock)
and drop-in (preloaded run, pthread calls), with drop-in minus library
(the target, docs/performance.md: at most 1 ns: the median of each
preloaded run's own pthread call minus its own direct library call,
paired in one process) and drop-in over glibc.  Two phases per run: the
process with one thread (glibc's mutex skips its atomics then, and so does
the drop-in's) and with a second, sleeping thread (every multi-threaded
program).  The 1 ns target is judged on the second: with one thread the
drop-in's mutex beats the library it is built on, which says nothing about
the shim's own cost.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# (JSON key, heading): the process with one thread, then with two
PHASES = (("threads1", "process with one thread"),
          ("threads2", "process with a second (sleeping) thread"))
TARGET_PHASE = "threads2"

# (row, pthread call, the library lock the drop-in runs it on by default)
PAIRS = (("mutex", "pthread_mutex", "tp_mutex"),
         ("rwlock read", "pthread_rwlock_rd", "qrwlock_rd"),
         ("rwlock write", "pthread_rwlock_wr", "qrwlock_wr"))


def run(exe, env):
    out = subprocess.run([exe], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("exe")
    ap.add_argument("shim")
    ap.add_argument("-r", type=int, default=7)
    ap.add_argument("--json")
    a = ap.parse_args()
    plain = dict(os.environ)
    plain.pop("LD_PRELOAD", None)
    pre = dict(plain, LD_PRELOAD=os.path.abspath(a.shim))
    runs = {"plain": [], "dropin": []}
    for _ in range(a.r):
        runs["plain"].append(run(a.exe, plain))
        runs["dropin"].append(run(a.exe, pre))

    def stat(side, phase, field):
        v = [r[phase][field] for r in runs[side]]
        return statistics.median(v), min(v), max(v)

    def f(x):
        return f"{x[0]:5.2f} [{x[1]:.2f}-{x[2]:.2f}]"

    rows, worst = [], 0.0
    print(f"ns per uncontended lock+unlock pair, median [min-max] of {a.r} "
          f"alternated runs ({cpu_model()}, {os.cpu_count()} CPUs)")
    for phase, title in PHASES:
        print(f"\n{title}")
        print(f"{'pair':13} {'glibc':>18} {'library':>18} {'drop-in':>18} "
              f"{'drop-in - library':>18} {'drop-in / glibc':>16}")
        for name, pf, qf in PAIRS:
            g = stat("plain", phase, pf)
            l = stat("plain", phase, qf)
            d = stat("dropin", phase, pf)
            # The preloaded run calls the library directly too, in the
            # same process and interleaved rounds: the shim's cost is the
            # median of those paired differences (the host's noise between
            # processes, several ns here, cancels out).
            pd = [r[phase][pf] - r[phase][qf] for r in runs["dropin"]]
            diff = statistics.median(pd)
            if phase == TARGET_PHASE:
                worst = max(worst, diff)
            rows.append({"phase": phase, "pair": name, "glibc_ns": g[0],
                         "library_ns": l[0], "dropin_ns": d[0],
                         "dropin_minus_library_ns": diff,
                         "dropin_minus_library_spread": [min(pd), max(pd)],
                         "dropin_over_glibc": d[0] / g[0],
                         "spread": {"glibc": g[1:], "library": l[1:],
                                    "dropin": d[1:]}})
            print(f"{name:13} {f(g):>18} {f(l):>18} {f(d):>18} "
                  f"{diff:+17.2f} {d[0] / g[0]:15.2f}x")
    print(f"\nshim cost over the library (two threads): at most "
          f"{worst:+.2f} ns "
          f"({'within' if worst <= 1.0 else 'ABOVE'} the 1 ns target)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": {"cpu_model": cpu_model(),
                                   "online_cpus": os.cpu_count(),
                                   "kernel": platform.release(),
                                   "glibc": platform.libc_ver()[1],
                                   "date_utc": time.strftime(
                                       "%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                       "runs": a.r, "rows": rows, "raw": runs}, f, indent=1)
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
