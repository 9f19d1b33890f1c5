# SPDX-License-Identifier: MIT
"""The application benchmark (`make bench-apps`, bench/apps/bench_apps.py,
docs/bench-apps.md) in the report: a section with the summary table (speed
ratio of the drop-in to glibc with its spread, the program's own glibc A/A
band, CPU-seconds ratio, lock profile, verdict), a table per extra
algorithm column when the run had them, and a plot (ratio with spread per
program, the A/A band shaded).  Self-contained: qlock_report.py calls
load_apps, make_apps_plot and add_apps.
"""
import json
import os

SCHEMA = "qlock-bench-apps/"
PLOT = "apps"


class AppsError(ValueError):
    pass


def load_apps(path):
    """(bench-apps document, None) or (None, one line saying why not)."""
    try:
        with open(path) as f:
            doc = json.load(f)
        check_apps(doc)
    except (OSError, ValueError) as err:
        return None, "%s: %s" % (path, err)
    return doc, None


def check_apps(doc):
    if not isinstance(doc, dict) or \
            not str(doc.get("schema", "")).startswith(SCHEMA):
        raise AppsError("not a bench-apps JSON file (schema %s*)" % SCHEMA)
    progs = doc.get("programs")
    if not isinstance(progs, list) or not progs:
        raise AppsError("no programs")
    for i, e in enumerate(progs):
        if not isinstance(e, dict) or "name" not in e:
            raise AppsError("program %d has no name" % i)
        if e.get("skipped"):
            continue
        cols = e.get("columns")
        if not isinstance(cols, dict) or "qlock" not in cols or \
                "verdict" not in e:
            raise AppsError("%s: no qlock column or no verdict" % e["name"])


def measured(doc):
    return [e for e in doc["programs"] if not e.get("skipped")
            and e["columns"]["qlock"].get("ratio")]


# ---- cells -------------------------------------------------------------------


def fmt_s(s, digits=2):
    if not s:
        return "-"
    f = "%%.%df" % digits
    return (f + " [" + f + ".." + f + "]") % (s["med"], s["p25"], s["p75"])


def fmt_fig(s):
    if not s:
        return "-"
    v = s["med"]
    if v >= 1000:
        return "{:,.0f}".format(v)
    return "%.3g" % v


def band_cell(e):
    aa = e.get("aa_band")
    if not aa:
        return "-"
    text = "%.2f..%.2f" % (aa["p25"], aa["p75"])
    return text if e.get("aa_within_target") else (text + " *", "noisy")


def verdict_cell(e):
    v = e.get("verdict", "-")
    cls = {"meets": "reproduced", "fails": "not-reproduced"}.get(
        v, "inconclusive")
    return ("**%s**" % v, cls)


def profile_cell(e):
    p = e.get("lock_profile")
    if not p or p.get("contended_per_s") is None:
        return "-"
    cell = "{:,.0f}/s ({:.1%})".format(p["contended_per_s"],
                                      p["contended_share"])
    if p.get("off_cpu_waits") and p.get("contended"):
        cell += ", {:.0%} on off-CPU owners".format(
            min(1.0, p["off_cpu_waits"] / p["contended"]))
    return cell


# ---- the plot ---------------------------------------------------------------


def make_apps_plot(doc, plot_dir):
    """plots/apps.svg and .png; None, or why there is no plot."""
    progs = measured(doc)
    if not progs:
        return "no program has a measured ratio"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed"
    matplotlib.rcParams["svg.hashsalt"] = "qlock"
    matplotlib.rcParams["svg.fonttype"] = "path"
    os.makedirs(plot_dir, exist_ok=True)
    n = len(progs)
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * n + 1.6))
    ys = list(range(n))[::-1]
    hi = 1.2
    lo = 0.8
    for y, e in zip(ys, progs):
        aa = e.get("aa_band")
        if aa:
            ax.fill_betweenx([y - 0.38, y + 0.38], aa["p25"], aa["p75"],
                             color="#cccccc", lw=0, zorder=0,
                             label="glibc A/A band (p25..p75)" if y == ys[0]
                             else None)
            lo, hi = min(lo, aa["p25"]), max(hi, aa["p75"])
        r = e["columns"]["qlock"]["ratio"]
        color = "#2ca02c" if e.get("verdict") == "meets" else "#d62728"
        ax.plot([r["min"], r["max"]], [y, y], color=color, lw=0.8)
        ax.errorbar([r["med"]], [y], xerr=[[r["med"] - r["p25"]],
                                           [r["p75"] - r["med"]]],
                    fmt="o", color=color, capsize=3, ms=5)
        lo, hi = min(lo, r["min"]), max(hi, r["max"])
    ax.axvline(1.0, color="grey", lw=0.8)
    ax.axvline(0.97, color="grey", lw=0.6, ls=":")
    ax.set_yticks(ys)
    ax.set_yticklabels(["%s%s" % (e["name"], " (lock-bound)"
                                  if e.get("lock_bound") else "")
                        for e in progs], fontsize=8)
    if hi / max(lo, 1e-3) > 4:
        ax.set_xscale("log")
        ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 0.8, 1, 1.25, 2, 5, 10)
                 if lo * 0.95 <= t <= hi * 1.05]
        ax.set_xticks(ticks)
        ax.set_xticklabels(["%g" % t for t in ticks])
        ax.minorticks_off()
    ax.set_xlim(lo * 0.95, hi * 1.05)
    ax.set_xlabel("speed, drop-in / glibc (dot: median, bar: p25..p75, "
                  "line: min..max; green meets the rule)", fontsize=8)
    ax.legend(loc="best", fontsize=8)
    ax.set_title("bench-apps: the pthread drop-in's defaults against glibc",
                 fontsize=10)
    fig.tight_layout()
    name = os.path.join(plot_dir, PLOT)
    fig.savefig(name + ".svg", metadata={"Date": None})
    fig.savefig(name + ".png", dpi=110)
    plt.close(fig)
    return None


# ---- the section -----------------------------------------------------------


def add_apps(doc, path, apps, plot_problem):
    """The section; apps is None when there is no bench-apps JSON (then
    plot_problem says why, or is None when none was given)."""
    doc.h(2, "Application benchmark", "apps")
    if apps is None:
        doc.p("No application benchmark%s: `make bench-apps` writes "
              "`build/bench-apps.json` (about 15 min), which the next "
              "`make bench` shows; or BENCH_APPS=FILE make bench."
              % (" (" + plot_problem + ")" if plot_problem else ""))
        return
    m = apps.get("machine", {})
    doc.p("`%s` (%s mode%s, %s); %s, %s online CPUs, kernel %s, %s; load "
          "average %.1f at the start, %.1f at the end; %.0f s.  Columns "
          "%s, in rotating order per round (docs/bench-apps.md)." % (
              os.path.basename(path), apps.get("mode"),
              ", %d busy processes beside every program" % apps["hogs"]
              if apps.get("hogs") else "",
              apps.get("date", m.get("date", "")), m.get("cpu_model"),
              m.get("online_cpus"), m.get("kernel"), m.get("glibc"),
              m.get("loadavg_start", 0) or 0, m.get("loadavg_end", 0) or 0,
              apps.get("seconds", 0) or 0, ", ".join(
                  "`%s`" % c for c in apps.get("columns", []))))
    rule = apps.get("rule", {})
    lb = rule.get("lock_bound", {})
    doc.p("Ratio: the drop-in's speed over glibc's (throughput, or 1 / "
          "time) per interleaved round, median [p25..p75].  A/A band: "
          "glibc-again / glibc per round, p25..p75 (* wider than +-%d%%: "
          "this program's noise here).  CPU: user+sys per unit of work, "
          "drop-in / glibc, median.  Lock-bound: the drop-in's profile run "
          "had >= %s contended acquisitions per second and >= %s of all "
          "acquisitions contended, not counting the waits that saw the "
          "owner in sched_yield(), a sleep or a condvar wake-up (off-CPU "
          "owners: the program holds the lock across the call).  "
          "**meets**: median >= min(A/A lower edge, %s), CPU <= %s, and "
          ">= %s if lock-bound." % (
              round(100 * rule.get("aa_target", 0.05)),
              "{:,.0f}".format(lb.get("contended_per_s", 0)),
              "{:.1%}".format(lb.get("contended_share", 0)),
              rule.get("floor"), rule.get("cpu_ceiling"),
              rule.get("lock_bound_gain")))
    if plot_problem:
        doc.p("No plot: %s." % plot_problem)
    else:
        doc.img(PLOT, "bench-apps: the drop-in's speed over glibc per "
                "program, with the program's glibc A/A band shaded")
    rows = []
    for e in apps["programs"]:
        if e.get("skipped"):
            rows.append([e["name"], "skipped: " + e["skipped"]] + [""] * 7)
            continue
        q = e["columns"]["qlock"]
        f = e.get("figures", {})
        unit = e.get("figure_unit", "")
        rows.append([
            e["name"],
            "%s %s" % (fmt_fig(f.get("glibc", {}).get("figure")), unit),
            "%s %s" % (fmt_fig(f.get("qlock", {}).get("figure")), unit),
            fmt_s(q.get("ratio")), band_cell(e),
            "%.2f" % q["cpu_ratio"]["med"] if q.get("cpu_ratio") else "-",
            profile_cell(e),
            {True: "yes", False: "no"}.get(e.get("lock_bound"), "?"),
            verdict_cell(e)])
    doc.table(["program", "glibc (median)", "drop-in (median)",
               "ratio med [IQR]", "A/A band", "CPU ratio",
               "contended (share)", "lock-bound", "verdict"], rows,
              "Application benchmark: the drop-in's defaults against glibc")
    # "qlock+OPTION" (bench_apps.py --tools): a diagnostic's cost against
    # the plain drop-in, not an algorithm choice.
    tools = [c for c in apps.get("columns", []) if c.startswith("qlock+")]
    extra = [c for c in apps.get("columns", [])
             if c not in ("glibc", "qlock", "glibc-again", "qlock-baseline")
             and c not in tools]
    if extra:
        body = [[e["name"]] + [fmt_s(e["columns"].get(c, {}).get("ratio"))
                               for c in extra]
                for e in measured(apps)]
        doc.table(["program"] + ["`%s`" % c for c in extra], body,
                  "Speed ratio to glibc per drop-in algorithm choice "
                  "(median [IQR])")
    if tools:
        body = [[e["name"]] + [
            fmt_s(e["columns"].get(c, {}).get("vs_qlock", {}).get("ratio"), 3)
            for c in tools] for e in measured(apps)]
        doc.table(["program"] + ["`%s`" % c for c in tools], body,
                  "Cost of the drop-in's diagnostics: speed relative to the "
                  "plain drop-in in the same round (median [IQR])")
    if "qlock-baseline" in apps.get("columns", []):
        # bench_apps.py --baseline: another build's drop-in, same rounds.
        body = []
        for e in measured(apps):
            c = e["columns"].get("qlock-baseline", {})
            v = c.get("qlock_vs_baseline", {})
            body.append([e["name"], fmt_s(v.get("ratio"), 3),
                         fmt_s(v.get("cpu_ratio"), 3), fmt_s(c.get("ratio"))])
        doc.table(["program", "speed, this build / baseline",
                   "CPU per unit, this build / baseline",
                   "baseline / glibc"], body,
                  "This build's drop-in against the baseline build's (`%s`), "
                  "same rounds (median [IQR])" % apps.get("baseline"))
    fails = ["%s: %s" % (e["name"], e["verdict_reason"])
             for e in measured(apps) if e.get("verdict") == "fails"]
    if fails:
        doc.p("Why: " + "; ".join(fails) + ".")
    noisy = [e["name"] for e in measured(apps)
             if not e.get("aa_within_target")]
    if noisy:
        doc.p("A/A band wider than +-%d%% (a verdict there rests on a noisy "
              "baseline): %s." % (round(100 * rule.get("aa_target", 0.05)),
                                  ", ".join(noisy)))
