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
                      [--suite [--suite-runs N] [--sqlite build/bench/apps/sqlite_threads]]
                      [--out FILE] [--keep DIR]

--suite runs, instead of the five lock-heavy programs, every program of
the application suite (`make bench-apps`, bench/apps/apps_programs.py)
that callgrind runs in a few minutes, each with its counts scaled down
(SUITE below: the same command lines, smaller counts; the five lock-heavy
programs are among them with the counts they have here), and reports the
median and the worst ratio over the suite for each option.  memcached is
left out: it is a server, whose instructions under callgrind are its
polling while the client paces it as much as its work.

--pairs adds the instructions per lock and unlock pair of doctor_pairs
(bench/micro/doctor_pairs.c), each shape run with 10000 and 30000
iterations a thread, so that what a run costs once drops out: set-up, the
locks' first acquisitions (rows, first stacks, lockdep's nodes) and the
report at exit, which names the same locks and sites in both runs.

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

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(os.path.dirname(HERE), "apps")


def db_bench(bench, extra):
    return lambda ctx: ["db_bench", "--benchmarks=" + bench, "--threads=8",
                        "--compression_type=none", "--seed=42",
                        "--db=" + ctx["dir"] + ("/db-read" if bench == "readrandom"
                                                else "/db-fill")] + extra


def fill_setup(ctx):
    shutil.rmtree(ctx["dir"] + "/db-fill", ignore_errors=True)


def read_setup(ctx):
    d = ctx["dir"] + "/db-read"
    if not os.path.isdir(d):
        subprocess.run(["db_bench", "--benchmarks=fillrandom", "--threads=1", "--num=2000",
                        "--compression_type=none", "--seed=7", "--db=" + d],
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True)


def text_setup(ctx):
    if not os.path.exists(ctx["input"]):
        sys.path.insert(0, APPS)
        import apps_programs  # the suite's own text generator
        apps_programs.make_text(ctx["input"], 2)


def lock_heavy(name):
    return lambda ctx: dict(PROGRAMS)[name]


# The application suite's programs (bench/apps/apps_programs.py, default
# counts in brackets), scaled down for callgrind: (name, command, set-up).
SUITE = [
    ("rocksdb-fillrandom", db_bench("fillrandom", ["--num=2000"]), fill_setup),      # 25000
    ("rocksdb-readrandom", db_bench("readrandom", ["--num=2000", "--reads=10000",
                                                   "--use_existing_db=1"]), read_setup),  # 100000 reads
    ("rocksdb-cache_bench-1shard", lock_heavy("cache1"), None),     # 200000 ops a thread
    ("rocksdb-cache_bench-64shards", lock_heavy("cache64"), None),  # 200000
    ("kyotocabinet-order", lock_heavy("kc-order"), None),           # 100000
    ("kyotocabinet-wicked", lock_heavy("kc-wicked"), None),         # 100000
    ("sysbench-mutex", lock_heavy("sysbench-mutex"), None),         # 80000 locks
    ("sysbench-threads", lambda ctx: ["sysbench", "threads", "--threads=16", "--thread-locks=2",
                                      "--thread-yields=100", "--time=0", "--events=100", "run"],
     None),                                                        # 1500 events
    ("python-queue", lambda ctx: [sys.executable, os.path.join(APPS, "py_threads.py"), "queue",
                                  "5000"], None),                  # 150000 items
    ("python-lock", lambda ctx: [sys.executable, os.path.join(APPS, "py_threads.py"), "lock",
                                 "20000"], None),                  # 1200000
    ("pigz", lambda ctx: ["pigz", "-p", "8", "-6", "-c", ctx["input"]], text_setup),  # 48 MB
    ("zstd", lambda ctx: ["zstd", "-q", "-T8", "-9", "-c", ctx["input"]], text_setup),  # 48 MB
    ("sqlite", lambda ctx: [ctx["sqlite"], "8", "2000"], None),     # 60000 rows
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
    ap.add_argument("--suite", action="store_true")
    ap.add_argument("--suite-runs", type=int, default=1)
    ap.add_argument("--sqlite", default="build/bench/apps/sqlite_threads")
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
        n0, n = 10000, 30000
        for shape in ("nested", "flat", "rwread"):
            per = {}
            for c, opt in cols:
                ir0, p0 = run(qrun, opt, [prog, shape, str(n0)], outdir,
                              "pairs-%s-%s-%d" % (shape, c, n0))
                irn, pn = run(qrun, opt, [prog, shape, str(n)], outdir,
                              "pairs-%s-%s-%d" % (shape, c, n))
                per[c] = (irn - ir0) / (2 * 2 * (n - n0))  # 2 threads, 2 pairs an iteration
                if not a.keep:
                    os.unlink(p0)
                    os.unlink(pn)
            pairs.append((shape, per))
            print(shape, per, file=sys.stderr, flush=True)
    programs = PROGRAMS
    if a.suite:
        a.runs = a.suite_runs
        ctx = {"dir": os.path.join(outdir, "work"), "input": os.path.join(outdir, "work", "text.csv"),
               "sqlite": os.path.abspath(a.sqlite)}
        os.makedirs(ctx["dir"], exist_ok=True)
        programs = []
        for name, argv, setup in SUITE:
            if only and name not in only:
                continue
            if shutil.which(argv(ctx)[0]) is None:
                print("skip %s: %s not found" % (name, argv(ctx)[0]), file=sys.stderr)
                continue
            programs.append((name, argv, setup))
    else:
        programs = [(name, (lambda ctx, v=argv: v), None) for name, argv in PROGRAMS]
        ctx = {}
    rows = []
    for name, argvf, setup in programs:
        if only and name not in only:
            continue
        argv = argvf(ctx)
        ir = {c: [] for c, _ in cols}
        calls = 0
        for r in range(a.runs):  # the columns in turn, run after run
            for c, opt in cols:
                if setup:
                    setup(ctx)
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
    if a.suite:
        out.append("--suite: the application suite's programs (bench/apps/apps_programs.py) with their counts "
                   "scaled down for callgrind")
        out.append("(the commands below, WORK a fresh directory; memcached, a server, left out).")
    out.append("")
    w = max([15] + [len(r[0]) + 1 for r in rows])
    for name, argv, _, _ in rows:
        out.append("%-*s %s" % (w, name, " ".join(
            os.path.basename(x) if x.startswith("/") else
            x.replace(ctx["dir"], "WORK") if ctx and ctx["dir"] in x else x for x in argv)))
    out.append("")
    hdr = "%-*s" % (w, "program")
    for c, _ in cols:
        for r in range(a.runs):
            hdr += " %12s" % c
    out.append(hdr)
    for name, _, ir, _ in rows:
        line = "%-*s" % (w, name)
        for c, _ in cols:
            line += "".join(" %12d" % v for v in ir[c])
        out.append(line)
    out.append("")
    out.append("%-*s %7s %8s %8s %10s %10s %10s" % (w, "program", "A/A", "lockdep", "profile",
                                                    "lockcalls", "lockdep/lc", "profile/lc"))
    ratios = {"lockdep": [], "profile": []}
    for name, _, ir, calls in rows:
        p = mean(ir["plain"])
        aa = "%7.3f" % (ir["plain"][1] / ir["plain"][0]) if len(ir["plain"]) > 1 else "%7s" % "-"
        for c in ratios:
            ratios[c].append((mean(ir[c]) / p, name))
        out.append("%-*s %s %8.3f %8.3f %10d %10.0f %10.0f" % (
            w, name, aa, mean(ir["lockdep"]) / p, mean(ir["profile"]) / p, calls,
            (mean(ir["lockdep"]) - p) / max(calls, 1), (mean(ir["profile"]) - p) / max(calls, 1)))
    if len(rows) > 1:
        out.append("")
        for c in ("profile", "lockdep"):
            v = sorted(ratios[c])
            k = len(v)
            med = v[k // 2][0] if k % 2 else (v[k // 2 - 1][0] + v[k // 2][0]) / 2
            out.append("%s over %d programs: median %.3f, worst %.3f (%s)" % (
                c, k, med, v[-1][0], v[-1][1]))
    if pairs:
        out.append("")
        out.append("doctor_pairs SHAPE 30000 against doctor_pairs SHAPE 10000 (bench/micro/doctor_pairs.c): "
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
