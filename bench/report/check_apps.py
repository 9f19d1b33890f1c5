#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_apps_rules: the application benchmark's rules and its report
section (docs/bench-apps.md).
  check_apps.py APPS-FIXTURE.json OUTDIR
1. the application benchmark's (bench/apps/) verdict (also for a drop-in
   run that timed out), lock-bound rule, ratio direction, quantiles and
   --stats parser, on made-up numbers;
2. the report rendered with --apps FIXTURE: one row per program of the
   fixture, each with the verdict, ratio and A/A band of the JSON; a
   skipped program says why; the plot exists when matplotlib is installed;
3. a missing and a foreign --apps file: one line each, report still written.
Prints what failed and exits 1, else "ok".
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "apps"))
import apps_run  # noqa: E402
import apps_stats as st  # noqa: E402
from apps_programs import BASELINE  # noqa: E402
from apps_table import table  # noqa: E402
from report_apps import band_cell, fmt_s  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def s(med, p25=None, p75=None):
    return {"med": med, "p25": med if p25 is None else p25,
            "p75": med if p75 is None else p75, "min": 0, "max": 0, "n": 5}


def rules():
    aa_wide, aa_tight = s(1.0, 0.90, 1.08), s(1.0, 0.99, 1.01)
    cases = [  # ratio, aa, cpu, lock-bound -> verdict
        (s(0.93), aa_wide, s(1.0), False, "meets"),   # inside a wide band
        (s(0.93), aa_tight, s(1.0), False, "fails"),  # below the 0.97 floor
        (s(0.975), aa_tight, s(1.0), False, "meets"),
        (s(0.89), aa_wide, s(1.0), False, "fails"),   # below the band
        (s(1.0), aa_tight, s(1.11), False, "fails"),  # CPU ratio
        (s(1.05), aa_tight, s(1.0), True, "fails"),   # lock-bound, < 1.1x
        (s(1.12), aa_tight, s(1.0), True, "meets"),
    ]
    for r, aa, cpu, lb, want in cases:
        got = st.verdict(r, aa, cpu, lb)[0]
        expect(got == want, "verdict(ratio %.3f, A/A p25 %.2f, CPU %.2f, "
               "lock-bound %s) = %s, want %s" % (r["med"], aa["p25"],
                                                 cpu["med"], lb, got, want))
    expect(st.verdict(None, aa_tight, None, False)[0] == "no data",
           "verdict without a ratio")

    class Prog:
        higher, units = True, 10
    runs = [{"round": r, "column": c, "rc": 0, "figure": 100.0, "cpu": 1.0}
            for r in range(3) for c in ("glibc", "glibc-again")]
    e = {"runs": runs, "dropped": {"qlock": "timed out after 20 s"}}
    st.summarize(Prog, e, ["glibc", "qlock", "glibc-again"])
    expect(e["verdict"] == "fails" and "timed out" in e["verdict_reason"],
           "a drop-in run that timed out: %s (%s)" % (e["verdict"],
                                                     e["verdict_reason"]))
    expect(e["aa_band"]["med"] == 1.0 and e["aa_within_target"],
           "A/A band of identical figures: %s" % e["aa_band"])
    prof = lambda cps, share: {"contended_per_s": cps,  # noqa: E731
                               "contended_share": share, "wait_share": 0.9}
    expect(st.lock_bound(prof(5000, 0.02)) is True, "lock-bound 5000/s 2%")
    expect(st.lock_bound(prof(5000, 0.001)) is False, "lock-bound 0.1%")
    expect(st.lock_bound(prof(500, 0.5)) is False, "lock-bound 500/s")
    expect(st.lock_bound(None) is None, "lock-bound without a profile")
    # Waits on owners in sched_yield() or a sleep do not make a program
    # lock-bound; the rest of its contention still can.
    stats = ("libqlock-pthread: locks used         kind          acquired  "
             "contended      wait ms     max ms\n"
             "libqlock-pthread: 2                  mutex           100000"
             "       2000      100.000      1.000\n"
             "libqlock-pthread: off-CPU owners    1900 waits found the owner "
             "in sched_yield(), a sleep or a condvar wake-up (a lock held "
             "across the call)\n")
    p = st.parse_profile(stats, 1.0, 2)
    expect(p["contended"] == 2000 and p["off_cpu_waits"] == 1900 and
           p["running_contended_per_s"] == 100,
           "profile with off-CPU owners: %s" % p)
    expect(st.lock_bound(p) is False,
           "2,000 contended/s, 1,900 of them on off-CPU owners: not lock-bound")
    p = st.parse_profile(stats.replace(" 1900 ", " 900 "), 1.0, 2)
    expect(st.lock_bound(p) is True,
           "2,000 contended/s, 900 of them on off-CPU owners: lock-bound")

    class P:
        higher = False
    expect(abs(st.speed_ratio(P, {"figure": 2.0}, {"figure": 1.0}) - 0.5)
           < 1e-9, "a time twice glibc's is speed ratio 0.5")
    P.higher = True
    expect(abs(st.speed_ratio(P, {"figure": 2.0}, {"figure": 1.0}) - 2.0)
           < 1e-9, "a throughput twice glibc's is speed ratio 2")
    q = st.spread([4, 1, 3, 2, 5])
    expect((q["med"], q["p25"], q["p75"], q["min"], q["max"]) ==
           (3, 2, 4, 1, 5), "spread of 1..5: %s" % q)
    text = "\n".join([
        "libqlock-pthread: mutex=tp rwlock=qrwlock spin=qspinlock",
        "libqlock-pthread: locks used         kind          acquired  "
        "contended      wait ms     max ms",
        "libqlock-pthread: 4                  mutex          1000      "
        "100   50.0     10.0",
        "libqlock-pthread: 1                  rwlock-rd      500       "
        "0      0.000    0.000",
        "libqlock-pthread: most contended     kind          acquired  "
        "contended      wait ms     max ms",
        "libqlock-pthread: 0x5600             mutex          999       "
        "99     49.0     10.0"])
    p = st.parse_profile(text, 0.5, 2)
    expect((p["acquired"], p["contended"], p["locks"]) == (1500, 100, 5),
           "--stats totals: %s" % p)
    expect(abs(p["contended_per_s"] - 200) < 1e-9 and
           abs(p["wait_share"] - 0.05) < 1e-9, "--stats rates: %s" % p)


def baseline():
    """--baseline: this build's runs over the other build's, per round,
    in the JSON and the table."""
    class Prog:
        higher, units = True, 10
    fig = {"glibc": 100.0, "qlock": 120.0, "glibc-again": 100.0,
           BASELINE: 100.0}
    cpu = {"glibc": 1.0, "qlock": 0.9, "glibc-again": 1.0, BASELINE: 1.0}
    cols = ["glibc", "qlock", "glibc-again", BASELINE]
    runs = [{"round": r, "column": c, "rc": 0, "figure": fig[c],
             "cpu": cpu[c]} for r in range(3) for c in cols]
    e = {"name": "prog", "runs": runs, "dropped": {}, "lock_bound": False}
    st.summarize(Prog, e, cols)
    v = e["columns"][BASELINE]["qlock_vs_baseline"]
    expect(abs(v["ratio"]["med"] - 1.2) < 1e-9 and
           abs(v["cpu_ratio"]["med"] - 0.9) < 1e-9,
           "this build over the baseline: %s, CPU %s" % (v["ratio"],
                                                        v["cpu_ratio"]))
    doc = {"columns": cols, "baseline": "base/qlock-run", "programs": [e]}
    t = table(doc)
    row = [ln for ln in t.splitlines() if ln.startswith("prog ")
           and "1.200" in ln]
    expect("this build against the baseline build (base/qlock-run)" in t
           and row and "0.900" in row[0],
           "the baseline table: this build 1.2x faster at 0.9x CPU:\n" + t)


def waits_exactly():
    """run_once() reaps its program with a blocking wait (none of
    Popen.wait(timeout)'s 50 ms polling, which rounded wall times up)."""
    import tempfile
    calls = []

    class Proc:
        pid = 0

        def wait(self, timeout=None):
            calls.append(timeout)
            return 0

    class Prog:
        setup = server = figure = check = None
        discard = False

        @staticmethod
        def argv(ctx):
            return ["true"]
    spawn = apps_run.spawn
    apps_run.spawn = lambda *a, **k: Proc()
    try:
        with tempfile.TemporaryDirectory() as d:
            r = apps_run.run_once(Prog, {"dir": d}, None, 60)
    finally:
        apps_run.spawn = spawn
    expect(calls == [None] and r["rc"] == 0 and not r["timeout"],
           "run_once waits for its program with Popen.wait(%s), want a "
           "blocking wait (None)" % calls)


def report(fixture, out):
    with open(fixture) as f:
        apps = json.load(f)
    gen = os.path.join(HERE, "qlock_report.py")
    data = os.path.join(HERE, "test-fixture.json")
    r = subprocess.run([sys.executable, gen, data, "-o", out, "--apps",
                        fixture], capture_output=True, text=True)
    expect(r.returncode == 0, "report with --apps: status %d: %s"
           % (r.returncode, r.stderr.strip()))
    with open(os.path.join(out, "README.md")) as f:
        md = f.read()
    expect("## Application benchmark" in md, "no Application benchmark "
           "section")
    rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 9:
            rows[cells[0]] = cells
    for e in apps["programs"]:
        row = rows.get(e["name"])
        if not row:
            failures.append("no table row for %s" % e["name"])
            continue
        if e.get("skipped"):
            expect(e["skipped"] in row[1], "%s: skipped without the reason"
                   % e["name"])
            continue
        expect(row[8] == "**%s**" % e["verdict"], "%s: verdict %s, JSON %s"
               % (e["name"], row[8], e["verdict"]))
        want = fmt_s(e["columns"]["qlock"]["ratio"])
        expect(row[3] == want, "%s: ratio %s, want %s" % (e["name"], row[3],
                                                          want))
        band = band_cell(e)
        band = band[0] if isinstance(band, tuple) else band
        expect(row[4] == band, "%s: A/A band %s, want %s" % (
            e["name"], row[4], band))
    try:
        import matplotlib  # noqa: F401
        expect(os.path.exists(os.path.join(out, "plots", "apps.svg")),
               "matplotlib is installed but there is no plots/apps.svg")
        with open(os.path.join(out, "index.html")) as f:
            expect("<svg" in f.read().split("Application benchmark", 1)[-1],
                   "the HTML section has no inline plot")
    except ImportError:
        pass
    # a missing and a foreign file: named in one line, not fatal
    foreign = os.path.join(out, "foreign.json")
    with open(foreign, "w") as f:
        json.dump({"schema": "something-else/1"}, f)
    for bad in (os.path.join(out, "missing.json"), foreign):
        r = subprocess.run([sys.executable, gen, data, "-o", out + "-bad",
                            "--apps", bad], capture_output=True, text=True)
        lines = [ln for ln in r.stderr.splitlines()
                 if "application benchmark" in ln]
        expect(r.returncode == 0 and len(lines) == 1 and bad in lines[0],
               "--apps %s: status %d, stderr %r" % (bad, r.returncode,
                                                   r.stderr))


def main(argv):
    if len(argv) != 3:
        print("usage: check_apps.py APPS-FIXTURE.json OUTDIR",
              file=sys.stderr)
        return 2
    rules()
    baseline()
    waits_exactly()
    report(argv[1], argv[2])
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
