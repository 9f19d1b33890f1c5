#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest lockbench_report: renders the committed fixture (a small real
`lockbench seed all --short --json` run) with `lockbench report` and checks
the output: every published table cell is in both README.md and index.html,
every seed has a section and a verdict, every plot exists as a non-empty
SVG and PNG and is inlined in the HTML, the terminal shows one line per
seed, and the machine section is there.  Also checks the verdict rule on
made-up ratios.  Prints LOCKBENCH_SKIP (a skip for CTest) when the report
could not make plots because matplotlib is missing.

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
VERDICTS = ("reproduced", "not reproduced", "inconclusive")


def fail(msg):
    print("FAIL lockbench_report: " + msg)
    sys.exit(1)


def check_verdict_rule():
    sys.path.insert(0, HERE)
    import report_model as q
    cases = [
        # published ratio, ours (median, min, max, n), expected
        (0.90, (0.88, 0.85, 0.95, 3), "agrees"),
        (0.90, (1.10, 1.05, 1.20, 3), "opposite"),
        (0.90, (0.95, 0.85, 1.05, 3), "within noise"),
        (1.64, (1.05, 1.01, 1.06, 3), "same side, much smaller"),
        (1.64, (1.70, 1.40, 2.00, 3), "agrees"),
        (1.64, (1.70, 1.40, 2.00, 1), "within noise"),
        (1.01, (1.70, 1.40, 2.00, 3), "no published effect"),
        (0.90, None, "not run"),
    ]
    for pub, ours, want in cases:
        got = q.judge(pub, ours, q.DEFAULT_THRESHOLD)
        if got != want:
            fail("judge(%r, %r) = %r, expected %r" % (pub, ours, got, want))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def main(lockbench, fixture, out):
    check_verdict_rule()
    shutil.rmtree(out, ignore_errors=True)
    res = subprocess.run([lockbench, "report", fixture, "-o", out],
                         capture_output=True, text=True)
    if res.returncode != 0:
        fail("lockbench report exited %d: %s" % (res.returncode, res.stderr))
    if "matplotlib is not installed" in res.stderr:
        print("LOCKBENCH_SKIP: no matplotlib for the report's interpreter")
        return 0
    with open(os.path.join(HERE, "published.json")) as f:
        pub = json.load(f)
    with open(os.path.join(out, "README.md")) as f:
        md = f.read()
    with open(os.path.join(out, "index.html")) as f:
        page = f.read()
    summary = res.stdout.splitlines()
    for seed in pub["seeds"]:
        sid = seed["id"]
        for text, where in ((md, "README.md"), (page, "index.html")):
            if not re.search(r"Seed %s: " % sid, text):
                fail("%s has no section for seed %s" % (where, sid))
            if seed["citation"]["subject"].split("]")[-1].strip()[:30] \
                    not in html.unescape(text):
                fail("%s lacks seed %s's citation" % (where, sid))
        if not re.search(r"\*\*Verdict: (%s)\.\*\*" % "|".join(VERDICTS),
                         md.split("## Seed %s:" % sid)[1]):
            fail("seed %s has no verdict in README.md" % sid)
        lines = [ln for ln in summary if ln.startswith("seed %s " % sid)]
        if len(lines) != 1 or not any(v in lines[0] for v in VERDICTS):
            fail("terminal summary has no single verdict line for seed %s: "
                 "%r" % (sid, summary))
        for t in seed["tables"]:
            for row in t["rows"]:
                md_row = "| " + " | ".join(row) + " |"
                if md_row not in md:
                    fail("published row %r of seed %s table %s missing from "
                         "README.md" % (row, sid, t["id"]))
                html_row = "".join("<td>%s</td>" % c for c in row)
                if html_row not in page:
                    fail("published row %r of seed %s missing from "
                         "index.html" % (row, sid))
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
    if re.search(r'(src|href)="(https?:|//|plots/)', page):
        fail("index.html refers to an outside file; it must be self-contained")
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
