# SPDX-License-Identifier: MIT
"""The application benchmark's summary table (bench_apps.py --table and
its standard output): a row per program with its ratio, A/A band, CPU
ratio, lock-bound flag and verdict, then the extra columns' tables."""
from apps_programs import BASELINE, TOOL_NAMES
from apps_stats import AA_TARGET, CPU_CEILING, FLOOR, LOCK_BOUND_GAIN


def fmt_spread(s, digits=2):
    if not s:
        return "-"
    f = "%%.%df" % digits
    return (f + " [" + f + ".." + f + "]") % (s["med"], s["p25"], s["p75"])


def table(doc):
    rows = [("program", "qlock/glibc med [IQR]", "A/A band (IQR)",
             "CPU ratio", "lock-bound", "verdict")]
    for e in doc["programs"]:
        if e.get("skipped"):
            rows.append((e["name"], "skipped: " + e["skipped"][:60], "", "",
                         "", ""))
            continue
        q = e["columns"].get("qlock", {})
        aa = e.get("aa_band")
        rows.append((
            e["name"], fmt_spread(q.get("ratio")),
            ("%.2f..%.2f" % (aa["p25"], aa["p75"]) if aa else "-") +
            ("" if e["aa_within_target"] else " *"),
            "%.2f" % q["cpu_ratio"]["med"] if q.get("cpu_ratio") else "-",
            {True: "yes", False: "no", None: "?"}[e.get("lock_bound")],
            e["verdict"]))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = ["with %d busy processes beside every program (--hogs)"
           % doc["hogs"]] if doc.get("hogs") else []
    for i, r in enumerate(rows):
        out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            out.append("  ".join("-" * x for x in w))
    extra = [c for c in doc["columns"] if c not in ("glibc", "qlock",
                                                    "glibc-again")
             and c not in TOOL_NAMES and c != BASELINE]
    if extra:
        out.append("")
        hdr = ["program"] + extra
        body = [hdr]
        for e in doc["programs"]:
            if e.get("skipped"):
                continue
            body.append([e["name"]] + [
                fmt_spread(e["columns"].get(c, {}).get("ratio"))
                for c in extra])
        w = [max(len(r[i]) for r in body) for i in range(len(hdr))]
        out.append("speed ratio to glibc per algorithm (median [IQR]):")
        for r in body:
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    tools = [c for c in doc["columns"] if c in TOOL_NAMES]
    if tools:
        out.append("")
        hdr = ["program"] + ["%s speed [IQR]" % c for c in tools] + \
              ["%s CPU" % c for c in tools]
        body = [hdr]
        for e in doc["programs"]:
            if e.get("skipped"):
                continue
            vs = [e["columns"].get(c, {}).get("vs_qlock", {}) for c in tools]
            body.append([e["name"]] + [fmt_spread(v.get("ratio"), 3)
                                       for v in vs] +
                        ["%.3f" % v["cpu_ratio"]["med"] if v.get("cpu_ratio")
                         else "-" for v in vs])
        w = [max(len(r[i]) for r in body) for i in range(len(hdr))]
        out.append("cost of the diagnostics: speed and CPU per unit of work "
                   "relative to the plain drop-in (qlock) of the same round "
                   "(median [IQR]; speed 0.98 = 2% slower):")
        for r in body:
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    if BASELINE in doc["columns"]:
        out.append("")
        hdr = ["program", "qlock/baseline speed [IQR]",
               "qlock/baseline CPU [IQR]", "baseline/glibc [IQR]"]
        body = [hdr]
        for e in doc["programs"]:
            if e.get("skipped"):
                continue
            c = e["columns"].get(BASELINE, {})
            v = c.get("qlock_vs_baseline", {})
            body.append([e["name"], fmt_spread(v.get("ratio"), 3),
                         fmt_spread(v.get("cpu_ratio"), 3),
                         fmt_spread(c.get("ratio"))])
        w = [max(len(r[i]) for r in body) for i in range(len(hdr))]
        out.append("this build against the baseline build (%s), same rounds: "
                   "speed and CPU per unit of work of this build's drop-in "
                   "over the baseline's (median [IQR]; speed 1.02 = 2%% "
                   "faster, CPU 0.98 = 2%% less):" % doc.get("baseline", "-"))
        for r in body:
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    out.append("")
    out.append("ratio: speed (throughput or 1/time) of the drop-in over "
               "glibc, per interleaved pair, median [p25..p75]; A/A band: "
               "glibc-again/glibc, p25..p75 (* = wider than +-%d%%); CPU "
               "ratio: user+sys per unit of work, drop-in/glibc, median."
               % (AA_TARGET * 100))
    out.append("verdict 'meets': median >= min(A/A lower edge, %.2f), CPU "
               "ratio <= %.2f, and >= %.2fx if lock-bound "
               "(docs/bench-apps.md)." % (FLOOR, CPU_CEILING, LOCK_BOUND_GAIN))
    lbl = ["%s: %s" % (e["name"], e["verdict_reason"])
           for e in doc["programs"] if e.get("verdict") == "fails"]
    if lbl:
        out.append("fails: " + " | ".join(lbl))
    return "\n".join(out) + "\n"
