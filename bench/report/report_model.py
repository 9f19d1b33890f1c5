#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The data side of the seed report: lockbench --json runs, the published
tables and how each row maps onto our experiments, paired ratios, the
verdict rule (seed_verdict; docs/bench-report.md) and
number formatting.  Standard library only."""
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- input -----------------------------------------------------------------


def bad_input(what):
    """Bad input ends the program with one line naming it (status 2, as
    lockbench's own bad input)."""
    print("lockbench report: %s" % what, file=sys.stderr)
    sys.exit(2)


def load_json(path):
    """The document in path; a missing or malformed file ends the program
    with one line naming it (bad_input)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        bad_input("%s: %s" % (path, err))


def lockbench_schema():
    """bench/core/lockbench.schema.json and its validator (validate_json.py):
    beside the report scripts when installed, in bench/core in the
    source tree; (None, None) when neither is there."""
    for d in (HERE, os.path.join(os.path.dirname(HERE), "core")):
        schema = os.path.join(d, "lockbench.schema.json")
        if os.path.exists(schema) and \
                os.path.exists(os.path.join(d, "validate_json.py")):
            sys.path.insert(0, d)
            import validate_json
            with open(schema) as f:
                return json.load(f), validate_json
    return None, None


def check_document(path, doc):
    """A lockbench --json document, checked against its schema before the
    report reads a field of it.  Files from before lockbench recorded the
    load and the A/A control lack those two keys and are accepted."""
    if not isinstance(doc, dict) or doc.get("schema") != "qlock-lockbench/1":
        bad_input("%s: not lockbench --json output (no \"schema\": "
                  "\"qlock-lockbench/1\")" % path)
    schema, validator = lockbench_schema()
    if schema:
        schema["required"] = [k for k in schema["required"] if k != "load"]
        exp = schema["$defs"]["experiment"]
        exp["required"] = [k for k in exp["required"] if k != "aa_control"]
        try:
            validator.validate(schema, doc)
        except validator.Invalid as err:
            bad_input("%s: malformed lockbench JSON: %s" % (path, err))
    if not any(p.get("runs") for e in doc.get("experiments", [])
               for p in e.get("points", [])):
        bad_input("%s: no runs in it (a lockbench document with no "
                  "experiment measured): nothing to report" % path)


class Run:
    """Every lockbench --json file given, experiments by name (a later
    file's experiment of the same name replaces an earlier one)."""

    def __init__(self, paths):
        self.exps, self.hosts, self.notes, self.load = {}, [], [], []
        for path in paths:
            doc = load_json(path)
            check_document(path, doc)
            self.hosts.append((path, doc.get("host", {})))
            if isinstance(doc.get("load"), dict):
                self.load.append((path, doc["load"]))
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


def per_rep_ratios(exp, after, before, threads, metric):
    """The paired per-rep ratios after / before (rep i of both locks ran
    back to back, in the same round), by rep."""
    pa, pb = point(exp, after, threads), point(exp, before, threads)
    if not pa or not pb:
        return {}
    ra = {r["rep"]: r for r in ok_runs(pa)}
    per = {}
    for r in ok_runs(pb):
        a, b = ra.get(r["rep"]), run_metric(exp, r, metric)
        if a is None or b is None or b <= 0:
            continue
        x = run_metric(exp, a, metric)
        if x is not None and x > 0:
            per[r["rep"]] = x / b
    return per


def paired_ratio(exp, after, before, threads, metric):
    """The report's statistic: the median of the paired per-rep ratios,
    with their min and max (its interval: for n reps the min..max of n
    paired ratios holds their median with probability 1 - 2^(1-n), 75% at
    3 reps, 94% at 5) and n."""
    per = list(per_rep_ratios(exp, after, before, threads, metric).values())
    if not per:
        return None
    return (statistics.median(per), min(per), max(per), len(per))


def interval_level(n):
    """Coverage of the min..max of n paired ratios for their median."""
    return 1 - 2.0 ** (1 - n) if n >= 2 else 0.0


def aa_lock(exp):
    """(baseline, its A/A copy) of an experiment run with an A/A control,
    else None (lockbench runs before the control existed)."""
    aa = exp.get("aa_control")
    if isinstance(aa, dict) and aa.get("lock") and aa.get("copy"):
        return aa["lock"], aa["copy"]
    return None


def aa_band(exp, threads, metric):
    """The A/A control of one row: the baseline's second copy against the
    baseline, paired per rep.  Returns (half-width w, per-rep ratios): the
    band is ratio in [e^-w, e^w], w the largest |ln| of those ratios (which
    copy is "A" is arbitrary, so the band is symmetric)."""
    pair = aa_lock(exp) if exp else None
    if not pair:
        return None
    per = list(per_rep_ratios(exp, pair[1], pair[0], threads,
                              metric).values())
    if len(per) < 2:
        return None
    return (max(abs(math.log(x)) for x in per), per)


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
        if name not in table["columns"]:
            return None  # a column the patch did not publish
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

    def locks(self, table, merit):
        """(after, before) lock names of a merit."""
        cols = dict(table["ours"]["columns"])
        cols.update(table["ours"].get("extra_columns", {}))
        return (cols[col_ref(merit["after"])[0]],
                cols[col_ref(merit["before"])[0]])

    def ratio(self, table, merit):
        """The median of the paired per-rep ratios [min, max, n]; a row of
        one rep (seed 001's runs 1-5): that rep's ratio; None for a merit
        with no measured counterpart (not_measured)."""
        if self.missing or merit.get("not_measured"):
            return None
        after, before = self.locks(table, merit)
        if self.rep:
            a, b = self.rep_values(after), self.rep_values(before)
            if not b.get(self.rep) or a.get(self.rep) is None:
                return None
            x = a[self.rep] / b[self.rep]
            return (x, x, x, 1)
        return paired_ratio(self.exp, after, before, self.threads,
                            self.metric)

    def sum_ratio(self, table, merit):
        """A total row (aggregate "sum"): the ratio of the sums over the
        paired reps, the form the patch published; else None."""
        if self.missing or self.aggregate != "sum" or \
                merit.get("not_measured"):
            return None
        after, before = self.locks(table, merit)
        a, b = self.rep_values(after), self.rep_values(before)
        reps = [k for k in a if k in b and b[k] and a[k] is not None]
        if not reps:
            return None
        return sum(a[k] for k in reps) / sum(b[k] for k in reps)

    def aa(self):
        """This row's A/A band (aa_band), or None."""
        if self.missing:
            return None
        return aa_band(self.exp, self.threads, self.metric)

    def published_ratio(self, table, merit):
        a = self.published(table, merit["after"])
        b = self.published(table, merit["before"])
        return a / b if a is not None and b else None


def table_rows(table, run):
    return [Row(table, cells, run) for cells in table["rows"]]


# ---- the verdict rule (docs/bench-report.md, "Verdicts") -----------------
#
# The size of an effect is |ln(ratio)|: halving a time and doubling a rate
# are the same size, and "-8.2%" and "-32.4%" compare as 0.086 and 0.39.

# A published ratio within this of 1 claims no effect (seed 003 uses 2%).
DEFAULT_THRESHOLD = 0.03
# A row agrees when its median's size is within this factor of the
# published size, either way (0.5x..2x).
SIZE_FACTOR = 2.0

# What judge() says of a row, and what each class means for a verdict.
AGREES = "agrees"
LARGER = "same sign, over twice the published size"
SMALLER = "same sign, under half the published size"
OPPOSITE = "opposite sign"
NO_EFFECT = "no effect: the interval rules out half the published size"
TOO_WIDE = "interval too wide to tell"
IN_AA = "inside the A/A band"
FEW_REPS = "fewer than 2 reps: not judged"
NOT_RUN = "not run"
NO_CLAIM = "no published effect"
NO_FIGURE = "no published figure"

PRO = (AGREES,)
CON = (LARGER, SMALLER, OPPOSITE, NO_EFFECT)
OPEN = (TOO_WIDE, IN_AA, FEW_REPS)

# Short names for the one-line summaries.
SHORT = {AGREES: "agrees", LARGER: "too large", SMALLER: "too small",
         OPPOSITE: "opposite", NO_EFFECT: "no effect", TOO_WIDE: "too wide",
         IN_AA: "inside A/A", FEW_REPS: "one rep", NOT_RUN: "not run"}


def size(r):
    return abs(math.log(r))


def judge(pub, ours, threshold=DEFAULT_THRESHOLD, factor=SIZE_FACTOR,
          aa=None):
    """How a row's measured ratio (paired median, min, max, reps) compares
    with the published ratio pub (both after / before).  aa: the row's A/A
    half-width (aa_band), or None when the run had no A/A control."""
    if pub is None or pub <= 0:
        return NO_FIGURE
    if abs(pub - 1) < threshold:
        return NO_CLAIM
    if ours is None:
        return NOT_RUN
    if ours[3] < 2 or min(ours[:3]) <= 0:
        return FEW_REPS
    # the baseline against itself moved as much as the patch claims: this
    # run cannot see the effect either way
    if aa is not None and size(pub) <= aa:
        return IN_AA
    # everything in the published direction: positive = the patch's side
    sign = 1 if pub > 1 else -1
    want = size(pub)
    med = sign * math.log(ours[0])
    lo, hi = sorted((sign * math.log(ours[1]), sign * math.log(ours[2])))
    if lo > 0:
        if aa is not None and med <= aa:
            return IN_AA  # agreement no larger than the A/A noise
        if med > factor * want:
            return LARGER
        if med < want / factor:
            return SMALLER
        return AGREES
    if hi < 0:
        return OPPOSITE
    if hi < want / factor:
        return NO_EFFECT
    return TOO_WIDE


def judge_direction(sign, ours, aa=None):
    """A claim with a direction and no published figure (seed 004's
    grouping on against off: "to improve throughput"): agrees when the
    interval lies on that side of 1 and the median outside the A/A band."""
    if ours is None:
        return NOT_RUN
    if ours[3] < 2 or min(ours[:3]) <= 0:
        return FEW_REPS
    med = sign * math.log(ours[0])
    lo, hi = sorted((sign * math.log(ours[1]), sign * math.log(ours[2])))
    if lo > 0:
        return IN_AA if aa is not None and med <= aa else AGREES
    if hi < 0:
        return OPPOSITE
    return TOO_WIDE


class Judged:
    """One row of a seed's verdict: where it is, its two ratios, its A/A
    band, its class (judge()), and whether this machine had a CPU per
    thread for it."""

    def __init__(self, tid, table, row, merit, threshold):
        self.tid, self.table, self.row, self.merit = tid, table, row, merit
        self.direction = merit.get("direction")
        self.pub = None if self.direction else \
            row.published_ratio(table, merit)
        self.ours = row.ratio(table, merit)
        self.sums = row.sum_ratio(table, merit)
        band = row.aa()
        self.aa = band[0] if band else None
        if self.direction:
            self.cls = judge_direction(1 if self.direction == "higher"
                                       else -1, self.ours, self.aa)
        else:
            self.cls = judge(self.pub, self.ours, threshold, aa=self.aa)
        if row.rep and self.ours and self.cls not in (NO_CLAIM, NO_FIGURE):
            self.cls = FEW_REPS
        self.oversub = row.oversub

    def label(self, with_table=False):
        where = ("table %s, " % self.tid) if with_table else ""
        what = (" %s" % self.merit["label"]) if self.direction else ""
        return where + row_label(self.row) + what + \
            (" †" if self.oversub else "")

    def figures(self):
        fmt = self.merit.get("format", "x")
        if self.direction:
            pub = "published: %s (no figure)" % self.merit.get(
                "claim", self.direction)
        else:
            pub = "published %s" % fmt_ratio(self.pub, fmt)
        here = "here %s" % fmt_ratio_spread(self.ours, fmt)
        if self.sums is not None:
            here = "here %s (ratio of sums, the published form), paired " \
                "median %s" % (fmt_ratio(self.sums, fmt),
                               fmt_ratio_spread(self.ours, fmt))
        aa = ", A/A band ±%s" % fmt_band(self.aa) \
            if self.aa is not None else ""
        return "%s, %s%s" % (pub, here, aa)


def fmt_band(w):
    """An A/A half-width |ln| as a percentage."""
    return "%.1f%%" % (100 * (math.exp(w) - 1))


def tally(rows):
    """reproduced / not reproduced here / inconclusive from rows that
    were run: the side (agrees, or against) with at least half the rows and
    more rows than the other side wins."""
    pro = sum(r.cls in PRO for r in rows)
    con = sum(r.cls in CON for r in rows)
    if pro > con and 2 * pro >= len(rows):
        return "reproduced"
    if con > pro and 2 * con >= len(rows):
        return "not reproduced here"
    return "inconclusive"


VERDICTS = ("reproduced", "not reproduced here", "inconclusive",
            "not testable here", "not run")


class Verdict:
    """A seed's verdict: verdict (VERDICTS), reason (one sentence),
    carried (the rows it rests on), support (other rows shown beside it,
    never deciding)."""

    def __init__(self, verdict, reason, carried, support, with_table):
        self.verdict, self.reason = verdict, reason
        self.carried, self.support = carried, support
        self.with_table = with_table

    def rows_line(self):
        """Which rows carried the verdict, and which only support it."""
        def names(rows):
            return ", ".join("%s (%s)" % (r.label(self.with_table),
                                          SHORT[r.cls]) for r in rows)
        if not self.carried:
            line = "carried by: no row (%s)" % (
                "none with a CPU per thread here"
                if self.verdict == "not testable here"
                else "none of the judged rows was run")
        else:
            line = "carried by: " + names(self.carried)
        if self.support:
            line += "; support: " + names(self.support)
        return line


def verdict_rows(seed, run):
    """The Judged rows of a seed's headline (its "verdict" entry: table or
    tables, merit, optionally rows; "also": more claims that carry, such as
    seed 004's grouping on against off) and of its supporting tables."""
    v = seed["verdict"]
    tables = {t["id"]: t for t in seed["tables"]}
    threshold = v.get("threshold", DEFAULT_THRESHOLD)

    def judged(tid, merit_index, only):
        t = tables[tid]
        merit = t["merits"][merit_index]
        return [Judged(tid, t, row, merit, threshold)
                for row in table_rows(t, run)
                if only is None or row.key in only]
    head = []
    for tid in v.get("tables", [v.get("table")]):
        head += judged(tid, v["merit"], v.get("rows"))
    for a in v.get("also", []):
        head += judged(a["table"], a["merit"], a.get("rows"))
    support = []
    for s in v.get("support", []):
        support += judged(s["table"], s.get("merit", 0), s.get("rows"))
    return head, support


def needs_cpus(claims, rows_needed):
    """The CPUs the patch's regime needs for rows_needed of its claimed
    headline rows (one thread per CPU, as the patch ran), from the
    published table: the rows_needed-th smallest thread count."""
    counts = sorted(r.row.threads for r in claims if r.row.threads)
    if not counts:
        return None
    return counts[min(rows_needed, len(counts)) - 1]


def seed_verdict(seed, run):
    """The verdict of a seed (docs/bench-report.md, "Verdicts").

    The headline rows whose published ratio differs from 1 by the
    threshold (or that claim a direction) are its claims.  Only claimed
    rows with a CPU per thread here, as the patch had there, carry the
    verdict (tally()); oversubscribed rows and the supporting tables' rows
    are shown as support and never decide, either way.  A verdict needs
    two carrying rows unless the seed claims one; with fewer the seed is
    "not testable here", with the CPUs its published table needs.  A row
    whose effect is inside its A/A band (the baseline against itself in
    the same run) is open, so a run as noisy as the effect is
    "inconclusive"."""
    head, extra = verdict_rows(seed, run)
    with_table = "tables" in seed["verdict"] or bool(extra) or \
        bool(seed["verdict"].get("also"))
    claims = [r for r in head if r.cls not in (NO_CLAIM, NO_FIGURE)]
    ran = [r for r in claims if r.cls != NOT_RUN]
    extra = [r for r in extra if r.cls not in (NO_CLAIM, NO_FIGURE, NOT_RUN)]
    if not used_experiments(seed) & set(run.exps):
        return Verdict("not run", "no experiment of this seed in the input",
                       [], [], with_table)
    if not ran:
        return Verdict("not run", "no headline row with a published effect "
                       "of %d%% or more was run here (`make bench-full` runs "
                       "every row)" % round(100 * seed["verdict"].get(
                           "threshold", DEFAULT_THRESHOLD)),
                       [], extra, with_table)
    fit = [r for r in ran if not r.oversub]
    over = [r for r in ran if r.oversub]
    support = over + extra
    rows_needed = 2 if len(claims) >= 2 else 1
    if len(fit) < rows_needed:
        need = needs_cpus(claims, rows_needed)
        smallest = needs_cpus(claims, 1)
        if fit:
            why = ("only one claimed row (%s) has a CPU per thread on the "
                   "%d CPUs here, and no verdict rests on one row of the "
                   "%d the patch claims" % (fit[0].label(with_table),
                                            run.cpus, len(claims)))
        else:
            why = ("every claimed row run here has more threads than the "
                   "%d CPUs here, and the patch had a CPU per thread" %
                   run.cpus)
        start = ("the published rows with an effect start at %d threads; "
                 % smallest) if rows_needed > 1 and smallest != need else ""
        reason = "%s: %sthe patch's regime needs %d or more CPUs%s" % (
            why, start, need,
            " for two of them" if rows_needed > 1 else "")
        return Verdict("not testable here", reason, fit, support, with_table)
    verdict = tally(fit)
    reason = "; ".join("%s: %s (%s)" % (r.label(with_table), r.figures(),
                                        r.cls) for r in fit)
    if verdict == "inconclusive" and any(r.cls == IN_AA for r in fit):
        reason += "; the baseline against itself (A/A) moved as much as " \
            "the effect"
    elif verdict == "not reproduced here":
        reason += "; why it may differ here: " + seed["regime"]
    if not any(r.aa is not None for r in fit):
        reason += "; this run has no A/A control"
    return Verdict(verdict, reason, fit, support, with_table)


def row_label(row):
    if row.rep or row.aggregate:
        return "%s (%d threads)" % (row.key if not row.rep
                                    else "run " + row.key, row.threads)
    if row.key.strip().isdigit():
        return "%s threads" % row.key
    if "thread" in row.key or not row.threads:
        return row.key
    return "%s (%d threads)" % (row.key, row.threads)


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
