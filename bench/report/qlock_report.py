#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seed reproduction report: lockbench --json output beside the tables
the seed patches published (published.json), with a computed verdict and a
plot per seed.  Writes DIR/index.html (self-contained: plots inlined as
SVG), DIR/README.md (the same content, plots linked) and DIR/plots/*.svg,
*.png, and prints one line per seed.  Usually run as
`lockbench report FILE.json... -o DIR` (docs/bench-report.md).

Verdict of a seed: each row of its chosen published table whose figure of
merit (after/before) differs from 1 by at least the threshold (3%) is a
claim; our paired ratio for that row agrees when its whole min..max spread
lies on the claimed side of 1, is opposite when it lies wholly on the other
side, and is within noise when it covers 1.  reproduced: some rows agree,
none is opposite, and agreeing rows outnumber the noisy ones; not
reproduced: the same with opposite; otherwise inconclusive.
"""
import argparse
import html
import json
import math
import os
import statistics
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
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


def seed_verdict(seed, run):
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
                if example is None or (j == "agrees") > (example[0] ==
                                                         "agrees"):
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


# ---- the document: blocks rendered to both HTML and Markdown --------------


class Doc:
    def __init__(self):
        self.blocks = []

    def h(self, level, text, anchor=None):
        self.blocks.append(("h", level, text, anchor))

    def p(self, text):
        self.blocks.append(("p", text))

    def table(self, header, rows, caption=None):
        self.blocks.append(("table", header, rows, caption))

    def img(self, name, alt):
        self.blocks.append(("img", name, alt))

    def markdown(self):
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "table":
                if b[3]:
                    out.append("*%s*" % b[3])
                out.append(md_table(b[1], b[2]))
            elif b[0] == "img":
                out.append("![%s](plots/%s.png)" % (b[2], b[1]))
        return "\n\n".join(out) + "\n"

    def html(self, plot_dir):
        out = [HTML_HEAD]
        for b in self.blocks:
            if b[0] == "h":
                anchor = ' id="%s"' % b[3] if b[3] else ""
                out.append("<h%d%s>%s</h%d>" % (b[1], anchor, inline(b[2]),
                                                b[1]))
            elif b[0] == "p":
                out.append("<p>%s</p>" % inline(b[1]))
            elif b[0] == "table":
                out.append(html_table(b[1], b[2], b[3]))
            elif b[0] == "img":
                out.append('<figure>%s<figcaption>%s</figcaption></figure>'
                           % (svg_inline(plot_dir, b[1]), html.escape(b[2])))
        out.append("</body></html>\n")
        return "\n".join(out)


HTML_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>qlock seed reproduction report</title>
<style>
body { font-family: sans-serif; max-width: 70em; margin: 1em auto;
       padding: 0 1em; color: #222; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 90%; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: right; }
th { background: #eee; }
td:first-child, th:first-child { text-align: left; }
caption { caption-side: top; text-align: left; font-style: italic; }
code { background: #f3f3f3; padding: 0 0.2em; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
.reproduced { color: #060; font-weight: bold; }
.not-reproduced { color: #a00; font-weight: bold; }
.inconclusive { color: #a60; font-weight: bold; }
</style></head><body>"""


def inline(text):
    """Markdown's `code` and **bold** in a paragraph, for HTML."""
    out, bold = [], False
    parts = html.escape(text).split("`")
    for i, part in enumerate(parts):
        if i % 2:
            out.append("<code>%s</code>" % part)
            continue
        segs = part.split("**")
        for j, seg in enumerate(segs):
            if j:
                bold = not bold
                out.append("<b>" if bold else "</b>")
            out.append(seg)
    return "".join(out)


def md_cell(s):
    return str(s).replace("|", "\\|")


def md_table(header, rows):
    lines = ["| " + " | ".join(md_cell(h) if h else " " for h in header)
             + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(md_cell(c) for c in r) + " |")
    return "\n".join(lines)


def html_table(header, rows, caption):
    out = ["<table>"]
    if caption:
        out.append("<caption>%s</caption>" % inline(caption))
    out.append("<tr>" + "".join("<th>%s</th>" % html.escape(str(h))
                                for h in header) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % inline(str(c))
                                    for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def svg_inline(plot_dir, name):
    """The SVG of a plot, its ids prefixed with the plot's name: inlined
    SVGs share one id space, and two plots' clip paths must not mix."""
    with open(os.path.join(plot_dir, name + ".svg")) as f:
        svg = f.read()
    svg = svg[svg.index("<svg"):]
    for a, b in (('id="', 'id="%s-'), ('href="#', 'href="#%s-'),
                 ("url(#", "url(#%s-")):
        svg = svg.replace(a, b % name)
    return svg


# ---- per-seed sections -----------------------------------------------------


def add_published(doc, seed, t):
    c = seed["citation"]
    doc.table(t["columns"], t["rows"],
              "Published: %s (%s, \"%s\", %s)" % (
                  t["caption"], c["author"], c["subject"], c["date"]))
    if t.get("note"):
        doc.p("The patch: " + t["note"])


def our_columns(t):
    ours = t["ours"]
    cols = [(name, ours["columns"][name]) for name in t["columns"]
            if name in ours["columns"]]
    return cols + list(ours.get("extra_columns", {}).items())


def add_ours(doc, t, run):
    rows, exps, over = table_rows(t, run), [], False
    cols = our_columns(t)
    body = []
    for row in rows:
        label = row.key + (" †" if row.oversub else "")
        over |= row.oversub
        if row.missing:
            body.append([label] + ["-"] * len(cols))
            continue
        if row.exp_name not in exps:
            exps.append(row.exp_name)
        body.append([label] + [fmt_ours(row, lock) for _, lock in cols])
    header = [t["columns"][0] or ""] + ["%s (`%s`)" % (n, lock)
                                        for n, lock in cols]
    unit = t["ours"].get("unit", "")
    doc.table(header, body, "Measured here%s" % (", " + unit if unit else ""))
    notes = [exp_params(run.exps[e]) for e in exps]
    if over:
        notes.append("† more threads than the %d online CPUs here: "
                     "oversubscribed" % run.cpus)
    notes += missing_notes(rows)
    for n in notes:
        doc.p(n)


def fmt_ours(row, lock):
    s = row.ours(lock)
    if s and row.aggregate == "sum":
        return "%s (sum of %d runs)" % (fmt_num(s[0]), s[3])
    return fmt_spread(s)


def missing_notes(rows):
    out = []
    no_thr = [r for r in rows if r.missing == "threads"]
    if no_thr:
        out.append("rows %s: not in this run (it ran %s threads; `make "
                   "bench-full` runs every row)" % (
                       ", ".join(r.key for r in no_thr),
                       ", ".join(map(str, no_thr[0].exp["threads"]))))
    no_rep = [r.key for r in rows if r.missing == "reps"]
    if no_rep:
        out.append("runs %s: this run made fewer reps" % ", ".join(no_rep))
    for r in rows:
        if r.missing and r.missing not in ("threads", "reps"):
            out.append("row %s: %s" % (r.key, r.missing))
    return out


def add_merits(doc, seed, t, run):
    rows = table_rows(t, run)
    for merit in t.get("merits", []):
        fmt = merit.get("format", "x")
        body = []
        for row in rows:
            pub, ours = row.published_ratio(t, merit), row.ratio(t, merit)
            j = judge(pub, ours, seed["verdict"].get("threshold",
                                                     DEFAULT_THRESHOLD))
            if row.rep and ours:
                j = "one run: not judged"
            body.append([row_label(row), fmt_ratio(pub, fmt),
                         fmt_ratio(ours[0], fmt) if row.rep and ours
                         else fmt_ratio_spread(ours, fmt), j])
        doc.table(["row", "published", "here: median [per-rep min..max]",
                   "here vs published"], body,
                  "Figure of merit: %s" % merit["label"])


def add_seed(doc, seed, run, plot_dir, verdict):
    c = seed["citation"]
    doc.h(2, "Seed %s: %s" % (seed["id"], seed["title"]), "seed-" + seed["id"])
    doc.p("**%s**, %s, %s (%s)." % (c["subject"], c["author"], c["date"],
                                   c["source"]))
    doc.p(seed["changed"])
    doc.p("**Verdict: %s.** %s." % (verdict[0], verdict[1]))
    doc.p("Published on: %s.  Why it may differ here: %s." % (
        seed["machine"], seed["regime"]))
    for i, plot in enumerate(seed.get("plots", [])):
        name = "seed-%s-%d" % (seed["id"], i + 1)
        if plot_dir and os.path.exists(os.path.join(plot_dir, name + ".svg")):
            doc.img(name, plot_caption(seed, plot))
    for t in seed["tables"]:
        doc.h(3, t["caption"])
        add_published(doc, seed, t)
        if "not_run" in t:
            doc.p("Not run here: %s." % t["not_run"])
            continue
        add_ours(doc, t, run)
        add_merits(doc, seed, t, run)
    add_extra_experiments(doc, seed, run)


def used_experiments(seed):
    names = set()
    for t in seed["tables"]:
        ours = t.get("ours", {})
        names.add(ours.get("experiment"))
        names |= {r.get("experiment") for r in ours.get("rows", {}).values()}
    return names


def add_extra_experiments(doc, seed, run):
    used = used_experiments(seed)
    for name, exp in run.exps.items():
        if name.startswith("seed-%s" % seed["id"]) and name not in used:
            doc.h(3, "Measured here without a published counterpart: "
                  + exp["title"])
            add_plain_experiment(doc, exp, run)


def add_plain_experiment(doc, exp, run):
    header = ["threads"] + ["`%s`" % lk for lk in exp["locks"]]
    body = []
    for th in exp["threads"]:
        mark = " †" if run.cpus and th > run.cpus else ""
        body.append([str(th) + mark] +
                    [fmt_spread(figure(exp, lk, th, "primary"))
                     for lk in exp["locks"]])
    doc.table(header, body, "%s (%s)" % (exp["title"], exp["primary"]["unit"]))
    doc.p(exp_params(exp))


def plot_caption(seed, plot):
    kinds = {"ratio_lines": "published ratio (line) beside ours (median, "
             "bars: per-rep min..max)",
             "ratio_bars": "published ratio beside ours (bars: per-rep "
             "min..max)",
             "fairness": "per-thread rate spread (min..max relative to the "
             "mean): published and here",
             "rw_rates": "reader and writer rates per thread, published and "
             "here (log scale; 0 drawn at the bottom)"}
    return "Seed %s: %s" % (seed["id"], kinds[plot["kind"]])


# ---- machine section ----------------------------------------------------------


HOST_FIELDS = [("cpu_model", "CPU model"), ("online_cpus", "online CPUs"),
               ("physical_cores", "physical cores"),
               ("numa_nodes", "NUMA nodes"), ("kernel", "kernel"),
               ("glibc", "glibc"), ("compiler", "compiler"),
               ("command", "command"), ("date", "date (UTC)")]


def add_machine(doc, run, map_doc):
    doc.h(2, "Machine", "machine")
    header = ["", ] + [os.path.basename(p) for p, _ in run.hosts]
    body = [[label] + [str(h.get(key)) if h.get(key) is not None
                       else "unknown" for _, h in run.hosts]
            for key, label in HOST_FIELDS]
    doc.table(header, body, "Where the measured figures come from")
    add_map(doc, map_doc)


def add_map(doc, map_doc):
    """HOOK for `lockbench map` (perf branch): its heat table goes here.
    Until its JSON format is merged this renders the generic shape
    {"title", "columns": [...], "rows": [{"label", "values": [...]}]}."""
    if map_doc is None:
        return
    doc.h(3, map_doc.get("title", "Performance map"))
    rows = [[r.get("label", "")] + [fmt_num(v) if isinstance(v, (int, float))
                                    else str(v) for v in r.get("values", [])]
            for r in map_doc.get("rows", [])]
    doc.table([""] + list(map_doc.get("columns", [])), rows)


# ---- plots -------------------------------------------------------------------

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def plot_ratio_lines(plt, seed, plot, run):
    tables = {t["id"]: t for t in seed["tables"]}
    ids = plot.get("tables", [plot.get("table")])
    fig, axes = plt.subplots(1, len(ids), figsize=(6.4 * len(ids), 4.4),
                             squeeze=False)
    for ax, tid in zip(axes[0], ids):
        t = tables[tid]
        rows = table_rows(t, run)
        # Rows named by a thread count ("9 threads (1 socket)") go on a
        # thread axis; others (reader percentages) are categories.
        counts = [leading_int(r.key) for r in rows]
        numeric = None not in counts and len(set(counts)) == len(counts)
        xs = counts if numeric else list(range(len(rows)))
        drawn = set()
        for m, merit in enumerate(t["merits"]):
            color = COLORS[m % len(COLORS)]
            pub = [r.published_ratio(t, merit) for r in rows]
            ax.plot(xs, pub, "-o", color=color, label="%s, published"
                    % merit["label"])
            cols = t["ours"]["columns"]
            locks = (cols[col_ref(merit["after"])[0]],
                     cols[col_ref(merit["before"])[0]])
            pts = [(x, r.ratio(t, merit)) for x, r in zip(xs, rows)]
            pts = [(x, s) for x, s in pts if s]
            if pts and locks not in drawn:  # two merits may be one ratio here
                drawn.add(locks)
                ax.errorbar([x for x, _ in pts], [s[0] for _, s in pts],
                            yerr=[[s[0] - s[1] for _, s in pts],
                                  [s[2] - s[0] for _, s in pts]],
                            fmt="s--", color=color, mfc="white", capsize=4,
                            label="%s / %s, here" % locks)
        ax.axhline(1, color="grey", lw=0.8)
        if numeric:
            if plot.get("logx"):
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels([str(x) for x in xs])
            ax.set_xlabel("threads")
            if run.cpus and max(xs) > run.cpus:
                lo, hi = ax.get_xlim()
                ax.axvspan(max(run.cpus + 0.5, lo), hi, color="#eee",
                           zorder=0, label="oversubscribed here")
                ax.set_xlim(lo, hi)
        else:
            ax.set_xticks(xs)
            ax.set_xticklabels([r.key for r in rows])
        ax.set_ylabel(wrapped(plot.get("ylabel", "ratio"), 45), fontsize=9)
        ax.set_title(wrapped(t["caption"], 75), fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def plot_ratio_bars(plt, seed, plot, run):
    tables = {t["id"]: t for t in seed["tables"]}
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for i, tid in enumerate(plot["tables"]):
        t = tables[tid]
        merit = t["merits"][0]
        row = table_rows(t, run)[-1]  # the total
        pub, ours = row.published_ratio(t, merit), row.ratio(t, merit)
        ax.bar(i - 0.2, pub, 0.4, color=COLORS[0],
               label="published" if i == 0 else None)
        if ours:
            ax.bar(i + 0.2, ours[0], 0.4, color=COLORS[1],
                   yerr=[[ours[0] - ours[1]], [ours[2] - ours[0]]],
                   capsize=6, label="here" if i == 0 else None)
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xticks(range(len(plot["tables"])))
    ax.set_xticklabels(plot["labels"])
    ax.set_ylabel(plot["ylabel"])
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_fairness(plt, seed, plot, run):
    t = {t["id"]: t for t in seed["tables"]}[plot["table"]]
    rows = {r.key: r for r in table_rows(t, run)}
    cols = [c for c in t["columns"][1:] if c in t["ours"]["columns"]]
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    for i, col in enumerate(cols):
        lock = t["ours"]["columns"][col]
        for k, (src, color) in enumerate((("published", COLORS[0]),
                                          ("here", COLORS[1]))):
            if src == "published":
                vals = [rows["Per-thread %s/sec" % w].published(t, col)
                        for w in ("min", "avg", "max")]
            else:
                vals = [rows["Per-thread %s/sec" % w].ours(lock)
                        for w in ("min", "avg", "max")]
                vals = [v[0] if v else None for v in vals]
            if None in vals or not vals[1]:
                continue
            lo, hi = vals[0] / vals[1], vals[2] / vals[1]
            x = i + (k - 0.5) * 0.3
            ax.vlines(x, lo, hi, color=color, lw=6,
                      label=src if i == 0 else None)
            ax.plot([x], [1], "_", color="black", ms=14)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols)
    ax.set_ylabel("per-thread ops/s relative to the mean (min..max)")
    ax.set_title("Fairness, %s threads" % next(iter(rows.values())).threads,
                 fontsize=9)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_rw_rates(plt, seed, plot, run):
    tables = {t["id"]: t for t in seed["tables"]}
    fig, axes = plt.subplots(1, len(plot["tables"]),
                             figsize=(6.8 * len(plot["tables"]), 4.8),
                             squeeze=False)
    floor = 1.0
    for ax, tid in zip(axes[0], plot["tables"]):
        t = tables[tid]
        rows = table_rows(t, run)
        cols = [c for c in t["columns"][1:] if c in t["ours"]["columns"]]
        loads = [r.key.split("L=")[1] for r in rows if r.key.startswith("R")]
        width, labels = 0.2, []
        for g, (col, load) in enumerate((c, ld) for c in cols for ld in loads):
            labels.append("%s\nL=%s" % (col, load))
            bars = []
            for side in ("Reader", "Writer"):
                row = next(r for r in rows
                           if r.key == "%s rate, L=%s" % (side, load))
                s = row.ours(t["ours"]["columns"][col])
                bars.append((side, "published", row.published(t, col)))
                bars.append((side, "here", s[0] if s else None))
            for b, (side, src, v) in enumerate(bars):
                color = COLORS[0] if src == "published" else COLORS[1]
                hatch = "" if side == "Reader" else "//"
                val = max(v, floor) if v is not None else None
                if val is None:
                    continue
                ax.bar(g + (b - 1.5) * width, val, width, color=color,
                       alpha=1.0 if side == "Reader" else 0.55, hatch=hatch,
                       edgecolor="black", lw=0.3,
                       label="%s rate, %s" % (side.lower(), src)
                       if g == 0 else None)
                if v == 0:
                    ax.text(g + (b - 1.5) * width, floor * 1.3, "0",
                            ha="center", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(bottom=floor)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("ops/s per thread")
        ax.set_title(wrapped(t["caption"], 85), fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    return fig


def wrapped(text, width):
    return "\n".join(textwrap.wrap(text, width))


PLOTTERS = {"ratio_lines": plot_ratio_lines, "ratio_bars": plot_ratio_bars,
            "fairness": plot_fairness, "rw_rates": plot_rw_rates}


def make_plots(pub, run, plot_dir):
    """SVG and PNG per plot; returns None, or why no plots were made."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("matplotlib is not installed for %s (Debian: apt-get install "
                "python3-matplotlib)" % sys.executable)
    matplotlib.rcParams["svg.hashsalt"] = "qlock"  # stable SVG ids
    matplotlib.rcParams["svg.fonttype"] = "path"   # no font needed offline
    os.makedirs(plot_dir, exist_ok=True)
    for seed in pub["seeds"]:
        for i, plot in enumerate(seed.get("plots", [])):
            fig = PLOTTERS[plot["kind"]](plt, seed, plot, run)
            fig.suptitle("seed %s: %s" % (seed["id"], seed["title"]),
                         fontsize=10)
            # room for the suptitle, and for a figure-wide legend below
            fig.tight_layout(rect=(0, 0.08 if fig.legends else 0, 1, 0.96))
            name = os.path.join(plot_dir, "seed-%s-%d" % (seed["id"], i + 1))
            fig.savefig(name + ".svg", metadata={"Date": None})
            fig.savefig(name + ".png", dpi=110)
            plt.close(fig)
    return None


# ---- main --------------------------------------------------------------------


def build_doc(pub, run, plot_dir, plot_problem, map_doc, verdicts):
    doc = Doc()
    doc.h(1, "qlock: seed reproduction report")
    doc.p("The five kernel patches qlock reproduces, each with the table it "
          "published (exactly as the patch gives it), the same rows measured "
          "here by `lockbench`, the patch's figure of merit side by side, "
          "and a verdict computed from the data: **reproduced** (the "
          "per-rep spread of our ratio lies on the patch's side), **not "
          "reproduced** (on the other side) or **inconclusive** (the spread "
          "covers no change, or the rows were not run).  A ratio is after / "
          "before of the patch, median of the reps with the smallest and "
          "largest per-rep ratio (reps of both locks ran back to back).")
    doc.table(["seed", "patch", "verdict", "reason"],
              [[s["id"], s["title"], verdicts[s["id"]][0], verdicts[s["id"]][1]]
               for s in pub["seeds"]], "Summary")
    if plot_problem:
        doc.p("No plots: " + plot_problem + ".")
    for seed in pub["seeds"]:
        add_seed(doc, seed, run, None if plot_problem else plot_dir,
                 verdicts[seed["id"]])
    others = [e for n, e in run.exps.items() if not n.startswith("seed-")]
    if others:
        doc.h(2, "Other experiments in the input", "other")
        for exp in others:
            add_plain_experiment(doc, exp, run)
    add_machine(doc, run, map_doc)
    if run.notes:
        doc.p("lockbench notes: " + "; ".join(run.notes))
    return doc


def main(argv):
    ap = argparse.ArgumentParser(
        prog="lockbench report",
        description="Render the seed reproduction report from lockbench "
        "--json output (docs/bench-report.md).")
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("-o", "--output", required=True, metavar="DIR")
    ap.add_argument("--published", default=os.path.join(HERE,
                                                        "published.json"))
    ap.add_argument("--map", metavar="MAP.json",
                    help="a `lockbench map` result for the machine section")
    args = ap.parse_args(argv)
    pub = load_json(args.published)
    run = Run(args.files)
    map_doc = load_json(args.map) if args.map else None
    out = args.output
    plot_dir = os.path.join(out, "plots")
    os.makedirs(out, exist_ok=True)
    verdicts = {s["id"]: seed_verdict(s, run) for s in pub["seeds"]}
    problem = make_plots(pub, run, plot_dir)
    doc = build_doc(pub, run, plot_dir, problem, map_doc, verdicts)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(doc.markdown())
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(doc.html(plot_dir))
    index = os.path.join(out, "index.html")
    for s in pub["seeds"]:
        print("seed %s  %-14s  %s#seed-%s" % (s["id"], verdicts[s["id"]][0],
                                              index, s["id"]))
    if problem:
        print("report: no plots: " + problem, file=sys.stderr)
    print("report: %s (also README.md%s)" % (index,
                                            "" if problem else ", plots/"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
