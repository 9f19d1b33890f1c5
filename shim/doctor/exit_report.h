/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_STATS (exit_report.c): the report at exit, and the misuse handler that
 * counts for it.
 */
#ifndef QLOCK_SHIM_STATS_H
#define QLOCK_SHIM_STATS_H

#include <stddef.h>

/* Read QLOCK_STATS and QLOCK_VERBOSE, set the profile up (set-up, once). */
void shim_stats_setup(void);
/* The library's misuse handler while the drop-in runs: counts. */
void shim_on_misuse(const char *fn, const char *what, const void *lock);
/* The whole QLOCK_STATS report into buf (NUL-terminated, truncated to
 * size); returns its length.  Each section appends with shim_report_add(). */
size_t shim_stats_format(char *buf, size_t size);

#endif /* QLOCK_SHIM_STATS_H */
