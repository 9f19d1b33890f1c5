#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The plots of the seed report (matplotlib, imported only when plotting):
published figures beside ours, as ratios where absolute units differ."""
import os
import sys
import textwrap

from report_model import col_ref, leading_int, table_rows

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
