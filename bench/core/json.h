/* SPDX-License-Identifier: MIT */
/*
 * JSON writing for lockbench's documents (out_data.c: the run document,
 * host.c: its "host" object, map_out.c: the map document).  Only values:
 * the documents' structure stays with their writers.
 */
#ifndef QLOCK_BENCH_JSON_H
#define QLOCK_BENCH_JSON_H

#include <stdbool.h>
#include <stdio.h>

/* A JSON string literal, escaped (NULL: ""). */
void lb_json_str(FILE *f, const char *s);
/* A number, or null where it is absent or not finite (JSON has no
 * inf/nan). */
void lb_json_num(FILE *f, double v, bool present);
/* `, "key": "value"` inside an object; null for a NULL or empty value. */
void lb_json_kv_str(FILE *f, const char *key, const char *v);
/* `, "key": count`; null for 0 (a count that could not be read). */
void lb_json_kv_count(FILE *f, const char *key, unsigned v);

#endif /* QLOCK_BENCH_JSON_H */
