#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest docs_results_cited: the result files under bench/results and the
documents that quote them agree.

Every name of a result file that README.md, CHANGELOG.md, docs/*.md, the
report scripts, the tests, the scripts or the CMake files mention (a path
under bench/results/, or a name with the prefixes the result files use
that ends in a result file's extension or names the machine it ran on;
{a,b} alternatives and * wildcards are expanded) must exist under
bench/results, and every entry of bench/results (a file, or a directory
as a whole) must be cited by README.md, CHANGELOG.md or a docs/*.md page.

usage: check_results_cited.py [SOURCE_DIR]
"""
import fnmatch
import glob
import os
import re
import sys

PREFIXES = ("map-", "tune-", "shim-cost-", "bench-apps-", "seed", "rwlock-",
            "serial-", "glib-", "lockdep-", "profile-", "spin-", "qlock-run-")
TOKEN = re.compile(r"[A-Za-z0-9_.{},*/-]+")
# A result file's name: its extension, or the machine it ran on (the
# directories of several runs carry no extension).
RESULT = re.compile(r"\.(json|txt|folded|svg|\{[a-z,]+\})$|intel-xeon|amd-epyc")


def expand(pattern):
    """Brace alternatives, left to right: a{b,c}d -> abd, acd."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(","):
        out += expand(pattern[:m.start()] + alt + pattern[m.end():])
    return out


def citations(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for tok in TOKEN.findall(text):
        tok = tok.rstrip(".,/")
        name = tok.split("bench/results/", 1)[-1]
        if "bench/results/" not in tok and not (
                name.startswith(PREFIXES) and RESULT.search(name)):
            continue
        yield name


def main(src):
    results = os.path.join(src, "bench", "results")
    entries = sorted(os.listdir(results))
    files = []   # every path under bench/results, relative to it
    for root, _, names in os.walk(results):
        for n in names:
            files.append(os.path.relpath(os.path.join(root, n), results))
    docs = [os.path.join(src, "README.md"), os.path.join(src, "CHANGELOG.md")]
    docs += sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    others = []
    for sub, pats in (("bench/report", ("*.py",)), ("tests", ("*.py", "*.sh", "*.c", "*.cmake", "CMakeLists.txt")),
                      ("scripts", ("*",)), ("bench", ("CMakeLists.txt",)), (".", ("CMakeLists.txt", "Makefile"))):
        for pat in pats:
            others += glob.glob(os.path.join(src, sub, "**", pat), recursive=True)
    bad, cited = [], set()
    for path in [d for d in docs if os.path.exists(d)] + sorted(set(others)):
        if os.sep + "results" + os.sep in path or not os.path.isfile(path):
            continue
        is_doc = path in docs
        for name in citations(path):
            for pat in expand(name):
                hits = [f for f in files
                        if fnmatch.fnmatch(f, pat) or f.startswith(pat.rstrip("/") + "/")]
                if not hits:
                    bad.append("%s cites %s: no such file under bench/results"
                               % (os.path.relpath(path, src), pat))
                if is_doc:
                    cited.update(h.split("/", 1)[0] for h in hits)
    for e in entries:
        if e not in cited:
            bad.append("bench/results/%s is cited by no document" % e)
    for line in bad:
        print("FAIL docs_results_cited: " + line)
    if bad:
        return 1
    print("docs_results_cited: ok (%d entries under bench/results, all cited; "
          "every citation found)" % len(entries))
    return 0


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1
                  else os.path.join(here, "..", "..")))
