# SPDX-License-Identifier: MIT
"""The performance map (`lockbench map --json`, docs/performance.md) in the
report's machine section: per family (mutex, rwlock, and the app cells,
apps) a heat table of each lock's throughput ratio to glibc per cell
(median [per-rep min..max]), the slowest thread's share of the mean rate,
and the wait p99 against glibc's (app cells: their ops per CPU-second
against glibc's too); plus one line on how noisy the run was, from the
glibc-again A/A column.

A cell of a table is text, or (text, css class) where the class colours the
HTML (heat-*); README.md shows the text only.
"""
import json
import os

from report_model import fmt_num

SCHEMA = "qlock-lockbench-map/"
BASELINES = ("pthread-mutex", "pthread-rwlock")
CONTROL = "glibc-again"
# The map's own unfairness mark (bench/map/map_out.c): a slowest thread below
# this share of the mean rate is flagged '!'.
STARVED_SHARE = 0.30
AXES = ("threads", "cs_pauses", "gap_pauses")
FAMILIES = ("mutex", "rwlock", "apps")

HEAT_CSS = """
td.heat-win2 { background: #7fc97f; } td.heat-win1 { background: #ccebc5; }
td.heat-even { background: #f4f4f4; }
td.heat-loss1 { background: #fdd0a2; } td.heat-loss2 { background: #f4a582; }
td.heat-loss3 { background: #d6604d; color: #fff; }
td.noisy { font-style: italic; }
"""


class MapError(ValueError):
    pass


def load_map(path):
    """(map document, None) or (None, one line saying why there is none)."""
    try:
        with open(path) as f:
            doc = json.load(f)
        check_map(doc)
    except (OSError, ValueError) as err:
        return None, "%s: %s" % (path, err)
    return doc, None


def check_map(doc):
    """Raises MapError naming the first thing the map JSON lacks."""
    if not isinstance(doc, dict) or \
            not str(doc.get("schema", "")).startswith(SCHEMA):
        raise MapError("not a `lockbench map --json` file (schema %s*)"
                       % SCHEMA)
    cells = doc.get("cells")
    if not isinstance(cells, list) or not cells:
        raise MapError("no cells")
    for i, c in enumerate(cells):
        locks = c.get("locks") if isinstance(c, dict) else None
        if not isinstance(locks, list) or not locks or \
                c.get("family") not in FAMILIES:
            raise MapError("cell %d has no family or no locks" % i)
        if c["family"] == "apps" and not isinstance(c.get("pattern"), str):
            raise MapError("app cell %d has no pattern" % i)
        axes = ("threads",) if c["family"] == "apps" else \
            AXES + (("read_pct",) if c["family"] == "rwlock" else ())
        for axis in axes:
            if not isinstance(c.get(axis), int):
                raise MapError("cell %d has no %s" % (i, axis))
        for lk in locks:
            if not isinstance(lk, dict) or "lock" not in lk:
                raise MapError("cell %d: a lock without a name" % i)
            # null: no rep had the figure (a lock that made no progress)
            r = lk.get("ratio_to_glibc")
            if r is not None and not (isinstance(r, dict) and isinstance(
                    r.get("med"), (int, float))):
                raise MapError("cell %d: %s's ratio_to_glibc is not "
                               "{med, min, max, n}" % (i, lk["lock"]))


# ---- the numbers ---------------------------------------------------------


def stat(lk, key, field="med"):
    v = lk.get(key)
    return v.get(field) if isinstance(v, dict) else None


def baseline(cell):
    for lk in cell["locks"]:
        if lk["lock"] in BASELINES:
            return lk
    return cell["locks"][0]


def cell_label(c):
    if c["family"] == "apps":
        return "%s, %d thr" % (c["pattern"], c["threads"])
    s = "%d thr, cs %d, gap %d" % (c["threads"], c["cs_pauses"],
                                   c["gap_pauses"])
    if c["family"] == "rwlock":
        s += ", %d%% reads%s" % (c["read_pct"],
                                  ", split" if c.get("split") else "")
    return s


def columns(cells):
    """The locks of a family in the map's order, glibc's own first."""
    names = []
    for c in cells:
        for lk in c["locks"]:
            if lk["lock"] not in names:
                names.append(lk["lock"])
    return names


def find(cell, name):
    for lk in cell["locks"]:
        if lk["lock"] == name:
            return lk
    return None


def heat(ratio, higher_is_better=True):
    """css class for a ratio to glibc (after inverting when lower wins)."""
    if ratio is None or ratio <= 0:
        return ""
    r = ratio if higher_is_better else 1 / ratio
    for bound, cls in ((0.33, "heat-loss3"), (0.67, "heat-loss2"),
                       (0.9, "heat-loss1"), (1.1, "heat-even"),
                       (1.5, "heat-win1")):
        if r < bound:
            return cls
    return "heat-win2"


def ratio_cell(lk):
    med, lo, hi = (stat(lk, "ratio_to_glibc", f)
                   for f in ("med", "min", "max"))
    if med is None:
        return "-"
    text = "%.2f" % med
    cls = heat(med)
    if lo is not None and hi is not None and stat(lk, "ratio_to_glibc",
                                                   "n") != 1:
        text += " [%.2f..%.2f]" % (lo, hi)
        if lo <= 1 <= hi:
            cls += " noisy"
    return (text, cls)


def share_cell(lk):
    s = stat(lk, "slowest_share")
    if s is None:
        return "-"
    starved = s < STARVED_SHARE
    return ("%.2f%s" % (s, "!" if starved else ""),
            "heat-loss3" if starved else "")


def p99_cell(lk, base):
    mine, glibc = stat(lk, "wait_p99_ns"), stat(base, "wait_p99_ns")
    if mine is None or not glibc:
        return "-"
    r = mine / glibc
    return ("%.2f" % r if r < 100 else "%.3g" % r, heat(r, False))


def cpu_cell(lk):
    v = stat(lk, "cpu_busy")
    return "-" if v is None else "%.2f" % v


def per_cpu_cell(lk):
    v = stat(lk, "ops_per_cpu_s_ratio_to_glibc")
    return "-" if v is None else ("%.2f" % v, heat(v))


# ---- the section ---------------------------------------------------------


def map_title(m):
    return "Performance map against glibc (%s grid%s%s)" % (
        m.get("grid", "?"), ", through the pthread drop-in"
        if m.get("dropin") else "",
        ", %d busy processes beside every cell" % m["hogs"]
        if m.get("hogs") else "")


def map_params(m, path):
    mach = m.get("machine") or {}
    return ("`%s`: `lockbench map%s%s%s`, %s reps of %s s per lock and "
            "cell, interleaved; %s CPUs (%s), glibc %s, %s; %s s in all." % (
                os.path.basename(path),
                " --short" if m.get("grid") == "short" else "",
                " --dropin" if m.get("dropin") else "",
                " --hogs %d" % m["hogs"] if m.get("hogs") else "",
                m.get("reps", "?"),
                m.get("duration_s", "?"), mach.get("online_cpus", "?"),
                mach.get("cpu_model", "?"), mach.get("glibc", "?"),
                mach.get("date_utc", "?"), m.get("wall_s", "?")))


def noise_line(family, cells):
    meds = [stat(lk, "ratio_to_glibc") for lk in
            (find(c, CONTROL) for c in cells) if lk]
    meds = [v for v in meds if v is not None]
    if not meds:
        return ("Noise (%s): no `%s` column (glibc against itself) in this "
                "map, so its noise is unknown; read ratios near 1 as no "
                "difference." % (family, CONTROL))
    calm = sum(1 for v in meds if 0.9 <= v <= 1.1)
    return ("Noise (%s): `%s` (glibc run again, against itself) scores "
            "%.2f..%.2f over %d cells, within 0.9..1.1 in %d: a qlock ratio "
            "inside that range is no measured difference on this run." % (
                family, CONTROL, min(meds), max(meds), len(meds), calm))


def add_family(doc, m, family, cells):
    names = columns(cells)
    base = baseline(cells[0])["lock"]
    others = [n for n in names if n != base]
    rows = [[cell_label(c)] + [ratio_cell(find(c, n)) if find(c, n)
                               else "-" for n in others] for c in cells]
    doc.table(["cell"] + others, rows,
              "%s: throughput / `%s`, median [per-rep min..max]; "
              "above 1 is faster than glibc" % (family, base))
    rows = [[cell_label(c)] + [share_cell(find(c, n)) if find(c, n)
                               else "-" for n in names] for c in cells]
    doc.table(["cell"] + names, rows,
              "%s: slowest thread's rate / the mean thread's (median; 1 is "
              "fair, ! below %.2f)" % (family, STARVED_SHARE))
    rows = [[cell_label(c), fmt_num(stat(baseline(c), "wait_p99_ns"))]
            + [p99_cell(find(c, n), baseline(c)) if find(c, n) else "-"
               for n in others] for c in cells]
    doc.table(["cell", "%s p99 ns" % base] + others, rows,
              "%s: wait p99 / `%s`'s wait p99 (medians; below 1 waits "
              "less)" % (family, base))
    if any(stat(lk, "cpu_busy") is not None for c in cells
           for lk in c["locks"]):
        rows = [[cell_label(c)] + [cpu_cell(find(c, n)) if find(c, n)
                                   else "-" for n in names] for c in cells]
        doc.table(["cell"] + names, rows,
                  "%s: CPUs busy, CPU-seconds per second of the run "
                  "(median; a lock whose waiters sleep leaves CPUs idle, "
                  "one whose waiters spin keeps them busy)" % family)
    if family == "apps":
        rows = [[cell_label(c)] + [per_cpu_cell(find(c, n)) if find(c, n)
                                   else "-" for n in others] for c in cells]
        doc.table(["cell"] + others, rows,
                  "apps: operations per CPU-second / `%s`'s (median "
                  "ratio; above 1 does the work on fewer CPU cycles)" % base)
    floor = (m.get("wait_timestamp") or {}).get("cost_ns")
    if floor:
        doc.p("The smallest wait the map reports is the cost of its "
              "timestamp (%s ns here: no wait), so p99s at that floor are "
              "uncontended acquisitions and their ratio is 1."
              % fmt_num(floor))
    doc.p(noise_line(family, cells))


def add_map_section(doc, path, m):
    doc.h(3, map_title(m))
    doc.p(map_params(m, path) + "  Colours: green faster (or waiting less) "
          "than glibc, red slower, grey within 10%; italics: the per-rep "
          "spread covers 1.")
    for family in FAMILIES:
        cells = [c for c in m["cells"] if c["family"] == family]
        if cells and family == "apps":
            doc.p("The app cells use a mutex as programs do: the holder "
                  "yields (sysbench threads) or sleeps, producers and "
                  "consumers meet on condition variables, CPython's GIL is "
                  "handed over on timed waits (docs/lockbench.md).  Only "
                  "locks with a condition variable run them.")
        if cells:
            add_family(doc, m, family, cells)


def add_maps(doc, maps):
    """maps: [(path, document or None, problem or None)]."""
    if not maps:
        doc.p("No performance map: `make map` writes one to "
              "`build/map-short.json` (3-4 minutes), which the next "
              "`make bench` shows here (docs/bench-report.md).")
    for path, m, problem in maps:
        if m is None:
            doc.p("No performance map: %s." % problem)
        else:
            add_map_section(doc, path, m)
