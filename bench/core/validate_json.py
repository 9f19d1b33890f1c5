#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Validate a JSON document against a JSON Schema (draft 2020-12), stdlib only.

Supports the subset bench/core/lockbench.schema.json and
bench/map/lockbench-map.schema.json use: type, const, enum,
properties, required, additionalProperties (bool or schema), items,
minItems, minimum, maximum, anyOf, $ref to "#/$defs/...".  Any other
keyword is an error, so the schema cannot silently use something this
validator ignores.

usage: validate_json.py SCHEMA DOCUMENT
       validate_json.py --self-test SCHEMA   (checks that drift is caught;
                                              either schema)
"""
import json
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


class Invalid(Exception):
    pass


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise Invalid("unsupported $ref " + ref)
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def check(root, schema, value, path):
    for key in schema:
        if key not in ANNOTATIONS and key not in CHECKS:
            raise Invalid("%s: schema keyword %r not supported" % (path, key))
    for key, arg in schema.items():
        if key in CHECKS:
            CHECKS[key](root, schema, arg, value, path)


def k_ref(root, schema, arg, value, path):
    check(root, resolve(root, arg), value, path)


def k_type(root, schema, arg, value, path):
    names = arg if isinstance(arg, list) else [arg]
    if not any(TYPES[n](value) for n in names):
        raise Invalid("%s: %r is not of type %s" % (path, value, names))


def k_const(root, schema, arg, value, path):
    if value != arg:
        raise Invalid("%s: %r != const %r" % (path, value, arg))


def k_enum(root, schema, arg, value, path):
    if value not in arg:
        raise Invalid("%s: %r not in %r" % (path, value, arg))


def k_properties(root, schema, arg, value, path):
    if isinstance(value, dict):
        for name, sub in arg.items():
            if name in value:
                check(root, sub, value[name], path + "." + name)


def k_required(root, schema, arg, value, path):
    if isinstance(value, dict):
        for name in arg:
            if name not in value:
                raise Invalid("%s: missing required %r" % (path, name))


def k_additional(root, schema, arg, value, path):
    if not isinstance(value, dict):
        return
    known = schema.get("properties", {})
    for name, v in value.items():
        if name in known:
            continue
        if arg is False:
            raise Invalid("%s: unexpected property %r" % (path, name))
        if isinstance(arg, dict):
            check(root, arg, v, path + "." + name)


def k_items(root, schema, arg, value, path):
    if isinstance(value, list):
        for i, v in enumerate(value):
            check(root, arg, v, "%s[%d]" % (path, i))


def k_min_items(root, schema, arg, value, path):
    if isinstance(value, list) and len(value) < arg:
        raise Invalid("%s: fewer than %d items" % (path, arg))


def k_minimum(root, schema, arg, value, path):
    if TYPES["number"](value) and value < arg:
        raise Invalid("%s: %r < minimum %r" % (path, value, arg))


def k_maximum(root, schema, arg, value, path):
    if TYPES["number"](value) and value > arg:
        raise Invalid("%s: %r > maximum %r" % (path, value, arg))


def k_any_of(root, schema, arg, value, path):
    errors = []
    for sub in arg:
        try:
            check(root, sub, value, path)
            return
        except Invalid as e:
            errors.append(str(e))
    raise Invalid("%s: no anyOf branch matched (%s)" % (path, "; ".join(errors)))


CHECKS = {
    "$ref": k_ref, "type": k_type, "const": k_const, "enum": k_enum,
    "properties": k_properties, "required": k_required,
    "additionalProperties": k_additional, "items": k_items,
    "minItems": k_min_items, "minimum": k_minimum, "maximum": k_maximum,
    "anyOf": k_any_of,
}


def validate(schema, doc):
    check(schema, schema, doc, "$")


def sample_document():
    run = {"rep": 1, "status": "ok", "elapsed_ms": 50.1, "ops": 10,
           "reads": 5, "writes": 5, "kops": 0.2,
           "per_thread_ops_s": {"min": 1.0, "avg": 2.0, "max": 3.0},
           "reader_rate": None, "writer_rate": 2.0,
           "futex_calls": {"write_lock": 0, "write_unlock": 0, "read_lock": 0,
                           "read_unlock": 0, "other": 0},
           "lock_events": {"spin": 3}}
    spread = {"median": 1.0, "min": 1.0, "max": 1.0, "n": 1}
    return {"schema": "qlock-lockbench/1", "lockbench_version": "1.0",
            "host": {"online_cpus": 2}, "notes": [],
            "load": {"loadavg_before": [0.5, 0.4, 0.3],
                     "loadavg_after": [1.5, 0.6, 0.35], "wall_s": 12.5,
                     "busy_cpus": 1.9, "own_busy_cpus": 1.8,
                     "other_busy_cpus": 0.1},
            "experiments": [{
                "name": "cli", "title": "t", "workload": "rate", "reps": 1,
                "baseline": "a", "aa_control": {"lock": "a", "copy": "a#2"},
                "primary": {"unit": "kops/s", "higher_is_better": True},
                "params": {"iterations": 1, "duration_s": 0.1, "read_ratio": 1,
                           "write_ratio": 1, "xthread": False, "load": 1,
                           "lock_latency": 1, "sleep_per_1024": 0,
                           "data": "other-line", "pin": False,
                           "max_time_s": 60},
                "locks": ["a"], "threads": [1],
                "points": [{"lock": "a", "threads": 1, "primary": spread,
                            "ratio_to_baseline": spread, "runs": [run]}]}]}


def sample_map():
    """A `lockbench map --json` document: one grid cell, one app cell."""
    spread = {"med": 1.0, "min": 0.9, "max": 1.1, "n": 3}

    def lock(name):
        return {"lock": name, "kops": spread, "ratio_to_glibc": spread,
                "slowest_share": spread, "wait_p50_ns": spread,
                "wait_p99_ns": spread, "wait_max_ns": spread,
                "reader_rate": None, "writer_rate": spread,
                "cpu_busy": spread, "ops_per_cpu_s": spread,
                "ops_per_cpu_s_ratio_to_glibc": spread}
    return {"schema": "qlock-lockbench-map/1", "lockbench_version": "1.0",
            "grid": "short", "dropin": False, "hogs": 0, "reps": 3,
            "duration_s": 0.1,
            "run_s": "duration_s x max(1, threads / 8)", "wall_s": 1.5,
            "machine": {"cpu_model": "x", "online_cpus": 2, "kernel": "6",
                        "arch": "x86_64", "glibc": "2.36",
                        "date_utc": "2000-01-01T00:00:00Z"},
            "wait_timestamp": {"source": "rdtsc", "cost_ns": 7.5,
                               "ticks_per_ns": 2.1},
            "cells": [
                {"family": "mutex", "threads": 2, "cs_pauses": 1,
                 "gap_pauses": 0, "read_pct": 0, "split": False,
                 "locks": [lock("pthread-mutex"), lock("tp-mutex")]},
                {"family": "apps", "pattern": "cond-queue", "threads": 4,
                 "setup": {"producers": 2, "consumers": 2, "capacity": 16},
                 "locks": [lock("pthread-mutex"), lock("tp-mutex")]}]}


MAP_DRIFTS = [
    lambda d: d.pop("machine"),
    lambda d: d.update(grid="tiny"),
    lambda d: d["cells"][0].pop("cs_pauses"),
    lambda d: d["cells"][0].update(family="spin"),
    lambda d: d["cells"][1].update(pattern="holder-naps"),
    lambda d: d["cells"][1].pop("setup"),
    lambda d: d["cells"][1]["setup"].pop("capacity"),
    lambda d: d["cells"][1]["setup"].update(capacity=0),
    lambda d: d["cells"][1].update(cs_pauses=1),
    lambda d: d["cells"][1]["locks"][0].pop("kops"),
    lambda d: d["cells"][1]["locks"][0]["ops_per_cpu_s"].update(n=0),
    lambda d: d["cells"][1]["locks"][1].update(extra=1),
    lambda d: d["cells"][1].update(locks=[]),
]


def self_test(schema):
    """The validator must accept a good document and reject each drift."""
    if schema.get("properties", {}).get("schema", {}).get("const") == \
            "qlock-lockbench-map/1":
        return drift_test(schema, sample_map, MAP_DRIFTS)
    drifts = [
        lambda d: d.pop("notes"),
        lambda d: d.update(extra=1),
        lambda d: d["experiments"][0].update(workload="spin"),
        lambda d: d["experiments"][0]["points"][0]["runs"][0].pop("kops"),
        lambda d: d["experiments"][0]["points"][0]["runs"][0].update(ops=-1),
        lambda d: d["experiments"][0]["points"][0]["runs"][0].update(ops="1"),
        lambda d: d["experiments"][0]["points"][0]["runs"][0]["lock_events"]
        .update(spin=1.5),
        lambda d: d["experiments"][0]["params"].update(data="far"),
        lambda d: d.update(schema="qlock-lockbench/2"),
        lambda d: d.pop("load"),
        lambda d: d["load"].update(loadavg_before=[1, 2]),
        lambda d: d["load"].pop("other_busy_cpus"),
        lambda d: d["experiments"][0].pop("aa_control"),
        lambda d: d["experiments"][0].update(aa_control={"lock": "a"}),
    ]
    return drift_test(schema, sample_document, drifts)


def drift_test(schema, sample, drifts):
    validate(schema, sample())
    for i, drift in enumerate(drifts):
        doc = sample()
        drift(doc)
        try:
            validate(schema, doc)
        except Invalid:
            continue
        print("self-test: drift %d was not detected" % i)
        return 1
    print("self-test: ok (%d drifts rejected)" % len(drifts))
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        with open(argv[2]) as f:
            return self_test(json.load(f))
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    with open(argv[2]) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            print("%s: not JSON: %s" % (argv[2], e))
            return 1
    try:
        validate(schema, doc)
    except Invalid as e:
        print("%s: INVALID: %s" % (argv[2], e))
        return 1
    print("%s: valid against %s" % (argv[2], argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
