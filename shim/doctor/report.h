/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's reports (report.c): QLOCK_STATS (exit_report.c) and the
 * profile (profile.c) build theirs in a caller's buffer, one section
 * after another, and put it out in one write.
 */
#ifndef QLOCK_SHIM_REPORT_H
#define QLOCK_SHIM_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* A report being written: buf holds len bytes (NUL-terminated), at most
 * size - 1 of them. */
struct shim_report {
	char *buf;
	size_t size, len;
};

/* Append to the report, truncating at the end of the buffer. */
void shim_report_add(struct shim_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The lock event and futex counters per lock class (QLOCK_VERBOSE). */
void shim_report_counters(struct shim_report *r);
/* Write a report: on stderr (path NULL) or to the file path names (%p =
 * the pid), appended or, `replace`, replacing it. */
void shim_report_emit(const char *path, bool replace, const char *buf, size_t n);

#endif /* QLOCK_SHIM_REPORT_H */
