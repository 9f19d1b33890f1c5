# SPDX-License-Identifier: MIT
"""The application benchmark's suite (bench_apps.py): the programs, each a
fixed amount of work with the figure it reports, and the columns each
program runs under (glibc, the drop-in, its diagnostics, its algorithms,
another build's drop-in)."""
import os
import random
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))

COLUMNS = [("glibc", None), ("qlock", {}), ("glibc-again", None)]
# --tools: the drop-in's diagnostics, each compared with the plain drop-in
# ("qlock") of the same round.  "args": qlock-run options; {dir} is the
# run's work directory (the reports go there, not into the output).
TOOL_COLUMNS = [("qlock+profile", {"args": ["--profile={dir}/profile.txt"]}),
                ("qlock+lockdep", {"args": ["--lockdep-file={dir}/lockdep.txt"]})]
ALGORITHM_COLUMNS = [("mutex=qspinlock", {"mutex": "qspinlock"}),
                     ("mutex=glibc", {"mutex": "glibc"}),
                     ("rwlock=tp", {"rwlock": "tp"}),
                     ("rwlock=rwsem", {"rwlock": "rwsem"}),
                     ("rwlock=glibc", {"rwlock": "glibc"})]

# --baseline QLOCK_RUN: another build's drop-in (its qlock-run, which
# preloads the library beside it), run in the same rounds and compared
# with this build's ("qlock") as the diagnostics are: a change to the
# locks judged on the programs, in one invocation.
BASELINE = "qlock-baseline"

TOOL_NAMES = {c for c, _ in TOOL_COLUMNS}


class Program:
    """One workload.  argv(ctx) is the command; figure(out) the program's own
    throughput figure (None: wall time is used); units the fixed amount of
    work (for CPU-seconds per unit); server: memcached-style runs."""

    def __init__(self, name, needs, threads, units, unit, argv,
                 figure=None, figure_unit="s", higher=True, setup=None,
                 server=None, check=None, discard=False):
        self.name, self.needs, self.threads = name, needs, threads
        self.discard = discard          # stdout is data: to /dev/null
        self.units, self.unit, self.argv = units, unit, argv
        self.figure, self.figure_unit, self.higher = figure, figure_unit, higher
        self.setup, self.server, self.check = setup, server, check


def rx(pattern, conv=float, total=False):
    """A figure parser: the first (or the sum of all) match(es)."""
    r = re.compile(pattern, re.M)

    def parse(out):
        vals = [conv(m) for m in r.findall(out)]
        if not vals:
            return None
        return sum(vals) if total else vals[0]
    return parse


def make_text(path, mb):
    """Deterministic compressible text (CSV-like lines), MB megabytes."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
             "theta", "iota", "kappa", "lambda", "mu"]
    block = []
    for i in range(20000):
        block.append("%08d,%s %s,%d,%d\n" % (
            i, rng.choice(words), rng.choice(words),
            rng.randrange(100000), rng.randrange(1000)))
    chunk = "".join(block)
    with open(path, "w") as f:
        n, i = 0, 0
        while n < mb << 20:
            # shift the numbers so no two chunks are alike
            s = chunk.replace(",1", ",%d" % (i % 10)).replace("0,", "%d," % (i % 7))
            f.write(s)
            n += len(s)
            i += 1


def programs(size, py, tools):
    """The suite.  size: 'quick' or 'default' (counts per run)."""
    q = size == "quick"
    P = []

    def dbb(ctx, bench, extra):
        return ["db_bench", "--benchmarks=" + bench, "--threads=8",
                "--compression_type=none", "--seed=42",
                "--db=" + ctx["dir"] + ("/db-read" if bench == "readrandom"
                                        else "/db-fill")] + extra

    nfill = 4000 if q else 25000
    def fill_setup(ctx):
        shutil.rmtree(ctx["dir"] + "/db-fill", ignore_errors=True)
    P.append(Program(
        "rocksdb-fillrandom", [("db_bench", "rocksdb-tools")], 8, 8 * nfill,
        "op", lambda c: dbb(c, "fillrandom", ["--num=%d" % nfill]),
        rx(r"^fillrandom\s*:.*?\s(\d+) ops/sec"), "ops/s",
        setup=fill_setup))

    nread = 20000 if q else 100000
    def read_setup(ctx):
        d = ctx["dir"] + "/db-read"
        if os.path.isdir(d):
            return
        subprocess.run(["db_bench", "--benchmarks=fillrandom", "--threads=1",
                        "--num=%d" % nfill, "--compression_type=none",
                        "--seed=7", "--db=" + d], stdout=subprocess.DEVNULL,
                       stderr=subprocess.STDOUT, timeout=120, check=True)
    P.append(Program(
        "rocksdb-readrandom", [("db_bench", "rocksdb-tools")], 8, 8 * nread,
        "op", lambda c: dbb(c, "readrandom", [
            "--num=%d" % nfill, "--reads=%d" % nread, "--use_existing_db=1"]),
        rx(r"^readrandom\s*:.*?\s(\d+) ops/sec"), "ops/s",
        setup=read_setup))

    nops = 40000 if q else 200000
    for shards in (1, 64):
        bits = {1: 0, 64: 6}[shards]
        P.append(Program(
            "rocksdb-cache_bench-%dshard%s" % (shards, "s" if shards > 1 else ""),
            [("cache_bench", "rocksdb-tools")], 8, 8 * nops, "op",
            lambda c, bits=bits: [
                "cache_bench", "--threads=8", "--num_shard_bits=%d" % bits,
                "--ops_per_thread=%d" % nops, "--cache_size=8388608",
                "--value_bytes=1024"],
            rx(r"Rough parallel ops/sec = (\d+)"), "ops/s"))

    kc = 20000 if q else 100000
    P.append(Program(
        "kyotocabinet-order", [("kccachetest", "kyotocabinet-utils")], 8,
        8 * kc * 3, "op", lambda c: ["kccachetest", "order", "-th", "8",
                                     str(kc)],
        rx(r"^time: ([\d.]+)", total=True), "s", higher=False,
        check=lambda out: out.rstrip().endswith("ok")))
    kw = 4000 if q else 100000
    P.append(Program(
        "kyotocabinet-wicked", [("kccachetest", "kyotocabinet-utils")], 8,
        8 * kw, "op", lambda c: ["kccachetest", "wicked", "-th", "8",
                                 "-it", "1", str(kw)],
        rx(r"^time: ([\d.]+)", total=True), "s", higher=False,
        check=lambda out: out.rstrip().endswith("ok")))

    mops = 20000 if q else 100000
    P.append(Program(
        "memcached", [("memcached", "memcached"), ("memcaslap",
                                                   "libmemcached-tools")],
        4, mops, "op", None, rx(r"TPS: (\d+)"), "ops/s",
        server={"argv": lambda port: [
            "memcached"] + (["-u", "root"] if os.getuid() == 0 else []) + [
            "-t", "4", "-p", str(port), "-U", "0", "-l", "127.0.0.1",
            "-m", "64"],
            "client": lambda port: [
            "memcaslap", "-s", "127.0.0.1:%d" % port, "-T", "2", "-c", "32",
            "-x", str(mops)]}))

    ml = 4000 if q else 80000
    P.append(Program(
        "sysbench-mutex", [("sysbench", "sysbench")], 16, 16 * ml, "lock",
        lambda c: ["sysbench", "mutex", "--threads=16", "--time=0",
                   "--mutex-num=64", "--mutex-locks=%d" % ml,
                   "--mutex-loops=2000", "run"],
        rx(r"total time:\s+([\d.]+)s"), "s", higher=False))
    te = 40 if q else 1500
    P.append(Program(
        "sysbench-threads", [("sysbench", "sysbench")], 16, te, "event",
        lambda c: ["sysbench", "threads", "--threads=16", "--thread-locks=2",
                   "--thread-yields=100", "--time=0", "--events=%d" % te,
                   "run"],
        rx(r"total time:\s+([\d.]+)s"), "s", higher=False))

    pq = 20000 if q else 150000
    P.append(Program(
        "python-queue", [(py, "python3")], 8, 4 * pq, "item",
        lambda c: [py, os.path.join(HERE, "py_threads.py"), "queue", str(pq)],
        rx(r"^ops/s: ([\d.]+)"), "items/s"))
    pl = 50000 if q else 1200000
    P.append(Program(
        "python-lock", [(py, "python3")], 8, 8 * pl, "increment",
        lambda c: [py, os.path.join(HERE, "py_threads.py"), "lock", str(pl)],
        rx(r"^ops/s: ([\d.]+)"), "increments/s"))

    mb = 8 if q else 48
    def text_setup(ctx):
        if not os.path.exists(ctx["input"]):
            make_text(ctx["input"], ctx["input_mb"])
    P.append(Program(
        "pigz", [("pigz", "pigz")], 8, mb, "MB",
        lambda c: ["pigz", "-p", "8", "-6", "-c", c["input"]],
        None, "s", higher=False, setup=text_setup, discard=True))
    P.append(Program(
        "zstd", [("zstd", "zstd")], 8, mb, "MB",
        lambda c: ["zstd", "-q", "-T8", "-9", "-c", c["input"]],
        None, "s", higher=False, setup=text_setup, discard=True))

    srows = 4000 if q else 60000
    sq = tools.get("sqlite_threads")
    P.append(Program(
        "sqlite", [(sq or "sqlite_threads", "libsqlite3-dev (then rebuild)")],
        8, 8 * (2 * srows + srows // 50), "op",
        lambda c: [sq, "8", str(srows)], rx(r"^ops/s: ([\d.]+)"), "ops/s"))
    return P, mb
