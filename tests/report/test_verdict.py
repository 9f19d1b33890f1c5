#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seed report's verdict rule (docs/bench-report.md, "Verdicts"), one
small made-up case per rule.

Row rules (report_model.judge, published ratio against the median of the
paired per-rep ratios [min..max]): agrees only with the published sign, a
size (|ln ratio|) within 0.5x..2x of the published one, an interval that
excludes 1 and a median outside the A/A band; four times the published
effect is not agreement (seed 000's 5-thread row at -32.4% against -8.2%);
a narrow interval around 1 is "no effect"; an interval reaching from no
effect to half the published size is "too wide"; an effect inside the A/A
band is open.

Seed rules (report_model.seed_verdict on lockbench JSON made up here, with
the committed published.json), each named by what it guards:
  statistic   the headline figure is the median of the paired per-rep
              ratios, not the ratio of the medians (they can differ in
              sign); seed 001's totals show the ratio of sums, labelled,
              beside it
  regime      a seed whose claimed rows all oversubscribe this machine is
              "not testable here" with the CPUs its published table needs
              (seed 002: its effect starts at 8 threads, two rows need 16)
  both ways   oversubscribed rows never decide, neither "reproduced" nor
              "not reproduced here"
  one row     no verdict from one row when the seed claims several (seed
              000 on 2 CPUs: only its 2-thread row fits)
  A/A         an effect inside the baseline-against-itself band is
              "inconclusive"
  grouping    seed 004 also judges TP with grouping against TP without
              (the patch's own change)
  doc         docs/bench-report.md's headline table names the rows the
              code claims
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "report"))
import report_model as q  # noqa: E402

FAILS = []


def check(what, got, want):
    if got != want:
        FAILS.append("%s: got %r, expected %r" % (what, got, want))


# ---- row rules -------------------------------------------------------------


def ours(med, lo, hi, n=3):
    return (med, lo, hi, n)


def test_rows():
    j = q.judge
    # the published sign, a size within 0.5x..2x, a range excluding 1
    check("agrees", j(0.904, ours(0.91, 0.89, 0.93)), q.AGREES)
    check("agrees, rate", j(1.64, ours(1.70, 1.40, 2.00)), q.AGREES)
    # the factor's edges: 1.30x is 0.53 of 1.64x's size, 1.25x is 0.45
    check("just inside 0.5x", j(1.64, ours(1.30, 1.20, 1.40)), q.AGREES)
    check("just under 0.5x", j(1.64, ours(1.25, 1.20, 1.40)), q.SMALLER)
    check("just under 2x", j(0.90, ours(0.82, 0.80, 0.85)), q.AGREES)
    # seed 000: -32.4% against -8.2% is four times the effect
    check("4x the effect", j(1 - 0.082, ours(1 - 0.324, 0.60, 0.75)),
          q.LARGER)
    check("4x the effect, wide range",
          j(1 - 0.082, ours(1 - 0.324, 0.55, 1.10)), q.TOO_WIDE)
    check("smaller", j(1.64, ours(1.05, 1.01, 1.06)), q.SMALLER)
    check("opposite", j(0.90, ours(1.10, 1.05, 1.20)), q.OPPOSITE)
    # seed 002: a narrow range around 1 is no effect, not "inconclusive"
    check("no effect", j(1.64, ours(0.98, 0.94, 1.02)), q.NO_EFFECT)
    # seed 004: a range from 0.96x to 1.30x cannot tell
    check("too wide", j(1.64, ours(1.02, 0.96, 1.30)), q.TOO_WIDE)
    check("one rep", j(1.64, ours(1.70, 1.70, 1.70, 1)), q.FEW_REPS)
    check("no published effect", j(1.02, ours(1.70, 1.40, 2.00)),
          q.NO_CLAIM)
    check("not run", j(0.90, None), q.NOT_RUN)
    check("no published figure", j(None, ours(1, 1, 1)), q.NO_FIGURE)
    # a class per side: agrees for, the four others against, two open
    check("classes", (q.PRO, set(q.CON), set(q.OPEN)),
          ((q.AGREES,), {q.LARGER, q.SMALLER, q.OPPOSITE, q.NO_EFFECT},
           {q.TOO_WIDE, q.IN_AA, q.FEW_REPS}))


def test_aa_rows(seeds, tmp):
    """The A/A band per row: a published effect no larger than the
    baseline's own movement cannot be seen; an agreement inside it is
    noise."""
    j = q.judge
    check("published inside A/A", j(1.05, ours(1.06, 1.02, 1.09), aa=0.06),
          q.IN_AA)
    check("measured inside A/A", j(1.20, ours(1.12, 1.05, 1.20), aa=0.15),
          q.IN_AA)
    check("outside A/A", j(1.20, ours(1.18, 1.10, 1.25), aa=0.05),
          q.AGREES)


# ---- seed rules ------------------------------------------------------------

FIELDS = ("elapsed_ms", "kops", "ops")


def run_record(rep, v):
    """One run whose every figure is v (counts: v x 1000, whole)."""
    r = {f: v for f in FIELDS}
    n = int(round(v * 1000))
    r.update(rep=rep, status="ok", ops=n, reads=n, writes=n,
             reader_rate=v, writer_rate=v,
             per_thread_ops_s={"min": v, "avg": v, "max": v},
             futex_calls=None, lock_events=None)
    return r


SPREAD = {"median": 1, "min": 1, "max": 1, "n": 1}


def experiment(name, unit, before, after, rows, others=None, aa=None):
    """rows: {threads: (median, min, max)} of after / before; before is
    100 in every rep, after 100 x (min, median, max) in reps 1..3, so the
    paired per-rep ratios are min, median, max.  others: {lock: rows} more
    locks the same way; aa: {threads: (r1, r2, r3)} the baseline's A/A copy
    over the baseline per rep."""
    locks = {after: rows}
    locks.update(others or {})
    points = []
    for th in rows:
        points.append({"lock": before, "threads": th,
                       "runs": [run_record(i + 1, 100) for i in range(3)]})
        for lock, lrows in locks.items():
            med, lo, hi = lrows[th]
            points.append({"lock": lock, "threads": th,
                           "runs": [run_record(i + 1, v) for i, v in
                                    enumerate((100 * lo, 100 * med,
                                               100 * hi))]})
        if aa:
            points.append({"lock": before + "#2", "threads": th,
                           "runs": [run_record(i + 1, 100 * v)
                                    for i, v in enumerate(aa[th])]})
    for p in points:
        p.update(primary=SPREAD, ratio_to_baseline=SPREAD)
    exp = {"name": name, "title": name, "workload": "rate", "reps": 3,
           "baseline": before,
           "primary": {"unit": unit, "higher_is_better": unit != "ms"},
           "locks": [before] + list(locks) + ([before + "#2"] if aa else []),
           "threads": sorted(rows), "points": points,
           "aa_control": {"lock": before, "copy": before + "#2"}
           if aa else None,
           "params": {"iterations": 0, "duration_s": 1, "read_ratio": 1,
                      "write_ratio": 1, "xthread": False,
                      "sleep_per_1024": 0, "load": 1, "lock_latency": 1,
                      "data": "other-line", "pin": False, "max_time_s": 60}}
    return exp


def make_run(tmp, cpus, exps):
    path = os.path.join(tmp, "run-%d.json" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        json.dump({"schema": "qlock-lockbench/1", "lockbench_version": "t",
                   "host": {"online_cpus": cpus}, "experiments": exps,
                   "notes": []}, f)
    return q.Run([path])


def seed004(totals, scaling, grouping=(1.30, 1.20, 1.40), aa=None):
    """Seed 004's rwlock experiment: TP / WW at 36 threads (the totals
    table's "Total locking ops" and the scaling table's 36-thread row) and
    at the scaling table's other thread counts; TP no group at grouping's
    ratio to WW times TP's (TP / TP no group = grouping)."""
    rows = dict(scaling)
    rows[36] = totals
    # per rep: TP / TP no group is grouping's min, median, max
    nogroup = {th: tuple(t / g for t, g in zip(r, grouping))
               for th, r in rows.items()}
    return experiment("seed-004-rwlock", "ops", "ww-rwlock-rpref",
                      "tp-rwlock", rows, {"tp-rwlock-nogroup": nogroup},
                      aa)


def carried(v):
    return [r.row.key for r in v.carried]


def seed000(cpus, rows, tmp, aa=None):
    return make_run(tmp, cpus, [experiment(
        "seed-000", "ms", "qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte",
        rows, aa=aa)])


def test_statistic(seeds, tmp):
    """The headline figure is the median of the paired per-rep ratios:
    before 100, 90, 130 and after 97, 105, 125 pair as 0.97x, 1.17x,
    0.96x (median 0.97x: the patch faster in 2 of 3 reps), while the
    ratio of the medians is 105 / 100 = 1.05x."""
    exp = experiment("seed-000", "ms", "qrwlock-2015-cmpxchg-loop",
                     "qrwlock-2015-byte", {2: (1, 1, 1)})
    vals = {"qrwlock-2015-cmpxchg-loop": (100, 90, 130),
            "qrwlock-2015-byte": (97, 105, 125)}
    for p in exp["points"]:
        p["runs"] = [run_record(i + 1, v)
                     for i, v in enumerate(vals[p["lock"]])]
    run = make_run(tmp, 8, [exp])
    t = seeds["000"]["tables"][0]
    row = [r for r in q.table_rows(t, run) if r.key == "2"][0]
    got = row.ratio(t, t["merits"][0])
    check("statistic: paired median", round(got[0], 3), 0.97)
    check("statistic: interval", (round(got[1], 3), round(got[2], 3)),
          (0.962, 1.167))
    # seed 001's totals: the ratio of the sums, labelled, and the paired
    # median beside it (before 100 x3, after 50, 100, 60: sums 0.7x,
    # paired median 0.6x)
    exps = []
    for name in ("seed-001-same-line", "seed-001-other-line"):
        e = experiment(name, "ms", "qspinlock", "qspinlock-cmpxchg-wait",
                       {2: (0.6, 0.5, 1.0)})
        e["reps"] = 3
        exps.append(e)
    run = make_run(tmp, 2, exps)
    v = q.seed_verdict(seeds["001"], run)
    check("statistic: 001 ratio of sums labelled",
          "here -30.0% (ratio of sums, the published form), paired median "
          "-40.0% [-50.0%..+0.0%]" in v.reason, True)


def test_regime(seeds, tmp):
    """Seed 002 at 16 and 64 threads on 2 CPUs: every claimed row
    oversubscribed, so "not testable here", with the CPUs from the
    published table (its effect starts at 8 threads: +45%; two rows need
    16)."""
    run = make_run(tmp, 2, [experiment("seed-002", "kops/s",
                                       "rwsem-wake-front", "rwsem",
                                       {16: (0.98, 0.94, 1.02),
                                        64: (0.99, 0.97, 1.01)})])
    v = q.seed_verdict(seeds["002"], run)
    check("regime: 002 verdict", v.verdict, "not testable here")
    check("regime: 002 CPUs from the published table",
          "the published rows with an effect start at 8 threads; the "
          "patch's regime needs 16 or more CPUs for two of them" in v.reason,
          True)
    check("regime: 002 carried by", carried(v), [])
    check("regime: 002 rows shown as support",
          [(r.row.key, r.cls) for r in v.support],
          [("16", q.NO_EFFECT), ("64", q.NO_EFFECT)])


def test_both_ways(seeds, tmp):
    """Oversubscribed rows decide neither way: seed 004 agreeing at 36
    threads on 2 CPUs is not "reproduced", and showing no effect there is
    not "not reproduced here"; both are "not testable here" (needs 36)."""
    for what, totals in (("agrees", (1.60, 1.50, 1.70)),
                         ("no effect", (1.00, 0.98, 1.02))):
        run = make_run(tmp, 2, [seed004(totals, {})])
        v = q.seed_verdict(seeds["004"], run)
        check("both ways: 004 %s oversubscribed" % what, v.verdict,
              "not testable here")
        check("both ways: 004 %s needs" % what,
              "needs 36 or more CPUs" in v.reason, True)
    # seed 000's 5-thread row at 4x the published effect, oversubscribed
    # on 4 CPUs, is support only; the 2-4 thread rows that fit carry
    run = seed000(4, {2: (0.91, 0.89, 0.93), 3: (0.90, 0.88, 0.92),
                      5: (0.676, 0.60, 0.75)}, tmp)
    v = q.seed_verdict(seeds["000"], run)
    check("both ways: 000 on 4 CPUs", v.verdict, "reproduced")
    check("both ways: 000 5 threads is support",
          [(r.row.key, r.cls) for r in v.support], [("5", q.LARGER)])
    check("both ways: 000 rows line", v.rows_line(),
          "carried by: 2 threads (agrees), 3 threads (agrees); support: "
          "5 threads † (too large)")


def test_one_row(seeds, tmp):
    """Seed 000 on 2 CPUs: its 2-thread row agrees but is the only one of
    its five claimed rows with a CPU per thread: "not testable here"
    (needs 3 CPUs for two rows); seed 004 on 64 CPUs claims its 36-thread
    row (twice: TP / WW and grouping on / off) and is judged."""
    run = seed000(2, {2: (0.91, 0.89, 0.93), 3: (0.90, 0.88, 0.92)}, tmp)
    v = q.seed_verdict(seeds["000"], run)
    check("one row: 000 on 2 CPUs", v.verdict, "not testable here")
    check("one row: 000 reason", "needs 3 or more CPUs" in v.reason, True)
    check("one row: 000 carried by", carried(v), ["2"])
    run = make_run(tmp, 64, [seed004((1.60, 1.50, 1.70),
                                     {9: (1.02, 0.99, 1.04)})])
    v = q.seed_verdict(seeds["004"], run)
    check("one row: 004 reproduced with 64 CPUs", v.verdict, "reproduced")
    check("one row: 004 carried by", carried(v),
          ["Total locking ops", "Total locking ops"])


def test_aa(seeds, tmp):
    """An effect inside the A/A band is "inconclusive": seed 000 at 2 and
    3 threads on 8 CPUs agreeing (-9%, -10%) while the baseline against
    itself moved up to 12% is no evidence; with an A/A band of 2% it
    is."""
    rows = {2: (0.91, 0.89, 0.93), 3: (0.90, 0.88, 0.92)}
    wide = {2: (1.12, 0.95, 1.0), 3: (0.9, 1.05, 1.0)}
    narrow = {2: (1.02, 0.99, 1.0), 3: (0.98, 1.01, 1.0)}
    v = q.seed_verdict(seeds["000"], seed000(8, rows, tmp, wide))
    check("A/A: wide band", v.verdict, "inconclusive")
    check("A/A: wide band rows", [r.cls for r in v.carried],
          [q.IN_AA, q.IN_AA])
    check("A/A: reason", "A/A band ±12.0%" in v.reason, True)
    v = q.seed_verdict(seeds["000"], seed000(8, rows, tmp, narrow))
    check("A/A: narrow band", v.verdict, "reproduced")


def test_grouping(seeds, tmp):
    """Seed 004 also judges grouping on against off, the patch's own
    change: TP / WW agreeing while TP is slower with grouping than
    without is not "reproduced"."""
    run = make_run(tmp, 64, [seed004((1.60, 1.50, 1.70), {},
                                     grouping=(0.80, 0.75, 0.85))])
    v = q.seed_verdict(seeds["004"], run)
    check("grouping: verdict", v.verdict, "inconclusive")
    check("grouping: its row carries",
          [(r.merit["label"], r.cls) for r in v.carried],
          [("TP / WW", q.AGREES),
           ("TP / TP no group (the patch's change)", q.OPPOSITE)])


def test_doc(seeds, tmp):
    """docs/bench-report.md's headline table states, per seed, the thread
    range of the rows the code claims (a published effect of the
    threshold or more)."""
    with open(os.path.join(HERE, "..", "..", "docs", "bench-report.md")) as f:
        doc = f.read()
    doc = doc[doc.index("## Verdicts"):]
    run = seed000(2, {2: (0.91, 0.89, 0.93)}, tmp)
    for sid in ("000", "002", "003"):
        head, _ = q.verdict_rows(seeds[sid], run)
        ths = [r.row.threads for r in head
               if r.cls not in (q.NO_CLAIM, q.NO_FIGURE)]
        want = "| %s | " % sid
        line = next((ln for ln in doc.splitlines()
                     if ln.startswith(want)), "")
        check("doc: seed %s claims %d-%d threads" % (sid, min(ths),
                                                      max(ths)),
              "%d-%d threads" % (min(ths), max(ths)) in line, True)


def test_not_run(seeds, tmp):
    # no experiment of the seed, or none of its claimed rows: not run
    run = seed000(2, {8: (0.90, 0.89, 0.91)}, tmp)
    v = q.seed_verdict(seeds["000"], run)
    check("000 only unclaimed rows", (v.verdict, v.rows_line()),
          ("not run", "carried by: no row (none of the judged rows was "
           "run)"))
    check("002 absent", q.seed_verdict(seeds["002"], run).verdict,
          "not run")


RULES = [("statistic", test_statistic), ("regime", test_regime),
         ("both ways", test_both_ways), ("one row", test_one_row),
         ("A/A rows", test_aa_rows), ("A/A", test_aa),
         ("grouping", test_grouping), ("doc", test_doc),
         ("not run", test_not_run)]


def main():
    with open(os.path.join(HERE, "..", "..", "bench", "report",
                           "published.json")) as f:
        pub = json.load(f)
    seeds = {s["id"]: s for s in pub["seeds"]}
    try:
        test_rows()
    except Exception as err:  # an older rule without a name: one failure
        FAILS.append("row rules: %s: %s" % (type(err).__name__, err))
    with tempfile.TemporaryDirectory() as tmp:
        for name, rule in RULES:
            try:
                rule(seeds, tmp)
            except Exception as err:
                FAILS.append("%s: %s: %s" % (name, type(err).__name__, err))
    for msg in FAILS:
        print("FAIL report_verdict: " + msg)
    if FAILS:
        return 1
    print("report_verdict: ok (%d rules)" % len(RULES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
