#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest lockbench_report: renders the committed fixture (a small real
`lockbench seed all --short --json` run) with `lockbench report` and checks
the output: every published row is in both README.md and index.html,
beside the same row measured here; every seed has a section, a verdict and
a line naming the rows the verdict rests on, in both and in the terminal
(one line per seed, the verdicts the rule gives on the fixture); every plot
exists as a non-empty SVG and PNG and is inlined in the HTML; the HTML has
no Markdown left (backticks); the machine section is there.  Also the
performance map section (check_map_section) with the committed `lockbench
map` results under bench/results/ as fixtures (an older one without CPUs
busy, and one with them).  The verdict rule itself is tested case by case
in tests/report/test_verdict.py.  Prints LOCKBENCH_SKIP (a skip for CTest)
when the report could not make plots because matplotlib is missing (after
the map checks, which need no plots).

usage: check_report.py LOCKBENCH FIXTURE.json OUTDIR
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAPS = [os.path.join(HERE, "..", "results", name) for name in
        ("map-library-short-amd-epyc.json",
         "map-dropin-short-intel-xeon.json")]
VERDICTS = ("reproduced", "not reproduced here", "inconclusive",
            "not testable here", "not run")
# What the rule gives on the committed fixture (a 2-CPU run with its A/A
# controls, on a machine whose other processes kept both CPUs busy: only
# seed 000's and 001's 2-thread rows have a CPU per thread, and their
# effects are inside the A/A band).
FIXTURE_VERDICTS = {"000": "not testable here", "001": "inconclusive",
                    "002": "not testable here", "003": "not testable here",
                    "004": "not testable here"}


def fail(msg):
    print("FAIL lockbench_report: " + msg)
    sys.exit(1)


def check_side_by_side(t, md, page, sid):
    """Each published row, its cells exactly as the patch printed them, in
    one row with our measured cells for it (unless the table is not run):
    README.md and index.html alike."""
    ncols = len(t["columns"]) + (len(t["ours"]["columns"]) +
                                 len(t["ours"].get("extra_columns", {}))
                                 if "ours" in t else 0)
    cells = re.compile(r'<td[^>]*>(.*?)</td>')
    html_rows = [[html.unescape(c) for c in cells.findall(r)]
                 for r in page.split("<tr>")]
    for row in t["rows"]:
        mark = "( †)?" if "ours" in t else ""
        md_re = re.compile(r"^\| %s%s \| %s \|" % (
            re.escape(row[0]), mark,
            re.escape(" | ".join(row[1:]))), re.M)
        found = md_re.search(md)
        if not found:
            fail("published row %r of seed %s table %s missing from "
                 "README.md" % (row, sid, t["id"]))
        line = md[found.start():].split("\n", 1)[0]
        if line.count(" | ") + 1 < ncols:
            fail("seed %s table %s row %r: %d cells, expected at least the "
                 "%d of the published and the measured table side by side "
                 "(and any other lock the experiment ran): %r"
                 % (sid, t["id"], row[0], line.count(" | ") + 1, ncols,
                    line))
        if not any(len(r) >= ncols and r[1:len(row)] == row[1:] and
                   r[0].startswith(row[0]) for r in html_rows):
            fail("published row %r of seed %s missing from index.html (or "
                 "not beside our %d cells)" % (row, sid, ncols - len(row)))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def report(lockbench, fixture, out, maps):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [lockbench, "report", fixture, "-o", out]
    for m in maps:
        cmd += ["--map", m]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(cmd), res.returncode, res.stderr))
    with open(os.path.join(out, "README.md")) as f:
        md = f.read()
    with open(os.path.join(out, "index.html")) as f:
        page = f.read()
    return res, md, page


def md_rows(md, caption):
    """The body rows (lists of cells) of the README table under caption."""
    part = md.split("*%s*" % caption, 1)
    if len(part) != 2:
        fail("README.md has no table %r" % caption)
    rows = []
    for line in part[1].strip().splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def check_map_family(m, family, md, page):
    cells = [c for c in m["cells"] if c["family"] == family]
    base = "pthread-" + family
    names = [lk["lock"] for lk in cells[0]["locks"] if lk["lock"] != base]
    rows = md_rows(md, "%s: throughput / `%s`, median [per-rep min..max]; "
                   "above 1 is faster than glibc" % (family, base))
    if len(rows) != len(cells):
        fail("%s heat table has %d rows for %d cells"
             % (family, len(rows), len(cells)))
    for c, row in zip(cells, rows):
        if not row[0].startswith("%d thr, cs %d, gap %d"
                                 % (c["threads"], c["cs_pauses"],
                                    c["gap_pauses"])):
            fail("%s heat row %r is not cell %r" % (family, row[0], c))
        for lk in c["locks"]:
            if lk["lock"] == base:
                continue
            r = lk["ratio_to_glibc"]
            want = "%.2f [%.2f..%.2f]" % (r["med"], r["min"], r["max"])
            got = row[1 + names.index(lk["lock"])]
            if got != want:
                fail("%s %s %s: heat cell %r, the JSON says %r"
                     % (family, row[0], lk["lock"], got, want))
            cls = ("heat-loss3" if r["med"] < 0.33 else
                   "heat-win2" if r["med"] >= 1.5 else None)
            if cls and '<td class="%s' % cls not in page:
                fail("index.html has no %s cell for ratio %s" % (cls, want))
    shares = md_rows(md, "%s: slowest thread's rate / the mean thread's "
                     "(median; 1 is fair, ! below 0.30)" % family)
    for c, row in zip(cells, shares):
        for i, lk in enumerate(c["locks"]):
            s = lk["slowest_share"]["med"]
            if (s < 0.3) != row[1 + i].endswith("!"):
                fail("%s %s %s: slowest share %s shown as %r"
                     % (family, row[0], lk["lock"], s, row[1 + i]))
    md_rows(md, "%s: wait p99 / `%s`'s wait p99 (medians; below 1 waits "
            "less)" % (family, base))
    cpu = ("%s: CPUs busy, CPU-seconds per second of the run (median; a "
           "lock whose waiters sleep leaves CPUs idle, one whose waiters "
           "spin keeps them busy)" % family)
    if "cpu_busy" not in cells[0]["locks"][0]:
        # Older maps have no such figure, so no such table.
        if cpu in md:
            fail("%s: a CPU table for a map without cpu_busy" % family)
    else:
        rows = md_rows(md, cpu)
        if len(rows) != len(cells):
            fail("%s CPU table has %d rows for %d cells"
                 % (family, len(rows), len(cells)))
        for c, row in zip(cells, rows):
            for i, lk in enumerate(c["locks"]):
                want = "%.2f" % lk["cpu_busy"]["med"]
                if row[1 + i] != want:
                    fail("%s %s %s: CPUs busy %r, the JSON says %r"
                         % (family, row[0], lk["lock"], row[1 + i], want))
    aa = [lk["ratio_to_glibc"]["med"] for c in cells for lk in c["locks"]
          if lk["lock"] == "glibc-again"]
    noise = ("Noise (%s): `glibc-again` (glibc run again, against itself) "
             "scores %.2f..%.2f over %d cells" % (family, min(aa), max(aa),
                                                   len(aa)))
    if noise not in md:
        fail("README.md lacks the A/A noise line %r" % noise)


def check_map_nulls():
    """A lock that made no progress in any rep has null figures (docs/
    performance.md): the map is still valid and its cells show '-'."""
    sys.path.insert(0, HERE)
    import qlock_report
    import report_map
    with open(MAPS[0]) as f:
        m = json.load(f)
    cell = [c for c in m["cells"] if c["family"] == "mutex"][-1]
    stuck = cell["locks"][2]
    for key in ("kops", "ratio_to_glibc", "slowest_share", "wait_p99_ns"):
        stuck[key] = None
    try:
        report_map.check_map(m)
    except ValueError as err:
        fail("a map with a lock that made no progress is refused: %s" % err)
    doc = qlock_report.Doc()
    report_map.add_map_section(doc, MAPS[0], m)
    md = doc.markdown()
    doc.html(None)
    rows = [[c.strip() for c in r.strip("|").split("|")]
            for r in md.splitlines()
            if r.startswith("| " + report_map.cell_label(cell) + " |")]
    # heat table: no glibc column; share: glibc first; p99: glibc's ns
    where = [2, 3, 3]
    if len(rows) != 3 or any(r[i] != "-" for r, i in zip(rows, where)):
        fail("the stuck lock's cells are not '-': %r" % rows)


def check_map_apps():
    """App cells (family "apps") are a section of their own: one row per
    cell labelled by pattern and threads, the locks that ran it, '-' for a
    lock that did not, and their ops per CPU-second against glibc's."""
    sys.path.insert(0, HERE)
    import qlock_report
    import report_map
    with open(MAPS[0]) as f:
        m = json.load(f)
    src = [c for c in m["cells"] if c["family"] == "mutex"][-1]
    want = {"glibc-again": 0.97, "tp-mutex": 0.61}
    for pattern, threads, names in (
            ("holder-yields", 16, ("pthread-mutex", "glibc-again",
                                   "tp-mutex")),
            ("cond-queue", 4, ("pthread-mutex", "glibc-again"))):
        locks = [dict(lk) for lk in src["locks"] if lk["lock"] in names]
        for lk in locks:
            v = want.get(lk["lock"], 1.0)
            lk["ops_per_cpu_s_ratio_to_glibc"] = {"med": v, "min": v,
                                                  "max": v, "n": 3}
        m["cells"].append({"family": "apps", "pattern": pattern,
                           "threads": threads, "setup": {}, "locks": locks})
    try:
        report_map.check_map(m)
    except ValueError as err:
        fail("a map with app cells is refused: %s" % err)
    doc = qlock_report.Doc()
    report_map.add_map_section(doc, MAPS[0], m)
    md = doc.markdown()
    doc.html(None)
    heat = md_rows(md, "apps: throughput / `pthread-mutex`, median [per-rep "
                   "min..max]; above 1 is faster than glibc")
    if [r[0] for r in heat] != ["holder-yields, 16 thr", "cond-queue, 4 thr"]:
        fail("apps heat rows %r" % heat)
    if heat[1][2] != "-" or heat[0][2] == "-":
        fail("apps heat: tp-mutex ran the first cell only: %r" % heat)
    per_cpu = md_rows(md, "apps: operations per CPU-second / "
                      "`pthread-mutex`'s (median ratio; above 1 does the "
                      "work on fewer CPU cycles)")
    if per_cpu != [["holder-yields, 16 thr", "0.97", "0.61"],
                   ["cond-queue, 4 thr", "0.97", "-"]]:
        fail("apps ops per CPU-second rows %r" % per_cpu)
    if "Noise (apps): `glibc-again`" not in md:
        fail("no A/A noise line for the app cells")


def bad_maps(out):
    """A missing, a truncated and a foreign map file, under out."""
    os.makedirs(out, exist_ok=True)
    inputs = {"absent.json": None, "truncated.json": '{"schema": "qlock',
              "foreign.json": '{"schema": "qlock-lockbench/1", "cells": []}'}
    paths = []
    for name, text in inputs.items():
        paths.append(os.path.join(out, name))
        if text is None:
            if os.path.exists(paths[-1]):
                os.remove(paths[-1])
        else:
            with open(paths[-1], "w") as f:
                f.write(text)
    return paths


def check_map_section(res, md, page, bad):
    """The report was given both committed maps and the bad ones: each
    good map is a section, named in the terminal summary; each bad one is
    one line on stderr naming it and a sentence in the report."""
    for path in MAPS:
        if "report: performance map: " + path not in res.stdout:
            fail("the terminal summary does not name map %s" % path)
    for path in MAPS:
        with open(path) as f:
            m = json.load(f)
        title = "### Performance map against glibc (short grid%s)" % (
            ", through the pthread drop-in" if m["dropin"] else "")
        if title not in md or html.escape(title[4:]) not in page:
            fail("no map section %r" % title)
        section = md.split(title)[1].split("\n### ")[0]
        for family in ("mutex", "rwlock"):
            check_map_family(m, family, section, page)
    lines = [ln for ln in res.stderr.splitlines()
             if "performance map" in ln]
    if len(lines) != len(bad) or \
            any(p not in ln for p, ln in zip(bad, lines)):
        fail("bad map files: expected one line naming each of %r, got %r"
             % (bad, res.stderr))
    if md.count("No performance map: ") != len(bad):
        fail("README.md does not say each bad map was left out")
    sys.path.insert(0, HERE)
    import qlock_report
    import report_map
    doc = qlock_report.Doc()
    report_map.add_maps(doc, [])
    if "No performance map: `make map`" not in doc.markdown():
        fail("a report without --map does not say how to get a map")


def check_every_lock(fixture, md):
    """Every lock an experiment ran is a column of the report (seed 000's
    pthread-rwlock-wpref and ck-rwlock, the A/A copies)."""
    with open(fixture) as f:
        doc = json.load(f)
    for e in doc["experiments"]:
        for lock in e["locks"]:
            if "(`%s`)" % lock not in md and "`%s` |" % lock not in md \
                    and "| `%s`" % lock not in md:
                fail("experiment %s: lock %s is not shown" % (e["name"],
                                                               lock))


def main(lockbench, fixture, out):
    check_map_nulls()
    check_map_apps()
    bad = bad_maps(out + "-bad-maps")
    res, md, page = report(lockbench, fixture, out, MAPS + bad)
    check_map_section(res, md, page, bad)
    if "matplotlib is not installed" in res.stderr:
        print("LOCKBENCH_SKIP: no matplotlib for the report's interpreter")
        return 0
    with open(os.path.join(HERE, "published.json")) as f:
        pub = json.load(f)
    summary = res.stdout.splitlines()
    for seed in pub["seeds"]:
        sid = seed["id"]
        for text, where in ((md, "README.md"), (page, "index.html")):
            if not re.search(r"Seed %s: " % sid, text):
                fail("%s has no section for seed %s" % (where, sid))
            if seed["citation"]["subject"].split("]")[-1].strip()[:30] \
                    not in html.unescape(text):
                fail("%s lacks seed %s's citation" % (where, sid))
        section = md.split("## Seed %s:" % sid)[1].split("\n## ")[0]
        want = FIXTURE_VERDICTS[sid]
        if "**Verdict: %s.**" % want not in section:
            fail("seed %s: README.md does not give the verdict %r"
                 % (sid, want))
        found = re.search(r"^Carried by: (.*)\.$", section, re.M)
        if not found:
            fail("seed %s: README.md names no rows the verdict rests on"
                 % sid)
        rows_line = "carried by: " + found.group(1)
        if html.escape(found.group(0)) not in page:
            fail("seed %s: index.html lacks the rows line %r"
                 % (sid, found.group(0)))
        lines = [ln for ln in summary if ln.startswith("seed %s " % sid)]
        if len(lines) != 1 or \
                not lines[0].startswith("seed %s  %s " % (sid, want)) or \
                not lines[0].endswith(rows_line):
            fail("terminal summary has no single line for seed %s with "
                 "verdict %r and its rows: %r" % (sid, want, summary))
        for t in seed["tables"]:
            check_side_by_side(t, md, page, sid)
        for i in range(len(seed["plots"])):
            name = os.path.join(out, "plots", "seed-%s-%d" % (sid, i + 1))
            for ext in (".svg", ".png"):
                if os.path.getsize(name + ext) < 5000:
                    fail("%s%s is (nearly) empty" % (name, ext))
            w, h = png_size(name + ".png")
            if w < 500 or h < 300:
                fail("%s.png is only %dx%d" % (name, w, h))
            if "plots/seed-%s-%d.png" % (sid, i + 1) not in md:
                fail("README.md does not show plot seed-%s-%d" % (sid, i + 1))
    nplots = sum(len(s["plots"]) for s in pub["seeds"])
    if page.count("<svg") != nplots:
        fail("index.html inlines %d SVGs, expected %d"
             % (page.count("<svg"), nplots))
    text = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    if "`" in text:
        at = text.index("`")
        fail("index.html has a Markdown backtick: %r" % text[at - 60:at + 20])
    if re.search(r'(src|href)="(https?:|//|plots/)', page):
        fail("index.html refers to an outside file; it must be self-contained")
    check_every_lock(fixture, md)
    if not re.search(r"Load during the run: load average [\d.]+ before, "
                     r"[\d.]+ after, other processes kept [\d.]+ of the "
                     r"\d+ CPUs busy", md):
        fail("machine section does not give the load during the run")
    if "A/A band ±" not in md or "again (A/A control)" not in md:
        fail("the report shows no A/A band or no A/A column")
    for field in ("CPU model", "NUMA nodes", "kernel", "glibc", "compiler",
                  "command"):
        if "| %s |" % field not in md:
            fail("machine section lacks %r" % field)
    print("lockbench_report: ok (%d seeds, %d plots)" % (len(pub["seeds"]),
                                                        nplots))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
