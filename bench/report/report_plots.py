#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The plots of the seed report (matplotlib, imported only when plotting):
published figures beside ours, as ratios where absolute units differ."""
import math
import os
import sys
import textwrap

from report_model import leading_int, table_rows

# ---- plots -------------------------------------------------------------------

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


# Published lines: one marker and dash style each, so two lines that lie on
# top of each other (seed 003's standalone and embedded) stay apart.
PUB_STYLES = [("o", "-"), ("^", ":"), ("D", "-."), ("v", "--")]
# The shading of the rows with more threads than CPUs here.
# Light orange with a sparse hatch: it shows on white (the legend's swatch)
# and leaves the points on it readable.
OVERSUB = dict(facecolor="#fdebd3", edgecolor="#eab676", hatch="/",
               lw=0, zorder=0)


def thread_axis(rows):
    """True when each row is its own thread count ("9 threads (1 socket)"),
    so the rows go on a thread axis; rows that share a thread count (reader
    percentages at 36 threads) are categories."""
    counts = [r.threads for r in rows]
    return None not in counts and len(set(counts)) == len(counts) and \
        all(leading_int(r.key) == r.threads for r in rows)


def offsets(xs, n, log):
    """Where the n published lines go at xs: side by side around each x
    (a few percent of the axis apart), so equal values do not hide."""
    if n < 2:
        return [xs]
    if log:
        return [[x * 2 ** (0.06 * (m - (n - 1) / 2)) for x in xs]
                for m in range(n)]
    step = min((b - a for a, b in zip(xs, xs[1:])), default=1) or 1
    return [[x + 0.08 * step * (m - (n - 1) / 2) for x in xs]
            for m in range(n)]


class RatioAxis:
    """A log-ratio y axis (a halving and a doubling the same height) whose
    limits come from the published ratios and the measured medians, not
    from the interval ends: an interval end beyond the limits is clipped
    at the edge and marked (a triangle with its value), so one outlier
    cannot flatten the published effect to a line near 1."""

    def __init__(self, ax):
        self.ax, self.core, self.clipped = ax, [1.0], False

    def keep(self, values):
        self.core += [v for v in values if v and v > 0]

    def finish(self):
        lo, hi = min(self.core), max(self.core)
        lo, hi = min(lo / 1.25, 0.8), max(hi * 1.25, 1.25)
        self.lo, self.hi = lo, hi
        self.ax.set_yscale("log")
        self.ax.set_ylim(lo, hi)
        cands = [t for t in (0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 1, 1.1,
                             1.25, 1.5, 2, 3, 4, 5, 8, 10) if lo <= t <= hi]
        # no two labels closer than a tenth of the axis: 1 first, then
        # outwards
        gap = math.log(hi / lo) / 10
        ticks = [1]
        for t in sorted(cands, key=lambda t: abs(math.log(t))):
            if all(abs(math.log(t / k)) >= gap for k in ticks):
                ticks.append(t)
        ticks.sort()
        self.ax.set_yticks(ticks)
        self.ax.set_yticklabels(["%gx" % t for t in ticks])
        self.ax.minorticks_off()

    def errorbar(self, xs, stats, **kw):
        """Medians with their min..max intervals, clipped to the axis;
        call after finish()."""
        lo, hi = self.lo, self.hi
        meds = [min(max(s[0], lo), hi) for s in stats]
        down = [m - max(s[1], lo) for m, s in zip(meds, stats)]
        up = [min(s[2], hi) - m for m, s in zip(meds, stats)]
        self.ax.errorbar(xs, meds, yerr=[down, up], **kw)
        for x, s in zip(xs, stats):
            for v, edge, mk, va in ((s[1], lo, "v", "bottom"),
                                    (s[2], hi, "^", "top")):
                if (v < edge) if mk == "v" else (v > edge):
                    self.clipped = True
                    self.ax.plot([x], [edge], marker=mk, color="black",
                                 ms=7, clip_on=False, zorder=5)
                    self.ax.annotate("%.2gx" % v, (x, edge),
                                     xytext=(6, 4 if mk == "v" else -10),
                                     textcoords="offset points", fontsize=7)

    def legend_note(self):
        """A legend entry for the clip marks, when there are any."""
        if self.clipped:
            self.ax.plot([], [], "^", color="black", ms=7,
                         label="interval end beyond the axis (its value)")


def merit_measured(merit):
    """False for a merit whose measured side lockbench has no counterpart
    for (seed 003's embedded lock): drawn published only."""
    return not merit.get("not_measured")


def plot_ratio_lines(plt, seed, plot, run):
    tables = {t["id"]: t for t in seed["tables"]}
    ids = plot.get("tables", [plot.get("table")])
    fig, axes = plt.subplots(1, len(ids), figsize=(6.4 * len(ids), 4.8),
                             squeeze=False)
    for ax, tid in zip(axes[0], ids):
        t = tables[tid]
        rows = table_rows(t, run)
        numeric = thread_axis(rows)
        xs = [r.threads for r in rows] if numeric else list(range(len(rows)))
        log = bool(numeric and plot.get("logx"))
        yaxis = RatioAxis(ax)
        drawn, series = set(), []
        merits = [m for m in t["merits"] if not m.get("direction")]
        pub_xs = offsets(xs, len(merits), log)
        for m, merit in enumerate(merits):
            color = COLORS[m % len(COLORS)]
            marker, dash = PUB_STYLES[m % len(PUB_STYLES)]
            pub = [r.published_ratio(t, merit) for r in rows]
            yaxis.keep(pub)
            measured = merit_measured(merit)
            ax.plot(pub_xs[m], pub, marker=marker, ls=dash, color=color,
                    label="%s, published%s" % (
                        merit["label"], "" if measured
                        else " (not measured here: %s)"
                        % merit["not_measured"]))
            if not measured:
                continue
            locks = rows[0].locks(t, merit) if rows else None
            pts = [(x, r.ratio(t, merit)) for x, r in zip(xs, rows)]
            pts = [(x, s) for x, s in pts if s]
            if pts and locks not in drawn:  # two merits may be one ratio here
                drawn.add(locks)
                yaxis.keep(s[0] for _, s in pts)
                series.append((pts, color, "%s / %s, here: median of the "
                               "paired ratios [min..max]" % locks))
        yaxis.finish()
        for pts, color, label in series:
            yaxis.errorbar([x for x, _ in pts], [s for _, s in pts],
                           fmt="s--", color=color, mfc="white", capsize=4,
                           label=label)
        yaxis.legend_note()
        ax.axhline(1, color="grey", lw=0.8)
        if log:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs] if numeric
                           else [r.key for r in rows])
        ax.set_xlabel(plot.get("xlabel", "threads" if numeric
                               else t["columns"][0]))
        shade_oversubscribed(ax, rows, xs, numeric, run)
        ax.set_ylabel(two_lines(plot.get("ylabel", "ratio") +
                                ", log scale"), fontsize=9)
        ax.set_title(wrapped(t["caption"], 75), fontsize=9)
        ax.grid(alpha=0.3)
        # below the axes: inside, it hides points
        ax.legend(fontsize=8, loc="upper center", ncol=1, frameon=False,
                  bbox_to_anchor=(0.5, -0.16))
    return fig


def shade_oversubscribed(ax, rows, xs, numeric, run):
    """Shade the rows with more threads than online CPUs here."""
    over = [x for x, r in zip(xs, rows) if r.oversub]
    if not over:
        return
    lo, hi = ax.get_xlim()
    if numeric:
        ax.axvspan(max(run.cpus + 0.5, lo), hi, label="oversubscribed here "
                   "(more threads than the %d CPUs)" % run.cpus, **OVERSUB)
    else:
        for i, x in enumerate(over):
            ax.axvspan(max(x - 0.5, lo), min(x + 0.5, hi), label=None if i
                       else "oversubscribed here (more threads than the %d "
                       "CPUs)" % run.cpus, **OVERSUB)
    ax.set_xlim(lo, hi)


def plot_ratio_bars(plt, seed, plot, run):
    """Seed 001: per table, the published ratio of sums, ours as a ratio
    of sums, and ours as the median of the paired ratios [min..max]."""
    tables = {t["id"]: t for t in seed["tables"]}
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    yaxis = RatioAxis(ax)
    bars = []
    for i, tid in enumerate(plot["tables"]):
        t = tables[tid]
        merit = t["merits"][0]
        row = table_rows(t, run)[-1]  # the total
        pub, sums = row.published_ratio(t, merit), row.sum_ratio(t, merit)
        ours = row.ratio(t, merit)
        yaxis.keep([pub, sums, ours[0] if ours else None])
        bars.append((i, pub, sums, ours))
    yaxis.finish()
    base = 1.0  # bars grow from 1 (no change), up or down
    for i, pub, sums, ours in bars:
        first = i == 0
        ax.bar(i - 0.27, pub - base, 0.25, bottom=base, color=COLORS[0],
               label="published: ratio of the summed runs" if first else None)
        if sums:
            ax.bar(i, sums - base, 0.25, bottom=base, color=COLORS[1],
                   alpha=0.55, label="here: ratio of the summed reps"
                   if first else None)
        if ours:
            ax.bar(i + 0.27, ours[0] - base, 0.25, bottom=base,
                   color=COLORS[1], label="here: median of the paired "
                   "per-rep ratios [min..max]" if first else None)
            yaxis.errorbar([i + 0.27], [ours], fmt="none", ecolor="black",
                           capsize=6)
    yaxis.legend_note()
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xticks(range(len(plot["tables"])))
    ax.set_xticklabels(plot["labels"])
    ax.set_xlabel(plot.get("xlabel", "where the data the lock guards lies"))
    ax.set_ylabel(two_lines(plot["ylabel"] + ", log scale"), fontsize=9)
    ax.legend(fontsize=8, loc="upper center", frameon=False,
              bbox_to_anchor=(0.5, -0.16))
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
    ax.set_xlabel("lock (the patch's column names)")
    ax.set_ylabel("per-thread ops/s relative to the mean\n(bar: min..max; "
                  "tick: the mean)", fontsize=9)
    ax.set_title("Fairness, %s threads" % next(iter(rows.values())).threads,
                 fontsize=9)
    # beside the axes: inside, it covers a bar
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1),
              frameon=False)
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
        ax.set_xlabel("lock and critical-section load L")
        ax.set_ylabel("ops/s per thread (log scale)")
        ax.set_title(wrapped(t["caption"], 85), fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    return fig


def wrapped(text, width):
    return "\n".join(textwrap.wrap(text, width))


def two_lines(label):
    """An axis label as what / (how to read it): two lines broken at the
    parenthesis, not in the middle of a phrase."""
    head, paren, tail = label.partition(" (")
    return head + ("\n(" + tail if paren else "")


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
    matplotlib.rcParams["hatch.linewidth"] = 0.6
    os.makedirs(plot_dir, exist_ok=True)
    for seed in pub["seeds"]:
        for i, plot in enumerate(seed.get("plots", [])):
            fig = PLOTTERS[plot["kind"]](plt, seed, plot, run)
            fig.suptitle("seed %s: %s" % (seed["id"], seed["title"]),
                         fontsize=10)
            # room for the suptitle, and for a figure-wide legend below
            fig.tight_layout(rect=(0, 0.08 if fig.legends else 0, 1, 0.96))
            name = os.path.join(plot_dir, "seed-%s-%d" % (seed["id"], i + 1))
            # "tight": the canvas grows to hold legends below the axes
            fig.savefig(name + ".svg", metadata={"Date": None},
                        bbox_inches="tight")
            fig.savefig(name + ".png", dpi=110, bbox_inches="tight")
            plt.close(fig)
    return None
