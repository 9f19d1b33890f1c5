#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seed reproduction report: lockbench --json output beside the tables
the seed patches published (published.json), with a computed verdict and a
plot per seed.  Writes DIR/index.html (self-contained: plots inlined as
SVG), DIR/README.md (the same content, plots linked) and DIR/plots/*.svg,
*.png, and prints one line per seed.  Usually run as
`lockbench report FILE.json... -o DIR` (docs/bench-report.md).

Modules: report_model.py (runs, published tables, ratios, the verdict),
report_plots.py (matplotlib), report_map.py (the `lockbench map` section),
report_apps.py (the `make bench-apps` section), this file (the document
and the command).

The verdict rule is report_model.seed_verdict's (docs/bench-report.md).
"""
import argparse
import html
import os
import re
import sys

from report_model import (DEFAULT_THRESHOLD, NO_CLAIM, NO_FIGURE,
                          SIZE_FACTOR, Judged, Run, aa_lock, bad_input,
                          exp_params,
                          figure, fmt_band, fmt_num, fmt_ratio,
                          fmt_ratio_spread, fmt_spread, load_json, row_label,
                          seed_verdict, table_rows, used_experiments)
from report_apps import add_apps, load_apps, make_apps_plot
from report_map import HEAT_CSS, add_maps, load_map
from report_plots import make_plots

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- the document: blocks rendered to both HTML and Markdown --------------


class Doc:
    def __init__(self):
        self.blocks = []

    def h(self, level, text, anchor=None):
        self.blocks.append(("h", level, text, anchor))

    def p(self, text):
        self.blocks.append(("p", text))

    def table(self, header, rows, caption=None, groups=None):
        """groups: [(label, number of columns)], a header row above the
        column names in the HTML (README.md names each column fully)."""
        self.blocks.append(("table", header, rows, caption, groups))

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
                out.append(html_table(b[1], b[2], b[3], b[4]))
            elif b[0] == "img":
                out.append('<figure>%s<figcaption>%s</figcaption></figure>'
                           % (svg_inline(plot_dir, b[1]), inline(b[2])))
        out.append("</body></html>\n")
        return "\n".join(out)


HTML_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>qlock seed reproduction report</title>
<style>
body { font-family: sans-serif; max-width: 70em; margin: 1em auto;
       padding: 0 1em; color: #222; line-height: 1.4; }
div.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 90%; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left;
         vertical-align: top; }
th { background: #eee; }
th.num, td.num { text-align: right; }
th.group { text-align: center; background: #ddd; }
td.pub, th.pub { background: #f6f8ff; }
caption { caption-side: top; text-align: left; font-style: italic; }
code { background: #f3f3f3; padding: 0 0.2em; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
.reproduced { color: #060; font-weight: bold; }
.not-reproduced { color: #a00; font-weight: bold; }
.inconclusive, .not-run, .not-testable { color: #a60; font-weight: bold; }
""" + HEAT_CSS + """</style></head><body>"""


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


def cell_text(c):
    """A table cell is text or (text, css class): the class is HTML's."""
    return c[0] if isinstance(c, tuple) else str(c)


# A cell that starts with a number (a figure, a ratio, a % change, an a/b
# pair), possibly followed by its spread or a note: right-aligned in HTML.
NUMERIC = re.compile(r"^[-+]?(\d[\d,]*(\.\d+)?|\.\d+)[%x]?"
                     r"(/[-+]?[\d.,]+[%x]?)*( .*)?$")


def numeric_columns(header, rows):
    """Which columns hold numbers in every filled cell (not the first, the
    row labels)."""
    cols = []
    for i in range(len(header)):
        cells = [cell_text(r[i]) for r in rows if i < len(r)]
        cells = [c for c in cells if c not in ("", "-")]
        cols.append(i > 0 and bool(cells) and
                    all(NUMERIC.match(c) for c in cells))
    return cols


def html_cell(c, classes, tag="td"):
    classes = list(classes)
    if isinstance(c, tuple) and c[1]:
        classes.insert(0, c[1])
    attr = ' class="%s"' % " ".join(classes) if classes else ""
    return "<%s%s>%s</%s>" % (tag, attr, inline(cell_text(c)), tag)


def md_cell(s):
    return cell_text(s).replace("|", "\\|")


def md_table(header, rows):
    lines = ["| " + " | ".join(md_cell(h) if h else " " for h in header)
             + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(md_cell(c) for c in r) + " |")
    return "\n".join(lines)


def html_table(header, rows, caption, groups=None):
    num = numeric_columns(header, rows)
    # columns of a group labelled "Published..." are the patch's own
    pub = [False] * len(header)
    if groups:
        i = 0
        for label, n in groups:
            for k in range(i, i + n):
                pub[k] = label.startswith("Published")
            i += n

    def cls(i):
        return (["num"] if num[i] else []) + (["pub"] if pub[i] else [])
    out = ['<div class="wide"><table>']
    if caption:
        out.append("<caption>%s</caption>" % inline(caption))
    if groups:
        out.append("<tr>" + "".join(
            '<th class="group" colspan="%d">%s</th>' % (n, inline(label))
            if n > 1 else "<th>%s</th>" % inline(label)
            for label, n in groups) + "</tr>")
    out.append("<tr>" + "".join(html_cell(h, cls(i), "th")
                                for i, h in enumerate(header)) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(html_cell(c, cls(i))
                                    for i, c in enumerate(r)) + "</tr>")
    out.append("</table></div>")
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


def citation(seed):
    c = seed["citation"]
    return "%s, %s, %s (%s)" % (c["subject"], c["author"], c["date"],
                                c["archive"])


def our_columns(t, run=None):
    """The measured columns of a table: the published ones, the extra
    ones, then every other lock its experiments ran (the A/A copy of the
    baseline named so), so no lock a preset runs goes unshown."""
    ours = t["ours"]
    cols = [(name, ours["columns"][name]) for name in t["columns"]
            if name in ours["columns"]]
    cols += list(ours.get("extra_columns", {}).items())
    if run is None:
        return cols
    shown = {lock for _, lock in cols}
    for name in table_experiments(t):
        exp = run.exps.get(name)
        if not exp:
            continue
        aa = aa_lock(exp)
        for lock in exp["locks"]:
            if lock in shown:
                continue
            shown.add(lock)
            if aa and lock == aa[1]:
                cols.append(("%s again (A/A control)" % next(
                    (n for n, lk in cols if lk == aa[0]), aa[0]), lock))
            else:
                cols.append((lock, lock))
    return cols


def table_experiments(t):
    ours = t.get("ours", {})
    names = [ours.get("experiment")] + [r.get("experiment") for r in
                                        ours.get("rows", {}).values()]
    out = []
    for n in names:
        if n and n not in out:
            out.append(n)
    return out


def add_tables(doc, seed, t, run):
    """The published table and the same rows measured here, side by side in
    one table: the row, the patch's cells exactly as it printed them, then
    ours (medians [min-max] over the reps, the lock each column is named)."""
    c = seed["citation"]
    caption = "Published by the patch (%s, %s) beside the same rows " \
        "measured here" % (c["author"], c["date"])
    ncols = len(t["columns"]) - 1
    if "not_run" in t:
        doc.table(t["columns"], t["rows"], "Published by the patch (%s, %s)"
                  % (c["author"], c["date"]))
        if t.get("note"):
            doc.p("The patch: " + t["note"])
        doc.p("Not run here: %s." % t["not_run"])
        return
    rows, exps, over = table_rows(t, run), [], False
    cols = our_columns(t, run)
    body = []
    for row, cells in zip(rows, t["rows"]):
        label = row.key + (" †" if row.oversub else "")
        over |= row.oversub
        if row.missing:
            body.append([label] + cells[1:] + ["-"] * len(cols))
            continue
        if row.exp_name not in exps:
            exps.append(row.exp_name)
        body.append([label] + cells[1:] + [fmt_ours(row, lock)
                                           for _, lock in cols])
    unit = t["ours"].get("unit", "")
    header = [t["columns"][0] or ""] + t["columns"][1:] + \
        ["here: %s (`%s`)" % (n, lock) for n, lock in cols]
    groups = [("", 1), ("Published (patch's machine)", ncols),
              ("Measured here%s" % (", " + unit if unit else ""), len(cols))]
    doc.table(header, body, caption, groups)
    if t.get("note"):
        doc.p("The patch: " + t["note"])
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


def roles(verdict):
    """Row -> its part in the seed's verdict, by (table id, row key)."""
    out = {}
    for r in verdict.carried:
        out[(r.tid, r.row.key, r.merit["label"])] = "carries the verdict"
    for r in verdict.support:
        out[(r.tid, r.row.key, r.merit["label"])] = \
            "support (oversubscribed)" if r.oversub else "support"
    return out


def add_merits(doc, seed, t, run, verdict):
    rows = table_rows(t, run)
    role = roles(verdict)
    threshold = seed["verdict"].get("threshold", DEFAULT_THRESHOLD)
    for merit in t.get("merits", []):
        fmt = merit.get("format", "x")
        body, sums = [], False
        for row in rows:
            j = Judged(t["id"], t, row, merit, threshold)
            cls = j.cls
            if row.rep and j.ours and cls not in (NO_CLAIM, NO_FIGURE):
                cls = "one run: not judged"
            if j.direction:
                pub = "%s (no figure)" % merit.get("claim", j.direction)
            else:
                pub = fmt_ratio(j.pub, fmt)
            here = fmt_ratio(j.ours[0], fmt) if row.rep and j.ours \
                else fmt_ratio_spread(j.ours, fmt)
            if merit.get("not_measured"):
                here, cls = "not measured: %s" % merit["not_measured"], "-"
            if j.sums is not None:
                sums = True
                here = "%s ratio of sums; paired median %s" % (
                    fmt_ratio(j.sums, fmt), here)
            body.append([row_label(row) + (" †" if row.oversub else ""),
                         pub, here,
                         "±" + fmt_band(j.aa) if j.aa is not None else "-",
                         cls,
                         role.get((t["id"], row.key, merit["label"]), "-")])
        doc.table(["row", "published", "here: median of the paired per-rep "
                   "ratios [min..max]", "A/A band", "here vs published",
                   "in the verdict"], body,
                  "Figure of merit: %s" % merit["label"])
        if sums:
            doc.p("The total rows are a ratio of sums in the patch (its "
                  "\"Totally\" line); here that ratio of the summed reps is "
                  "shown as published, and the median of the paired per-rep "
                  "ratios beside it is what the verdict judges.")


def verdict_class(verdict):
    return verdict.replace(" here", "").replace(" ", "-")


def add_seed(doc, seed, run, plot_dir, verdict):
    doc.h(2, "Seed %s: %s" % (seed["id"], seed["title"]), "seed-" + seed["id"])
    doc.p("**%s**, %s, %s (%s)." % (
        seed["citation"]["subject"], seed["citation"]["author"],
        seed["citation"]["date"], seed["citation"]["archive"]))
    doc.p(seed["changed"])
    doc.p("**Verdict: %s.** %s." % (verdict.verdict, verdict.reason))
    line = verdict.rows_line()
    doc.p(line[0].upper() + line[1:] + ".")
    doc.p("Published on: %s.  Why it may differ here: %s." % (
        seed["machine"], seed["regime"]))
    for i, plot in enumerate(seed.get("plots", [])):
        name = "seed-%s-%d" % (seed["id"], i + 1)
        if plot_dir and os.path.exists(os.path.join(plot_dir, name + ".svg")):
            doc.img(name, plot_caption(seed, plot))
    for t in seed["tables"]:
        doc.h(3, t["caption"])
        add_tables(doc, seed, t, run)
        if "not_run" not in t:
            add_merits(doc, seed, t, run, verdict)
    add_extra_experiments(doc, seed, run)


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
    kinds = {"ratio_lines": "published ratio (line) beside ours (median "
             "of the paired per-rep ratios, bars: their min..max), log "
             "scale; an interval end beyond the axis is marked with its "
             "value",
             "ratio_bars": "the published ratio of the summed runs beside "
             "ours, as a ratio of the summed reps and as the median of the "
             "paired per-rep ratios (bars: their min..max), log scale",
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


def add_machine(doc, run, maps):
    doc.h(2, "Machine", "machine")
    header = ["", ] + [os.path.basename(p) for p, _ in run.hosts]
    body = [[label] + [str(h.get(key)) if h.get(key) is not None
                       else "unknown" for _, h in run.hosts]
            for key, label in HOST_FIELDS]
    doc.table(header, body, "Where the measured figures come from")
    if run.load:
        doc.p("Load during the run: " + load_line(run) + ".")
    else:
        doc.p("Load during the run: not recorded (a lockbench run from "
              "before the load was recorded).")
    add_maps(doc, maps)


def load_line(run):
    """The machine's load over the run, from the JSON's "load" objects."""
    parts = []
    for path, ld in run.load:
        b, a = ld.get("loadavg_before"), ld.get("loadavg_after")
        text = []
        if b and a:
            text.append("load average %.2f before, %.2f after" % (b[0], a[0]))
        other = ld.get("other_busy_cpus")
        if other is not None:
            text.append("other processes kept %.2f of the %d CPUs busy over "
                        "the %.0f s (lockbench itself %.2f)" % (
                            other, run.cpus, ld.get("wall_s") or 0,
                            ld.get("own_busy_cpus") or 0))
        tag = ("quiet" if other is not None and other < 0.25 else
               "loaded" if other is not None else None)
        line = ", ".join(text) or "unreadable"
        if tag:
            line += " (%s)" % tag
        parts.append(line + ("" if len(run.load) == 1 else
                             " [%s]" % os.path.basename(path)))
    return "; ".join(parts)


# ---- main --------------------------------------------------------------------


def build_doc(pub, run, plot_dir, plot_problem, maps, verdicts):
    doc = Doc()
    doc.h(1, "qlock: seed reproduction report")
    doc.p("The five kernel patches qlock reproduces, each with the table it "
          "published (exactly as the patch gives it) beside the same rows "
          "measured here by `lockbench`, the patch's figure of merit side by "
          "side, and a verdict computed from the data (docs/bench-report.md, "
          "\"Verdicts\").  A ratio is after / before of the patch, and the "
          "statistic is the **median of the paired per-rep ratios** (rep i "
          "of both locks ran back to back in one round) with its interval, "
          "the smallest and largest of those ratios (it holds their median "
          "with probability 75%% at 3 reps, 94%% at 5).  Each carrying row "
          "also has an **A/A band**: the baseline run a second time in the "
          "same rounds, against itself; an effect inside it is noise.  A row "
          "**agrees** when its ratio has the published sign, a size within "
          "%gx..%gx of the published one (size: |ln ratio|), an interval "
          "that excludes 1 and a median outside the A/A band.  Only rows "
          "with a CPU per thread (as the patch had) carry a verdict, two of "
          "them unless the patch claims one: **reproduced** (they agree), "
          "**not reproduced here** (they show no effect, the opposite sign "
          "or a size outside that factor; the reason says why this machine "
          "may differ), **inconclusive** (intervals too wide, or effects "
          "inside the A/A band), **not testable here** (too few such rows; "
          "the reason names the CPUs the published table needs) or **not "
          "run**.  Oversubscribed rows are shown as support and never decide, "
          "either way." % (1 / SIZE_FACTOR, SIZE_FACTOR))
    if run.load:
        doc.p("**Machine load during the run:** " + load_line(run) + ".")
    doc.table(["seed", "patch", "verdict", "reason"],
              [[s["id"], s["title"],
                (verdicts[s["id"]].verdict,
                 verdict_class(verdicts[s["id"]].verdict)),
                verdicts[s["id"]].reason] for s in pub["seeds"]], "Summary")
    doc.table(["seed", "rows the verdict rests on († oversubscribed here)"],
              [[s["id"], verdicts[s["id"]].rows_line()]
               for s in pub["seeds"]], "Which rows carried each verdict")
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
    add_machine(doc, run, maps)
    if run.notes:
        doc.p("lockbench notes: " + "; ".join(run.notes))
    return doc


class Parser(argparse.ArgumentParser):
    """Usage errors in one line, status 2, as lockbench's own."""

    def error(self, message):
        bad_input("%s (usage: lockbench report FILE.json... -o DIR; "
                  "--help)" % message)


def writable_dir(out):
    """Makes DIR (-o) and checks a file can be written in it; one line and
    status 2 when not."""
    try:
        os.makedirs(out, exist_ok=True)
        probe = os.path.join(out, ".qlock-report-probe")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as err:
        bad_input("-o %s: cannot write the report there: %s" % (
            out, err.strerror or err))


def main(argv):
    ap = Parser(
        prog="lockbench report",
        description="Render the seed reproduction report from lockbench "
        "--json output (docs/bench-report.md).")
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("-o", "--output", required=True, metavar="DIR")
    ap.add_argument("--published", default=os.path.join(HERE,
                                                        "published.json"))
    ap.add_argument("--map", metavar="MAP.json", action="append", default=[],
                    help="a `lockbench map --json` result for the machine "
                    "section (repeatable); one that is missing or malformed "
                    "is named in one line and left out")
    ap.add_argument("--apps", metavar="APPS.json", default=None,
                    help="a `make bench-apps` result for the application "
                    "benchmark section; one that is missing or malformed is "
                    "named in one line and left out")
    args = ap.parse_args(argv)
    pub = load_json(args.published)
    run = Run(args.files)
    maps = [(p,) + load_map(p) for p in args.map]
    out = args.output
    plot_dir = os.path.join(out, "plots")
    writable_dir(out)
    try:
        return render(args, pub, run, maps, out, plot_dir)
    except OSError as err:
        bad_input("-o %s: cannot write the report there: %s (%s)" % (
            out, err.strerror or err, err.filename or out))


def render(args, pub, run, maps, out, plot_dir):
    verdicts = {s["id"]: seed_verdict(s, run) for s in pub["seeds"]}
    problem = make_plots(pub, run, plot_dir)
    doc = build_doc(pub, run, plot_dir, problem, maps, verdicts)
    apps, apps_why = load_apps(args.apps) if args.apps else (None, None)
    if apps:
        apps_why = make_apps_plot(apps, plot_dir)
    add_apps(doc, args.apps, apps, apps_why)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(doc.markdown())
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(doc.html(plot_dir))
    index = os.path.join(out, "index.html")
    for s in pub["seeds"]:
        v = verdicts[s["id"]]
        print("seed %s  %-19s  %s#seed-%s  %s" % (
            s["id"], v.verdict, index, s["id"], v.rows_line()))
    if problem:
        print("report: no plots: " + problem, file=sys.stderr)
    for path, _, why in maps:
        if why:
            print("report: performance map left out: %s (`make map` writes "
                  "one)" % why, file=sys.stderr)
        else:
            print("report: performance map: " + path)
    if args.apps:
        print("report: application benchmark: %s" % (
            args.apps if apps else "left out: " + apps_why),
            file=sys.stdout if apps else sys.stderr)
    print("report: %s (also README.md%s)" % (index,
                                            "" if problem else ", plots/"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
