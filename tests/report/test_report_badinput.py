#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`lockbench report` on bad input: for each case, status 2 and exactly
one line on stderr that starts with "lockbench report: " and names the
problem, never a Python traceback.  The cases: JSON with the right schema
string but a field missing, a field of the wrong type, a runs-free
document (the schema string alone, and a whole header with no
experiment), an -o directory that cannot be written, a file that is not
JSON, a file that does not exist, and a bad option.

usage: test_report_badinput.py LOCKBENCH FIXTURE.json
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def case(lockbench, name, args, match):
    res = subprocess.run([lockbench, "report"] + args, capture_output=True,
                         text=True, timeout=120)
    lines = res.stderr.splitlines()
    if res.returncode != 2:
        FAILS.append("%s: status %d, expected 2 (stderr: %r)"
                     % (name, res.returncode, res.stderr[-300:]))
    elif len(lines) != 1 or not lines[0].startswith("lockbench report: "):
        FAILS.append("%s: expected one 'lockbench report: ...' line on "
                     "stderr, got %r" % (name, res.stderr[-600:]))
    elif match not in lines[0]:
        FAILS.append("%s: %r does not say %r" % (name, lines[0], match))
    else:
        print("ok %s: %s" % (name, lines[0]))


def main(lockbench, fixture):
    with open(fixture) as f:
        good = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        def doc(name, change):
            d = copy.deepcopy(good)
            change(d)
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                json.dump(d, f)
            return path
        out = os.path.join(tmp, "out")

        def pop_threads(d):
            del d["experiments"][0]["threads"]

        def pop_kops(d):
            del d["experiments"][1]["points"][0]["runs"][0]["kops"]

        def str_reps(d):
            d["experiments"][0]["reps"] = "3"

        def str_threads(d):
            d["experiments"][0]["points"][0]["threads"] = "2"

        def no_runs(d):
            d["experiments"] = []

        case(lockbench, "missing field (experiment threads)",
             [doc("a", pop_threads), "-o", out], "missing required 'threads'")
        case(lockbench, "missing field (a run's kops)",
             [doc("b", pop_kops), "-o", out], "missing required 'kops'")
        case(lockbench, "mistyped field (reps a string)",
             [doc("c", str_reps), "-o", out], "reps")
        case(lockbench, "mistyped field (a point's threads a string)",
             [doc("d", str_threads), "-o", out], "threads")
        only = os.path.join(tmp, "schema-only.json")
        with open(only, "w") as f:
            json.dump({"schema": "qlock-lockbench/1"}, f)
        case(lockbench, "schema string only", [only, "-o", out],
             "malformed lockbench JSON")
        case(lockbench, "no experiments", [doc("e", no_runs), "-o", out],
             "no runs in it")
        blocker = os.path.join(tmp, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        case(lockbench, "unwritable -o (under a file)",
             [fixture, "-o", os.path.join(blocker, "report")],
             "cannot write the report there")
        notjson = os.path.join(tmp, "not.json")
        with open(notjson, "w") as f:
            f.write("{ no")
        case(lockbench, "not JSON", [notjson, "-o", out], notjson)
        case(lockbench, "missing file",
             [os.path.join(tmp, "absent.json"), "-o", out], "absent.json")
        case(lockbench, "no -o", [fixture], "-o")
    for msg in FAILS:
        print("FAIL report_badinput: " + msg)
    return 1 if FAILS else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
