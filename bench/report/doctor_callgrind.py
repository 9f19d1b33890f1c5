#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the lock doctor costs, in instructions: each program under
`qlock-run [OPTION] -- valgrind --tool=callgrind PROGRAM`, its whole-run
instruction count (callgrind's 'Collected'), plain drop-in against
--lockdep and --profile, and the instructions each option adds per lock
call (a lock and its unlock).  Instruction counts do not move with the
machine's load, so they stand where wall times on a busy machine cannot.

  doctor_callgrind.py --qlock-run build/shim/qlock-run [--runs N]
                      [--only NAME,...] [--pairs build/bench/doctor_pairs]
                      [--out FILE] [--keep DIR]

--pairs adds the instructions per lock and unlock pair of doctor_pairs
(bench/micro/doctor_pairs.c), each shape run with 0 and 20000 iterations
a thread, so that what a run costs once (set-up, the first acquisitions,
the report at exit) drops out.

Lock calls are counted in the first plain run: the calls of the drop-in's
lock entry points (pthread_mutex_lock, the rwlock's rdlock and wrlock,
the spinlock's, their try, timed and clock forms) and of the condition
variable's waits (each re-takes its mutex).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = [
    ("kc-wicked", ["kccachetest", "wicked", "-th", "8", "-it", "1", "20000"]),
    ("kc-order", ["kccachetest", "order", "-th", "8", "10000"]),
    ("cache1", ["cache_bench", "--threads=8", "--num_shard_bits=0", "--ops_per_thread=10000",
                "--cache_size=8388608", "--value_bytes=1024"]),
    ("cache64", ["cache_bench", "--threads=8", "--num_shard_bits=6", "--ops_per_thread=10000",
                 "--cache_size=8388608", "--value_bytes=1024"]),
    ("sysbench-mutex", ["sysbench", "mutex", "--threads=16", "--time=0", "--mutex-num=64",
                        "--mutex-locks=2000", "--mutex-loops=2000", "run"]),
]

LOCK_CALLS = {
    "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock",
    "pthread_mutex_clocklock", "pthread_rwlock_rdlock", "pthread_rwlock_tryrdlock",
    "pthread_rwlock_timedrdlock", "pthread_rwlock_clockrdlock", "pthread_rwlock_wrlock",
    "pthread_rwlock_trywrlock", "pthread_rwlock_timedwrlock", "pthread_rwlock_clockwrlock",
    "pthread_spin_lock", "pthread_spin_trylock", "pthread_cond_wait",
    "pthread_cond_timedwait", "pthread_cond_clockwait",
}


def lock_calls(path):
    """Calls of the lock entry points in one callgrind output file (its
    parts, one per thread when --separate-threads, summed)."""
    names, total = {}, 0
    target = None
    for line in open(path, errors="replace"):
        if line.startswith("cfn="):
            m = re.match(r"cfn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                target = names.get(m.group(1))
            continue
        if line.startswith("calls=") and target is not None:
            if target in LOCK_CALLS:
                total += int(line.split("=", 1)[1].split()[0])
            target = None
        elif line.startswith("fn="):
            m = re.match(r"fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if m and m.group(2):
                names[m.group(1)] = m.group(2)
    return total


def run(qrun, opt, argv, outdir, tag):
    out = os.path.join(outdir, tag + ".cg")
    cmd = [qrun] + ([opt] if opt else []) + ["--", "valgrind", "--tool=callgrind",
                                              "--callgrind-out-file=" + out] + argv
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       cwd=outdir)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        sys.exit("no instruction count from: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    return int(m.group(1)), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qlock-run", required=True)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--keep", default="")
    ap.add_argument("--pairs", default="")
    a = ap.parse_args()
    qrun = os.path.abspath(a.qlock_run)
    only = set(a.only.split(",")) if a.only else None
    outdir = a.keep or tempfile.mkdtemp(prefix="doctor-cg-")
    os.makedirs(outdir, exist_ok=True)
    cols = [("plain", ""), ("lockdep", "--lockdep-file=" + os.path.join(outdir, "lockdep.txt")),
            ("profile", "--profile=" + os.path.join(outdir, "profile.txt"))]
    pairs = []
    if a.pairs:
        prog = os.path.abspath(a.pairs)
        n = 20000
        for shape in ("nested", "flat", "rwread"):
            per = {}
            for c, opt in cols:
                ir0, p0 = run(qrun, opt, [prog, shape, "0"], outdir, "pairs-%s-%s-0" % (shape, c))
                irn, pn = run(qrun, opt, [prog, shape, str(n)], outdir,
                              "pairs-%s-%s-%d" % (shape, c, n))
                per[c] = (irn - ir0) / (2 * 2 * n)  # 2 threads, 2 pairs an iteration
                if not a.keep:
                    os.unlink(p0)
                    os.unlink(pn)
            pairs.append((shape, per))
            print(shape, per, file=sys.stderr, flush=True)
    rows = []
    for name, argv in PROGRAMS:
        if only and name not in only:
            continue
        ir = {c: [] for c, _ in cols}
        calls = 0
        for r in range(a.runs):  # the columns in turn, run after run
            for c, opt in cols:
                n, path = run(qrun, opt, argv, outdir, "%s-%s-%d" % (name, c, r))
                ir[c].append(n)
                if c == "plain" and r == 0:
                    calls = lock_calls(path)
                if not a.keep:
                    os.unlink(path)
        rows.append((name, argv, ir, calls))
        print(name, ir, calls, file=sys.stderr, flush=True)
    if not a.keep:
        shutil.rmtree(outdir, ignore_errors=True)

    def mean(v):
        return sum(v) / len(v)

    out = []
    out.append("lock doctor cost in instructions: valgrind --tool=callgrind, whole program, "
               "qlock-run [OPTION] -- valgrind --tool=callgrind PROGRAM")
    out.append("(bench/report/doctor_callgrind.py --runs %d); each figure callgrind's "
               "'Collected' Ir, the columns run in turn, %d runs each." % (a.runs, a.runs))
    out.append("plain = qlock-run; lockdep = --lockdep-file=FILE; profile = --profile=FILE.")
    out.append("lock calls = calls of the lock entry points and condvar waits in the first "
               "plain run; per call = (option mean - plain mean) / lock calls.")
    out.append("A/A = second plain run / first.")
    out.append("")
    for name, argv, _, _ in rows:
        out.append("%-15s %s" % (name, " ".join(argv)))
    out.append("")
    hdr = "%-15s" % "program"
    for c, _ in cols:
        for r in range(a.runs):
            hdr += " %12s" % c
    out.append(hdr)
    for name, _, ir, _ in rows:
        line = "%-15s" % name
        for c, _ in cols:
            line += "".join(" %12d" % v for v in ir[c])
        out.append(line)
    out.append("")
    out.append("%-15s %7s %8s %8s %10s %10s %10s" % ("program", "A/A", "lockdep", "profile",
                                                     "lockcalls", "lockdep/lc", "profile/lc"))
    for name, _, ir, calls in rows:
        p = mean(ir["plain"])
        aa = ir["plain"][1] / ir["plain"][0] if len(ir["plain"]) > 1 else 1.0
        out.append("%-15s %7.3f %8.3f %8.3f %10d %10.0f %10.0f" % (
            name, aa, mean(ir["lockdep"]) / p, mean(ir["profile"]) / p, calls,
            (mean(ir["lockdep"]) - p) / max(calls, 1), (mean(ir["profile"]) - p) / max(calls, 1)))
    if pairs:
        out.append("")
        out.append("doctor_pairs SHAPE 20000 against doctor_pairs SHAPE 0 (bench/micro/doctor_pairs.c): "
                   "instructions per lock and unlock pair;")
        out.append("plain = the drop-in's own; lockdep, profile = what the option adds to them.")
        out.append("%-15s %8s %8s %8s" % ("shape", "plain", "lockdep", "profile"))
        for shape, per in pairs:
            out.append("%-15s %8.1f %8.1f %8.1f" % (shape, per["plain"], per["lockdep"] - per["plain"],
                                                    per["profile"] - per["plain"]))
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
