#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A flame graph (SVG) from folded stacks: the lines `frame;frame;...;leaf
VALUE` that `qlock-run --profile=FILE.folded` writes (outermost frame
first, VALUE the nanoseconds waited there), as flamegraph.pl, inferno and
speedscope read them.  Python's standard library only.

    flamegraph.py FILE.folded [-o FILE.svg] [--title TEXT] [--unit ns|count]

Each box is a frame, as wide as the waiting under it, its callers below
it; hovering shows the frame, its share and its wait.  Identical stacks
are added up; lines that do not parse are counted and skipped."""
import argparse
import hashlib
import html
import sys

WIDTH = 1200          # px
ROW = 17              # px per frame
PAD_TOP = 40
PAD_BOTTOM = 24
FONT = 11             # px
CHAR_W = FONT * 0.59  # average glyph width, for trimming labels
MIN_W = 0.3           # px: narrower boxes are not drawn


class Node:
    __slots__ = ("name", "value", "kids")

    def __init__(self, name):
        self.name = name
        self.value = 0
        self.kids = {}


def parse(lines):
    """The tree of the folded stacks, and the number of bad lines."""
    root, bad = Node("all"), 0
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        stack, _, value = line.rpartition(" ")
        try:
            v = int(value)
        except ValueError:
            bad += 1
            continue
        if not stack or v < 0:
            bad += 1
            continue
        node = root
        node.value += v
        for frame in stack.split(";"):
            node = node.kids.setdefault(frame, Node(frame))
            node.value += v
    return root, bad


def depth_of(node):
    return 1 + max((depth_of(k) for k in node.kids.values()), default=0)


def color(name):
    """A warm colour that depends on the name only (stable across runs)."""
    h = hashlib.md5(name.encode()).digest()
    return "rgb(%d,%d,%d)" % (205 + h[0] % 50, 80 + h[1] % 130, h[2] % 55)


def fmt_value(v, unit):
    if unit != "ns":
        return "%d" % v
    for div, u in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if v >= div:
            return "%.3g %s" % (v / div, u)
    return "%d ns" % v


def render(root, title, unit):
    depth = depth_of(root)
    height = PAD_TOP + depth * ROW + PAD_BOTTOM
    total = root.value or 1
    scale = (WIDTH - 20) / total
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
        'viewBox="0 0 %d %d" font-family="Verdana, sans-serif" font-size="%d">'
        % (WIDTH, height, WIDTH, height, FONT),
        '<rect x="0" y="0" width="%d" height="%d" fill="#fdfdf6"/>' % (WIDTH, height),
        '<text x="%d" y="22" text-anchor="middle" font-size="15">%s</text>'
        % (WIDTH // 2, html.escape(title)),
        '<text x="10" y="%d" fill="#555">total %s; width = wait, callers below '
        'callees; hover for details</text>'
        % (height - 8, html.escape(fmt_value(root.value, unit))),
    ]

    def box(node, x, level):
        w = node.value * scale
        if w < MIN_W:
            return
        y = height - PAD_BOTTOM - (level + 1) * ROW
        label = "%s (%s, %.1f%%)" % (node.name, fmt_value(node.value, unit),
                                     100.0 * node.value / total)
        out.append('<g><title>%s</title><rect x="%.2f" y="%d" width="%.2f" '
                   'height="%d" fill="%s" rx="2"/>'
                   % (html.escape(label), x, y, w, ROW - 1,
                      "#d8d8d8" if level == 0 else color(node.name)))
        chars = int((w - 6) / CHAR_W)
        if chars >= 3:
            text = node.name if len(node.name) <= chars else node.name[:chars - 2] + ".."
            out.append('<text x="%.2f" y="%d">%s</text>'
                       % (x + 3, y + ROW - 5, html.escape(text)))
        out.append("</g>")
        for kid in sorted(node.kids.values(), key=lambda k: k.name):
            box(kid, x, level + 1)
            x += kid.value * scale

    box(root, 10.0, 0)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folded", metavar="FILE.folded")
    ap.add_argument("-o", "--output", metavar="FILE.svg",
                    help="default: FILE.folded with .svg for .folded")
    ap.add_argument("--title", default="lock waits by stack")
    ap.add_argument("--unit", choices=("ns", "count"), default="ns")
    a = ap.parse_args(argv)
    with open(a.folded) as f:
        root, bad = parse(f)
    if not root.value:
        print("%s: no stacks" % a.folded, file=sys.stderr)
        return 1
    out = a.output or (a.folded[:-len(".folded")] if a.folded.endswith(".folded")
                       else a.folded) + ".svg"
    with open(out, "w") as f:
        f.write(render(root, a.title, a.unit))
    print("%s: %d frames deep, %s%s" % (out, depth_of(root) - 1,
                                       fmt_value(root.value, a.unit),
                                       ", %d lines skipped" % bad if bad else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
