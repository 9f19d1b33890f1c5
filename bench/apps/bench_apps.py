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
"""
import argparse
import json
import os
import platform
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = "qlock-bench-apps/1"

# ---- the verdict rule and the lock-bound rule (docs/bench-apps.md) --------

FLOOR = 0.97          # a median ratio below this fails even in a tight band
CPU_CEILING = 1.10    # CPU-seconds per unit of work, drop-in / glibc
LOCK_BOUND_GAIN = 1.10  # what a lock-bound program must gain
# Lock-bound: the drop-in's profile run (qlock-run --stats) shows at least
# this many contended acquisitions per second of wall time AND at least
# this share of all acquisitions contended, not counting the waits that
# at some point saw the owner in sched_yield(), a sleep or a condition
# variable's wake-up (the report's "off-CPU owners": the program holds
# the lock across the call, and no lock makes the call shorter).  (The lock wait
# time is recorded too, as a share of wall time x CPUs, but not used:
# with more threads than CPUs it mostly measures preempted holders and
# idle workers.)
LB_CONTENDED_PER_S = 1000.0
LB_CONTENDED_SHARE = 0.005
AA_TARGET = 0.05      # the A/A band the run lengths aim at: within +-5%

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
live = []             # Popen objects to kill on exit


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- the programs -------------------------------------------------------------


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


# ---- running one program once ---------------------------------------------


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def kill(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass
    if proc in live:
        live.remove(proc)


def wait_exact(proc, timeout):
    """proc's exit status as soon as it exits, or -9 after `timeout`
    seconds (killed): (rc, timed_out).  Popen.wait(timeout) looks at the
    child in a loop that sleeps up to 50 ms between looks, which rounds a
    run's wall time up by as much: a run that ends a few ms later than
    another could measure 50 ms (4 % of pigz's 1.2 s) longer."""
    fired = []

    def expire():
        fired.append(True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    timer = threading.Timer(timeout, expire)
    timer.start()
    try:
        rc = proc.wait()
    finally:
        timer.cancel()
    return (-9, True) if fired else (rc, False)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def spawn(argv, out, env, cwd):
    p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                         start_new_session=True)
    live.append(p)
    return p


def wrap(ctx, algs, stats=None):
    """The command prefix of a column: none for glibc, qlock-run for the
    drop-in (its defaults, or the column's --mutex/--rwlock and options),
    with --qlock-run-args after the column's own."""
    if algs is None:
        return []
    pre = [algs.get("run", ctx["qlock_run"])]
    for k, v in sorted(algs.items()):
        if k not in ("args", "run"):
            pre.append("--%s=%s" % (k, v))
    pre += [a.replace("{dir}", ctx["dir"]) for a in algs.get("args", [])]
    pre += ctx["extra_args"]
    if stats:
        pre.append("--stats=" + stats)
    return pre + ["--"]


def run_once(prog, ctx, algs, timeout, stats=None):
    """One run: {wall, cpu, figure, rc, timeout, tail}."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    for k in ("QLOCK_MUTEX", "QLOCK_RWLOCK", "QLOCK_SPIN", "QLOCK_STATS",
              "QLOCK_PROFILE", "QLOCK_LOCKDEP", "QLOCK_LOCKDEP_FILE",
              "QLOCK_VERBOSE", "QLOCK_DEADLOCK_AFTER"):
        env.pop(k, None)
    outpath = os.path.join(ctx["dir"], "out.txt")
    res = {"timeout": False}
    if prog.setup:
        prog.setup(ctx)
    with open(outpath, "w") as out:
        if prog.server:
            port = free_port()
            srv = spawn(wrap(ctx, algs, stats) + prog.server["argv"](port),
                        subprocess.DEVNULL, env, ctx["dir"])
            if not wait_port(port, srv):
                kill(srv)
                return {"rc": -1, "timeout": False, "wall": None,
                        "cpu": None, "figure": None,
                        "tail": "server did not start on 127.0.0.1:%d" % port}
            t0 = time.monotonic()
            cli = spawn(prog.server["client"](port), out, env, ctx["dir"])
            rc, res["timeout"] = wait_exact(cli, timeout)
            wall = time.monotonic() - t0
            live.remove(cli) if cli in live else None
            c0 = child_cpu()
            srv.send_signal(signal.SIGTERM)
            try:
                src = srv.wait(10)
            except subprocess.TimeoutExpired:
                kill(srv)
                src = -9
            live.remove(srv) if srv in live else None
            cpu = child_cpu() - c0          # the server's user+sys
            if rc == 0 and src not in (0, -signal.SIGTERM):
                rc = src
        else:
            c0 = child_cpu()
            t0 = time.monotonic()
            p = spawn(wrap(ctx, algs, stats) + prog.argv(ctx),
                      subprocess.DEVNULL if prog.discard else out, env,
                      ctx["dir"])
            rc, res["timeout"] = wait_exact(p, timeout)
            wall = time.monotonic() - t0
            live.remove(p) if p in live else None
            cpu = child_cpu() - c0
    with open(outpath, errors="replace") as f:
        text = f.read()
    fig = prog.figure(text) if prog.figure and rc == 0 else None
    if rc == 0 and prog.figure is None:
        fig = wall
    if rc == 0 and (fig is None or (prog.check and not prog.check(text))):
        rc = -2                       # ran, but not as expected
    res.update(rc=rc, wall=wall, cpu=cpu, figure=fig,
               tail=text.strip().splitlines()[-1][:200] if text.strip() else "")
    return res


# ---- statistics ------------------------------------------------------------


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"med": quantile(xs, 0.5), "p25": quantile(xs, 0.25),
            "p75": quantile(xs, 0.75), "min": min(xs), "max": max(xs),
            "n": len(xs)}


def speed_ratio(prog, run, base):
    """Higher is better: col/glibc for a throughput, glibc/col for a time."""
    a, b = run.get("figure"), base.get("figure")
    if not a or not b:
        return None
    return a / b if prog.higher else b / a


def cpu_ratio(run, base):
    a, b = run.get("cpu"), base.get("cpu")
    if a is None or not b:
        return None
    return a / b


def parse_profile(text, wall, ncpu):
    """The drop-in's --stats report(s): totals of the 'locks used' rows."""
    tot = {"acquired": 0, "contended": 0, "wait_ms": 0.0, "max_ms": 0.0,
           "locks": 0, "algorithms": None, "off_cpu_waits": 0}
    section = None
    for line in text.splitlines():
        if not line.startswith("libqlock-pthread: "):
            continue
        body = line[len("libqlock-pthread: "):]
        if body.startswith("mutex=") and tot["algorithms"] is None:
            tot["algorithms"] = body.strip()
        m = re.match(r"off-CPU owners\s+(\d+) waits", body)
        if m:
            tot["off_cpu_waits"] += int(m.group(1))
            continue
        if body.startswith("locks used"):
            section = "used"
            continue
        if body.startswith("most contended"):
            section = None
            continue
        f = body.split()
        if section == "used" and len(f) == 6:
            try:
                tot["locks"] += int(f[0]) if f[0].isdigit() else 0
                tot["acquired"] += int(f[2])
                tot["contended"] += int(f[3])
                tot["wait_ms"] += float(f[4])
                tot["max_ms"] = max(tot["max_ms"], float(f[5]))
            except ValueError:
                pass
    tot["wall_s"] = wall
    tot["contended_per_s"] = tot["contended"] / wall if wall else None
    tot["contended_share"] = (tot["contended"] / tot["acquired"]
                              if tot["acquired"] else 0.0)
    tot["wait_share"] = (tot["wait_ms"] / 1000.0 / (wall * ncpu)
                         if wall else None)
    running = max(0, tot["contended"] - tot["off_cpu_waits"])
    tot["running_contended_per_s"] = running / wall if wall else None
    tot["running_contended_share"] = (running / tot["acquired"]
                                      if tot["acquired"] else 0.0)
    return tot


def lock_bound(p):
    if not p or p.get("contended_per_s") is None:
        return None
    # Profiles without the off-CPU count: every contended acquisition.
    per_s = p.get("running_contended_per_s", p["contended_per_s"])
    share = p.get("running_contended_share", p["contended_share"])
    return bool(per_s >= LB_CONTENDED_PER_S and share >= LB_CONTENDED_SHARE)


def verdict(ratio, aa, cpu, bound):
    """(verdict, reason) per docs/bench-apps.md."""
    if not ratio or not aa:
        return "no data", "no complete pairs"
    floor = min(aa["p25"], FLOOR)
    why = []
    if ratio["med"] < floor:
        why.append("median %.3f < %.3f (A/A lower edge %.3f, floor %.2f)"
                   % (ratio["med"], floor, aa["p25"], FLOOR))
    if cpu and cpu["med"] > CPU_CEILING:
        why.append("CPU ratio %.3f > %.2f" % (cpu["med"], CPU_CEILING))
    if bound and ratio["med"] < LOCK_BOUND_GAIN:
        why.append("lock-bound but median %.3f < %.2f" % (ratio["med"],
                                                        LOCK_BOUND_GAIN))
    if why:
        return "fails", "; ".join(why)
    return "meets", "median %.3f >= %.3f, CPU %.2f%s" % (
        ratio["med"], floor, cpu["med"] if cpu else float("nan"),
        ", lock-bound and >= %.2f" % LOCK_BOUND_GAIN if bound else "")


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


def bench_program(prog, ctx, cols, reps, min_reps, allot, verbose):
    name = prog.name
    entry = {"name": name, "threads": prog.threads, "units": prog.units,
             "unit": prog.unit, "figure_unit": prog.figure_unit,
             "figure_source": "program" if prog.figure else "wall time",
             "higher_is_better": prog.higher, "runs": [],
             "command": " ".join(
                 os.path.basename(a) if i == 0 or a == ctx["sqlite"] else
                 a.replace(ctx["dir"], "$WORKDIR").replace(HERE, "bench/apps")
                 for i, a in enumerate(
                     prog.server["argv"](0) + ["+"] + prog.server["client"](0)
                     if prog.server else prog.argv(ctx)))}
    t_start = time.monotonic()
    warm = run_once(prog, ctx, None, ctx["first_timeout"])
    if warm["rc"] != 0:
        why = "timed out" if warm["timeout"] else "exit %s: %s" % (
            warm["rc"], warm["tail"])
        log("skip %s: the glibc warm-up run failed (%s)" % (name, why))
        entry["skipped"] = "warm-up run failed: " + why
        return entry
    timeout = min(ctx["max_timeout"], max(20.0, 20 * warm["wall"]))
    entry["run_timeout_s"] = timeout
    dropped = {}
    r = 0
    while r < reps:
        order = cols[r % len(cols):] + cols[:r % len(cols)]
        for cname, algs in order:
            if cname in dropped:
                continue
            res = run_once(prog, ctx, algs, timeout)
            res.update(round=r, column=cname)
            entry["runs"].append(res)
            if res["rc"] != 0:
                dropped[cname] = ("timed out after %.0f s" % timeout
                                  if res["timeout"] else
                                  "exit %s: %s" % (res["rc"], res["tail"]))
                log("  %s %s: %s; column dropped" % (name, cname,
                                                    dropped[cname]))
        r += 1
        el = time.monotonic() - t_start
        if verbose:
            log("  %s round %d done, %.1f s" % (name, r, el))
        if r >= min_reps and el > allot:
            break
    entry["rounds"] = r
    entry["dropped"] = dropped
    # the lock profile: one more run of the drop-in's defaults, --stats
    sfile = os.path.join(ctx["dir"], "stats.txt")
    if os.path.exists(sfile):
        os.unlink(sfile)
    pr, stext = {"rc": -1}, ""
    if "qlock" not in dropped:          # a failed drop-in would fail again
        pr = run_once(prog, ctx, {}, timeout, stats=sfile)
        try:
            with open(sfile) as f:
                stext = f.read()
        except OSError:
            pass
    entry["lock_profile"] = parse_profile(stext, pr["wall"], ctx["ncpu"]) \
        if pr["rc"] == 0 and stext else None
    entry["lock_bound"] = lock_bound(entry["lock_profile"])
    entry["seconds"] = time.monotonic() - t_start
    summarize(prog, entry, [c for c, _ in cols])
    return entry


def per_round(prog, by, col, base_col):
    """Column `col` against `base_col`, round by round: speed and CPU
    ratios, their spreads and the per-round speed ratios."""
    sr, cr = [], []
    for rnd in sorted(by):
        base, run = by[rnd].get(base_col), by[rnd].get(col)
        if not base or not run or base["rc"] or run["rc"]:
            continue
        sr.append(speed_ratio(prog, run, base))
        cr.append(cpu_ratio(run, base))
    return {"ratio": spread(sr), "cpu_ratio": spread(cr),
            "ratios": [x for x in sr if x is not None]}


def summarize(prog, entry, colnames):
    by = {}
    for run in entry["runs"]:
        by.setdefault(run["round"], {})[run["column"]] = run
    cols = {}
    for c in colnames:
        if c == "glibc":
            continue
        cols[c] = per_round(prog, by, c, "glibc")
        if c in TOOL_NAMES:             # its cost: against the plain drop-in
            cols[c]["vs_qlock"] = per_round(prog, by, c, "qlock")
        if c == BASELINE:               # this build against the baseline
            cols[c]["qlock_vs_baseline"] = per_round(prog, by, "qlock", c)
    figs = {}
    for c in colnames:
        vals = [r["figure"] for r in entry["runs"]
                if r["column"] == c and not r["rc"]]
        cpus = [r["cpu"] / prog.units for r in entry["runs"]
                if r["column"] == c and not r["rc"] and r["cpu"] is not None]
        figs[c] = {"figure": spread(vals), "cpu_per_unit": spread(cpus)}
    entry["columns"] = cols
    entry["figures"] = figs
    aa = cols.get("glibc-again", {}).get("ratio")
    q = cols.get("qlock", {})
    entry["aa_band"] = aa
    entry["aa_within_target"] = bool(aa and aa["p25"] >= 1 - AA_TARGET and
                                     aa["p75"] <= 1 + AA_TARGET)
    v, why = verdict(q.get("ratio"), aa, q.get("cpu_ratio"),
                     entry.get("lock_bound"))
    if entry.get("dropped", {}).get("qlock"):
        v, why = "fails", "the drop-in's run failed: " + \
            entry["dropped"]["qlock"]
    entry["verdict"], entry["verdict_reason"] = v, why


# ---- output ----------------------------------------------------------------


def fmt_spread(s, digits=2):
    if not s:
        return "-"
    f = "%%.%df" % digits
    return (f + " [" + f + ".." + f + "]") % (s["med"], s["p25"], s["p75"])


def table(doc):
    rows = [("program", "qlock/glibc med [IQR]", "A/A band (IQR)",
             "CPU ratio", "lock-bound", "verdict")]
    for e in doc["programs"]:
        if e.get("skipped"):
            rows.append((e["name"], "skipped: " + e["skipped"][:60], "", "",
                         "", ""))
            continue
        q = e["columns"].get("qlock", {})
        aa = e.get("aa_band")
        rows.append((
            e["name"], fmt_spread(q.get("ratio")),
            ("%.2f..%.2f" % (aa["p25"], aa["p75"]) if aa else "-") +
            ("" if e["aa_within_target"] else " *"),
            "%.2f" % q["cpu_ratio"]["med"] if q.get("cpu_ratio") else "-",
            {True: "yes", False: "no", None: "?"}[e.get("lock_bound")],
            e["verdict"]))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = ["with %d busy processes beside every program (--hogs)"
           % doc["hogs"]] if doc.get("hogs") else []
    for i, r in enumerate(rows):
        out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            out.append("  ".join("-" * x for x in w))
    extra = [c for c in doc["columns"] if c not in ("glibc", "qlock",
                                                    "glibc-again")
             and c not in TOOL_NAMES and c != BASELINE]
    if extra:
        out.append("")
        hdr = ["program"] + extra
        body = [hdr]
        for e in doc["programs"]:
            if e.get("skipped"):
                continue
            body.append([e["name"]] + [
                fmt_spread(e["columns"].get(c, {}).get("ratio"))
                for c in extra])
        w = [max(len(r[i]) for r in body) for i in range(len(hdr))]
        out.append("speed ratio to glibc per algorithm (median [IQR]):")
        for r in body:
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    tools = [c for c in doc["columns"] if c in TOOL_NAMES]
    if tools:
        out.append("")
        hdr = ["program"] + ["%s speed [IQR]" % c for c in tools] + \
              ["%s CPU" % c for c in tools]
        body = [hdr]
        for e in doc["programs"]:
            if e.get("skipped"):
                continue
            vs = [e["columns"].get(c, {}).get("vs_qlock", {}) for c in tools]
            body.append([e["name"]] + [fmt_spread(v.get("ratio"), 3)
                                       for v in vs] +
                        ["%.3f" % v["cpu_ratio"]["med"] if v.get("cpu_ratio")
                         else "-" for v in vs])
        w = [max(len(r[i]) for r in body) for i in range(len(hdr))]
        out.append("cost of the diagnostics: speed and CPU per unit of work "
                   "relative to the plain drop-in (qlock) of the same round "
                   "(median [IQR]; speed 0.98 = 2% slower):")
        for r in body:
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    if BASELINE in doc["columns"]:
        out.append("")
        hdr = ["program", "qlock/baseline speed [IQR]",
               "qlock/baseline CPU [IQR]", "baseline/glibc [IQR]"]
        body = [hdr]
        for e in doc["programs"]:
            if e.get("skipped"):
                continue
            c = e["columns"].get(BASELINE, {})
            v = c.get("qlock_vs_baseline", {})
            body.append([e["name"], fmt_spread(v.get("ratio"), 3),
                         fmt_spread(v.get("cpu_ratio"), 3),
                         fmt_spread(c.get("ratio"))])
        w = [max(len(r[i]) for r in body) for i in range(len(hdr))]
        out.append("this build against the baseline build (%s), same rounds: "
                   "speed and CPU per unit of work of this build's drop-in "
                   "over the baseline's (median [IQR]; speed 1.02 = 2%% "
                   "faster, CPU 0.98 = 2%% less):" % doc.get("baseline", "-"))
        for r in body:
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    out.append("")
    out.append("ratio: speed (throughput or 1/time) of the drop-in over "
               "glibc, per interleaved pair, median [p25..p75]; A/A band: "
               "glibc-again/glibc, p25..p75 (* = wider than +-%d%%); CPU "
               "ratio: user+sys per unit of work, drop-in/glibc, median."
               % (AA_TARGET * 100))
    out.append("verdict 'meets': median >= min(A/A lower edge, %.2f), CPU "
               "ratio <= %.2f, and >= %.2fx if lock-bound "
               "(docs/bench-apps.md)." % (FLOOR, CPU_CEILING, LOCK_BOUND_GAIN))
    lbl = ["%s: %s" % (e["name"], e["verdict_reason"])
           for e in doc["programs"] if e.get("verdict") == "fails"]
    if lbl:
        out.append("fails: " + " | ".join(lbl))
    return "\n".join(out) + "\n"


# ---- main --------------------------------------------------------------------


def cleanup(*_):
    for p in list(live):
        kill(p)


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
