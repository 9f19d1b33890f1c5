# SPDX-License-Identifier: MIT
"""The application benchmark's statistics and rules (docs/bench-apps.md):
quantiles and spreads, speed and CPU ratios per interleaved round, the
drop-in's lock profile, the lock-bound rule and the verdict."""
import re

from apps_programs import BASELINE, TOOL_NAMES

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
