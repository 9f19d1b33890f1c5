# SPDX-License-Identifier: MIT
"""Running the application benchmark's programs (bench_apps.py): one
run of a program under a column (its wall time, the CPU time of its
processes, its figure), and one program's interleaved rounds with its
lock-profile run.  Every process runs in its own session and is killed
when the driver exits."""
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

from apps_stats import lock_bound, parse_profile, summarize

HERE = os.path.dirname(os.path.abspath(__file__))
live = []             # Popen objects to kill on exit


def log(msg):
    print(msg, file=sys.stderr, flush=True)


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


def cleanup(*_):
    for p in list(live):
        kill(p)
