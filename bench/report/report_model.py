#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The data side of the seed report: lockbench --json runs, the published
tables and how each row maps onto our experiments, paired ratios, the
verdict rule (seed_verdict; docs/bench-report.md) and
number formatting.  Standard library only."""
import json
import math
import statistics
import sys

DEFAULT_THRESHOLD = 0.03
# An effect on the claimed side but smaller than this fraction of the
# published one (in log terms) does not reproduce the claim.
WEAKER = 0.5

# ---- input -----------------------------------------------------------------


def load_json(path):
    """The document in path; a missing or malformed file ends the program
    with one line naming it (status 2, bad input, as lockbench's)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        print("lockbench report: %s: %s" % (path, err), file=sys.stderr)
        sys.exit(2)


class Run:
    """Every lockbench --json file given, experiments by name (a later
    file's experiment of the same name replaces an earlier one)."""

    def __init__(self, paths):
        self.exps, self.hosts, self.notes = {}, [], []
        for path in paths:
            doc = load_json(path)
            if not isinstance(doc, dict) or \
                    doc.get("schema") != "qlock-lockbench/1":
                print("lockbench report: %s: not lockbench --json output"
                      % path, file=sys.stderr)
                sys.exit(2)
            self.hosts.append((path, doc.get("host", {})))
            self.notes += doc.get("notes", [])
            for e in doc.get("experiments", []):
                self.exps[e["name"]] = e
        self.cpus = min((h.get("online_cpus") or 0 for _, h in self.hosts),
                        default=0)


def point(exp, lock, threads):
    for p in exp["points"]:
        if p["lock"] == lock and p["threads"] == threads:
            return p
    return None


def run_metric(exp, run, metric):
    """One figure of one run; None when the run has no such figure."""
    if metric == "primary":
        unit = exp["primary"]["unit"]
        return {"ms": run["elapsed_ms"], "kops/s": run["kops"],
                "ops": run["ops"]}[unit]
    if metric in ("thr_avg", "thr_min", "thr_max"):
        return run["per_thread_ops_s"][metric[4:]]
    if metric == "rd_rate":
        return run["reader_rate"]
    if metric == "wr_rate":
        return run["writer_rate"]
    if metric.startswith("fx_"):
        fx = run["futex_calls"]
        return None if fx is None else fx[metric[3:]]
    return run[metric]


def ok_runs(p):
    return [r for r in p["runs"] if r["status"] == "ok"] if p else []


def spread(values):
    """(median, min, max, n) of the values that exist."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return (statistics.median(v), min(v), max(v), len(v))


def figure(exp, lock, threads, metric):
    p = point(exp, lock, threads)
    return spread(run_metric(exp, r, metric) for r in ok_runs(p))


def paired_ratio(exp, after, before, threads, metric):
    """Ratio of medians, and min/max of the per-rep ratios (rep i of both
    locks ran back to back), as lockbench computes its ratio columns."""
    pa, pb = point(exp, after, threads), point(exp, before, threads)
    fa, fb = figure(exp, after, threads, metric), \
        figure(exp, before, threads, metric)
    if not pa or not pb or not fa or not fb or fb[0] <= 0:
        return None
    ra = {r["rep"]: r for r in ok_runs(pa)}
    per = []
    for r in ok_runs(pb):
        a, b = ra.get(r["rep"]), run_metric(exp, r, metric)
        if a is None or b is None or b <= 0:
            continue
        x = run_metric(exp, a, metric)
        if x is not None:
            per.append(x / b)
    if not per:
        return None
    return (fa[0] / fb[0], min(per), max(per), len(per))


# ---- published tables --------------------------------------------------------


def pub_number(cell, part=0):
    """'1,641' -> 1641.0, '-9.6%' -> -9.6, '2324/2321' part 1 -> 2321."""
    parts = cell.split("/")
    if part >= len(parts):
        return None
    s = parts[part].strip().replace(",", "").rstrip("%").lstrip("+")
    try:
        return float(s)
    except ValueError:
        return None


def leading_int(text):
    digits = ""
    for ch in text.strip():
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def col_ref(ref):
    """A merit side: "column" or ["column", part of an a/b cell]."""
    return (ref, 0) if isinstance(ref, str) else (ref[0], ref[1])


class Row:
    """One published row and where its counterpart lives in our data."""

    def __init__(self, table, cells, run):
        ours = table.get("ours", {})
        spec = ours.get("rows", {}).get(cells[0], {})
        self.key, self.cells = cells[0], cells
        self.exp_name = spec.get("experiment", ours.get("experiment"))
        self.metric = spec.get("metric", ours.get("metric", "primary"))
        self.threads = spec.get("threads",
                                ours.get("threads", leading_int(cells[0])))
        # A row of single runs (seed 001 lists 5 runs and their total).
        self.rep, self.aggregate = spec.get("rep"), spec.get("aggregate")
        self.exp = run.exps.get(self.exp_name)
        self.missing = None
        if not self.exp:
            self.missing = "experiment %s not in the input" % self.exp_name
        elif self.threads not in self.exp["threads"]:
            self.missing = "threads"
        elif self.rep and self.rep > self.exp["reps"]:
            self.missing = "reps"
        self.oversub = bool(run.cpus and self.threads and
                            self.threads > run.cpus)

    def published(self, table, ref):
        name, part = col_ref(ref)
        return pub_number(self.cells[table["columns"].index(name)], part)

    def ours(self, lock):
        if self.missing:
            return None
        if self.rep or self.aggregate:
            v = self.rep_values(lock)
            if self.aggregate == "sum":
                return (sum(v.values()), min(v.values()), max(v.values()),
                        len(v)) if v else None
            return spread([v.get(self.rep)])
        return figure(self.exp, lock, self.threads, self.metric)

    def rep_values(self, lock):
        p = point(self.exp, lock, self.threads)
        return {r["rep"]: run_metric(self.exp, r, self.metric)
                for r in ok_runs(p)}

    def ratio(self, table, merit):
        if self.missing:
            return None
        cols = table["ours"]["columns"]
        after = cols[col_ref(merit["after"])[0]]
        before = cols[col_ref(merit["before"])[0]]
        if self.rep or self.aggregate:
            return self.rep_ratio(after, before)
        return paired_ratio(self.exp, after, before, self.threads,
                            self.metric)

    def rep_ratio(self, after, before):
        """One rep's ratio, or the ratio of the sums (as the patch's total)
        with the per-rep ratios as its spread."""
        a, b = self.rep_values(after), self.rep_values(before)
        reps = sorted(k for k in a if k in b and b[k])
        if self.rep:
            reps = [k for k in reps if k == self.rep]
        if not reps:
            return None
        per = [a[k] / b[k] for k in reps]
        med = sum(a[k] for k in reps) / sum(b[k] for k in reps)
        return (med, min(per), max(per), len(per))

    def published_ratio(self, table, merit):
        a = self.published(table, merit["after"])
        b = self.published(table, merit["before"])
        return a / b if a is not None and b else None


def table_rows(table, run):
    return [Row(table, cells, run) for cells in table["rows"]]


def judge(pub, ours, threshold):
    """How our ratio spread compares with a published ratio."""
    if pub is None:
        return "no published figure"
    if abs(pub - 1) < threshold:
        return "no published effect"
    if ours is None:
        return "not run"
    if ours[3] < 2:
        return "within noise"
    med, lo, hi, _ = ours
    if (pub < 1 and hi < 1) or (pub > 1 and lo > 1):
        # The direction holds; a tenth of the effect is not the claim.
        if abs(math.log(med)) < WEAKER * abs(math.log(pub)):
            return "same side, much smaller"
        return "agrees"
    if (pub < 1 and lo > 1) or (pub > 1 and hi < 1):
        return "opposite"
    return "within noise"


DECISIVE = {"agrees": 3, "opposite": 2, "same side, much smaller": 1,
            "within noise": 0}


def seed_verdict(seed, run):
    """(verdict, one-line reason) of a seed.  Each row of the seed's chosen
    published table whose figure of merit (after/before) differs from 1 by
    at least the threshold is a claim, judged by judge().  reproduced: at
    least half the judged rows agree and none is opposite; not reproduced:
    none agrees and at least half are opposite or much smaller; otherwise
    (or when no judged row was run) inconclusive."""
    v = seed["verdict"]
    tables = {t["id"]: t for t in seed["tables"]}
    threshold = v.get("threshold", DEFAULT_THRESHOLD)
    if not used_experiments(seed) & set(run.exps):
        return "inconclusive", "not run (no experiment of this seed in the input)"
    counts = {"agrees": 0, "opposite": 0, "same side, much smaller": 0,
              "within noise": 0}
    example = None
    for tid in v.get("tables", [v.get("table")]):
        t = tables[tid]
        merit = t["merits"][v["merit"]]
        for row in table_rows(t, run):
            if "rows" in v and row.key not in v["rows"]:
                continue
            pub, ours = row.published_ratio(t, merit), row.ratio(t, merit)
            j = judge(pub, ours, threshold)
            if j in counts:
                counts[j] += 1
                # the reason quotes the most decisive row
                if example is None or DECISIVE[j] > DECISIVE[example[0]]:
                    example = (j, row, pub, ours, merit, tid)
    a, o, n = counts["agrees"], counts["opposite"], counts["within noise"]
    w = counts["same side, much smaller"]
    total = a + o + n + w
    if total == 0:
        return "inconclusive", ("no row of the published table with an "
                                "effect of %d%% or more was run here"
                                % round(threshold * 100))
    if a and not o and 2 * a >= total:
        verdict = "reproduced"
    elif not a and 2 * (o + w) >= total:
        verdict = "not reproduced"
    else:
        verdict = "inconclusive"
    j, row, pub, ours, merit, tid = example
    fmt = merit.get("format", "x")
    where = ("table %s, " % tid if "tables" in v else "") + row_label(row)
    tally = ["%d of %d rows agree" % (a, total)]
    tally += ["%d %s" % (k, name) for name, k in
              (("opposite", o), ("same side but under half the effect", w),
               ("within noise", n)) if k]
    reason = "%s; e.g. %s: published %s, here %s" % (
        ", ".join(tally), where, fmt_ratio(pub, fmt),
        fmt_ratio_spread(ours, fmt))
    return verdict, reason


def row_label(row):
    if row.rep or row.aggregate:
        return "%s (%d threads)" % (row.key if not row.rep
                                    else "run " + row.key, row.threads)
    if row.key.strip().isdigit():
        return "%s threads" % row.key
    return row.key


# ---- formatting --------------------------------------------------------------


def fmt_num(v):
    if v is None:
        return "-"
    if abs(v) >= 100 or v == int(v):
        return "{:,.0f}".format(v)
    return "{:,.2f}".format(v) if abs(v) < 10 else "{:,.1f}".format(v)


def fmt_spread(s):
    if s is None:
        return "-"
    if s[3] == 1:
        return fmt_num(s[0])
    return "%s [%s-%s]" % (fmt_num(s[0]), fmt_num(s[1]), fmt_num(s[2]))


def fmt_ratio(r, fmt):
    if r is None:
        return "-"
    if fmt == "pct":
        return "%+.1f%%" % ((r - 1) * 100)
    if r >= 100:
        return "{:,.0f}x".format(r)
    if 0 < r < 0.1:  # futex calls: keep two significant digits
        return "%.2gx" % r
    return "%.2fx" % r


def fmt_ratio_spread(s, fmt):
    if s is None:
        return "-"
    return "%s [%s..%s]" % (fmt_ratio(s[0], fmt), fmt_ratio(s[1], fmt),
                            fmt_ratio(s[2], fmt))


def exp_params(exp):
    p = exp["params"]
    if exp["workload"] == "loop":
        size = "%s iterations per thread" % "{:,}".format(p["iterations"])
    else:
        size = "%g s per run" % p["duration_s"]
    mix = "R:W %d:%d" % (p["read_ratio"], p["write_ratio"])
    if exp["workload"] == "futex":
        mix = "%d%% readers" % p["read_ratio"]
    extra = []
    if p["xthread"]:
        extra.append("separate reader and writer threads")
    if p["sleep_per_1024"]:
        extra.append("%d/1024 critical sections sleep" % p["sleep_per_1024"])
    return ("`%s`: %s workload, %s, %s, load %d, lock latency %d, data %s, "
            "%d reps; medians [min-max] over the reps%s" % (
                exp["name"], exp["workload"], size, mix, p["load"],
                p["lock_latency"], p["data"], exp["reps"],
                "".join("; " + x for x in extra)))


def used_experiments(seed):
    names = set()
    for t in seed["tables"]:
        ours = t.get("ours", {})
        names.add(ours.get("experiment"))
        names |= {r.get("experiment") for r in ours.get("rows", {}).values()}
    return names
