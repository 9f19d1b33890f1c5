#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The seed report's verdict rule (docs/bench-report.md, "Verdicts"), one
small made-up case per rule.

Row rules (report_model.judge, published ratio against our median
[per-rep min..max]): agrees only with the published sign, a size
(|ln ratio|) within 0.5x..2x of the published one and a range that
excludes 1; four times the published effect is not agreement (seed 000's
5-thread row at -32.4% against -8.2%); a narrow range around 1 is "no
effect" (seed 002's 0.98x [0.94x..1.02x] against 1.64x); a range reaching
from no effect to half the published size is "too wide" (seed 004's 1.02x
[0.96x..1.30x] against 1.64x).

Seed rules (report_model.seed_verdict on lockbench JSON made up here, with
the committed published.json): the headline table carries the verdict
(seed 004: the 36-thread totals, never its 9-thread scaling row); rows
with more threads than CPUs cannot make a seed "reproduced" alone; a
narrow no-effect is "not reproduced here" with the CPUs the patch's regime
needs; in-regime rows carry the verdict and the oversubscribed ones only
support it; the summary line names the rows.
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
           {q.TOO_WIDE, q.FEW_REPS}))


# ---- seed rules ------------------------------------------------------------

FIELDS = ("elapsed_ms", "kops", "ops")


def run_record(rep, v):
    r = {f: v for f in FIELDS}
    r.update(rep=rep, status="ok", reader_rate=v, writer_rate=v,
             per_thread_ops_s={"min": v, "avg": v, "max": v},
             futex_calls=None)
    return r


def experiment(name, unit, before, after, rows):
    """rows: {threads: (median, min, max)} of after / before; before is
    100 in every rep, after 100 x (min, median, max) in reps 1..3."""
    points = []
    for th, (med, lo, hi) in rows.items():
        for lock, vals in ((before, (100, 100, 100)),
                           (after, (100 * lo, 100 * med, 100 * hi))):
            points.append({"lock": lock, "threads": th,
                           "runs": [run_record(i + 1, v)
                                    for i, v in enumerate(vals)]})
    return {"name": name, "title": name, "workload": "rate", "reps": 3,
            "primary": {"unit": unit}, "locks": [before, after],
            "threads": sorted(rows), "points": points,
            "params": {"duration_s": 1, "read_ratio": 1, "write_ratio": 1,
                       "xthread": False, "sleep_per_1024": 0, "load": 1,
                       "lock_latency": 1, "data": "other-line"}}


def make_run(tmp, cpus, exps):
    path = os.path.join(tmp, "run-%d.json" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        json.dump({"schema": "qlock-lockbench/1",
                   "host": {"online_cpus": cpus}, "experiments": exps}, f)
    return q.Run([path])


def seed004(totals, scaling):
    """Seed 004's rwlock experiment: TP / WW at 36 threads (the totals
    table's "Total locking ops" and the scaling table's 36-thread row) and
    at the scaling table's other thread counts."""
    rows = dict(scaling)
    rows[36] = totals
    return experiment("seed-004-rwlock", "ops", "ww-rwlock-rpref",
                      "tp-rwlock", rows)


def carried(v):
    return [r.row.key for r in v.carried]


def test_seeds(pub, tmp):
    seeds = {s["id"]: s for s in pub["seeds"]}

    # seed 004's headline is the 36-thread totals table: 1.02x
    # [0.96x..1.30x] against 1.64x is too wide to tell, and a 9-thread row
    # of the scaling table that agrees does not make it reproduced
    run = make_run(tmp, 2, [seed004((1.02, 0.96, 1.30),
                                    {9: (1.55, 1.45, 1.65)})])
    v = q.seed_verdict(seeds["004"], run)
    check("004 headline too wide", v.verdict, "inconclusive")
    check("004 carried by", carried(v), ["Total locking ops"])
    check("004 9 threads is support",
          [(r.tid, r.row.key, r.cls) for r in v.support][:1],
          [("scaling", "9 threads (1 socket)", q.AGREES)])
    line = v.rows_line()
    check("004 rows line", line.startswith(
        "carried by: table totals, Total locking ops (36 threads) † (too "
        "wide); support: table scaling, 9 threads (1 socket) † (agrees)"),
        True)

    # seed 004 agreeing at 36 threads on 2 CPUs: oversubscribed rows alone
    # never make "reproduced"
    run = make_run(tmp, 2, [seed004((1.60, 1.50, 1.70), {})])
    v = q.seed_verdict(seeds["004"], run)
    check("004 agrees only oversubscribed", v.verdict, "inconclusive")
    check("004 says why", "agrees only where oversubscribed" in v.reason,
          True)

    # ... and with a CPU per thread it is reproduced
    run = make_run(tmp, 64, [seed004((1.60, 1.50, 1.70),
                                     {9: (1.02, 0.99, 1.04)})])
    v = q.seed_verdict(seeds["004"], run)
    check("004 reproduced with 64 CPUs", v.verdict, "reproduced")
    check("004 64 CPUs carried by", carried(v), ["Total locking ops"])

    # seed 002: 0.98x [0.94x..1.02x] against 1.64x at 16 threads on 2
    # CPUs is "not reproduced here", with the CPUs it would need
    run = make_run(tmp, 2, [experiment("seed-002", "kops/s",
                                       "rwsem-wake-front", "rwsem",
                                       {16: (0.98, 0.94, 1.02)})])
    v = q.seed_verdict(seeds["002"], run)
    check("002 no effect", v.verdict, "not reproduced here")
    check("002 reason names the CPUs",
          "its regime needs 16 or more CPUs" in v.reason, True)
    check("002 carried by", carried(v), ["16"])

    # seed 000 on 2 CPUs: the 2-thread row (a CPU per thread) agrees and
    # carries; the 5-thread row at -32.4% is four times the published
    # -8.2%, so it is not "agrees", and being oversubscribed it only
    # supports
    rows = {2: (0.91, 0.89, 0.93), 5: (0.676, 0.60, 0.75)}
    run = make_run(tmp, 2, [experiment(
        "seed-000", "ms", "qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte",
        rows)])
    v = q.seed_verdict(seeds["000"], run)
    check("000 reproduced by its 2-thread row", v.verdict, "reproduced")
    check("000 carried by", carried(v), ["2"])
    check("000 5 threads", [(r.row.key, r.cls) for r in v.support],
          [("5", q.LARGER)])
    check("000 rows line", v.rows_line(),
          "carried by: 2 threads (agrees); support: 5 threads † (too "
          "large)")

    # seed 000 with a CPU per thread for 5 threads: a four times larger
    # effect carries "not reproduced here", with the seed's regime note
    run = make_run(tmp, 8, [experiment(
        "seed-000", "ms", "qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte",
        {5: (0.676, 0.60, 0.75)})])
    v = q.seed_verdict(seeds["000"], run)
    check("000 too large in regime", v.verdict, "not reproduced here")
    check("000 regime note", "why it may differ here" in v.reason, True)

    # in-regime rows that split evenly (one agrees, one shows no effect)
    # are inconclusive; a too-wide in-regime row is inconclusive
    run = make_run(tmp, 8, [experiment(
        "seed-000", "ms", "qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte",
        {2: (0.91, 0.89, 0.93), 3: (1.00, 0.99, 1.01)})])
    check("000 split", q.seed_verdict(seeds["000"], run).verdict,
          "inconclusive")
    run = make_run(tmp, 8, [experiment(
        "seed-000", "ms", "qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte",
        {2: (0.91, 0.70, 1.20)})])
    check("000 too wide", q.seed_verdict(seeds["000"], run).verdict,
          "inconclusive")

    # no experiment of the seed, or none of its claimed rows: not run
    run = make_run(tmp, 2, [experiment(
        "seed-000", "ms", "qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte",
        {8: (0.90, 0.89, 0.91)})])
    v = q.seed_verdict(seeds["000"], run)
    check("000 only unclaimed rows", (v.verdict, v.rows_line()),
          ("not run", "carried by: no row (none of the judged rows was "
           "run)"))
    check("002 absent", q.seed_verdict(seeds["002"], run).verdict,
          "not run")


def main():
    with open(os.path.join(HERE, "..", "..", "bench", "report",
                           "published.json")) as f:
        pub = json.load(f)
    test_rows()
    with tempfile.TemporaryDirectory() as tmp:
        test_seeds(pub, tmp)
    for msg in FAILS:
        print("FAIL report_verdict: " + msg)
    if FAILS:
        return 1
    print("report_verdict: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
