/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_STATS: at exit, the algorithms in use, the misuse the locks
 * detected, the locks that cost the most waiting and (QLOCK_VERBOSE)
 * every non-zero lock event and futex counter per lock class, on stderr (QLOCK_STATS=1) or in a file (QLOCK_STATS=PATH, %p =
 * the pid), in one write (appended, so the processes of one run can share a file).
 *
 * Misuse (unlocking a mutex nobody holds, ...) is counted, not fatal: a
 * program that runs under glibc must keep running under the drop-in, so
 * the shim installs its own misuse handler, which returns (the lock then
 * answers as glibc's would; include/qlock/qlock.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/stats.h"

#include "lockstat.h"
#include "profile.h"
#include "shim.h"

bool shim_stats_on;
static uint64_t misuse_count;
static const char *misuse_fn, *misuse_what; /* the first one */

void shim_on_misuse(const char *fn, const char *what, const void *lock)
{
	(void)lock;
	if (qa_fetch_add(&misuse_count, 1) == 0) {
		qa_write(&misuse_what, what);
		qa_write(&misuse_fn, fn);
	}
}

/* Append to the report, truncating at the end of the buffer. */
void shim_report_add(struct shim_report *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->len + 1 >= r->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->len, r->size - r->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->len += (size_t)n < r->size - r->len ? (size_t)n : r->size - r->len - 1;
}

void shim_report_counters(struct shim_report *r)
{
	static const char *const fxn[QC_NR_FX] = { "wait", "wake", "woken" };

	for (int c = 0; c < QC_NR_CLASSES; c++) {
		struct qc_class_stats s;
		bool any = false;

		qc_stats_read((enum qc_class)c, &s);
		for (int e = 0; e < QC_NR_EVENTS; e++)
			any |= s.ev[e] != 0;
		for (int o = 0; o < QC_NR_OPS; o++)
			for (int f = 0; f < QC_NR_FX; f++)
				any |= s.fx[o][f] != 0;
		if (!any)
			continue;
		shim_report_add(r, "libqlock-pthread: %-10s", qc_class_name((enum qc_class)c));
		for (int e = 0; e < QC_NR_EVENTS; e++)
			if (s.ev[e])
				shim_report_add(r, " %s=%llu", qc_event_name((enum qc_event)e),
						(unsigned long long)s.ev[e]);
		for (int o = 0; o < QC_NR_OPS; o++)
			for (int f = 0; f < QC_NR_FX; f++)
				if (s.fx[o][f])
					shim_report_add(r, " futex_%s[%s]=%llu", fxn[f],
							qc_op_name((enum qc_op)o),
							(unsigned long long)s.fx[o][f]);
		shim_report_add(r, "\n");
	}
}

/* The whole report, one section after another; a new section is one
 * more call here. */
size_t shim_stats_format(char *buf, size_t size)
{
	struct shim_report r = { buf, size, 0 };
	uint64_t n = qa_read(&misuse_count);
	const char *fn = qa_read(&misuse_fn), *what = qa_read(&misuse_what);

	if (size)
		buf[0] = '\0';
	shim_report_add(&r, "libqlock-pthread: mutex=%s rwlock=%s spin=%s\n",
			qlock_pthread_algorithm("mutex"),
			qlock_pthread_algorithm("rwlock"),
			qlock_pthread_algorithm("spin"));
	if (n)
		shim_report_add(&r, "libqlock-pthread: misuse=%llu (first: %s: %s)\n",
				(unsigned long long)n, fn ? fn : "?", what ? what : "?");
	lockstat_report(&r, 10);
	if (shim_verbose)
		shim_report_counters(&r);
	return r.len;
}

/* QLOCK_STATS: unset, empty or "0" = off, "1" = stderr, else a file name
 * in which %p stands for the pid (at exit: a forked child writes its own)
 * and %% for %. */
static char stats_path[PATH_MAX];
static bool stats_to_stderr;

static bool expand_path(const char *tmpl, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = tmpl; *p; p++) {
		char num[24];
		const char *add = num;

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(num, sizeof num, "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			num[0] = '%', num[1] = '\0';
			p++;
		} else {
			num[0] = *p, num[1] = '\0';
		}
		size_t n = strlen(add);
		if (o + n >= size)
			return false;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	return true;
}

/* A report in one write(2), so it is never interleaved with the
 * program's own output and needs no stdio (which may be closed): on
 * stderr (path NULL), or appended to (or, `replace`, written as) the file
 * `path` names (%p = the pid). */
void shim_report_emit(const char *path, bool replace, const char *buf, size_t n)
{
	char file[PATH_MAX];
	int fd = STDERR_FILENO;

	if (path) {
		if (!expand_path(path, file, sizeof file))
			return;
		fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC | (replace ? O_TRUNC : O_APPEND),
			  0644);
		if (fd < 0)
			return;
	}
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w <= 0)
			break;
		buf += w;
		n -= (size_t)w;
	}
	if (fd != STDERR_FILENO)
		close(fd);
}

static void stats_emit(void)
{
	char buf[16384];
	size_t n = shim_stats_format(buf, sizeof buf);

	shim_report_emit(stats_to_stderr ? NULL : stats_path, false, buf, n);
}

bool shim_verbose;

void shim_stats_setup(void)
{
	const char *v = getenv("QLOCK_VERBOSE");

	shim_verbose = v && *v && strcmp(v, "0") != 0;
	shim_profile_setup();
	v = getenv("QLOCK_STATS");
	if (!v || !*v || strcmp(v, "0") == 0)
		return;
	lockstat_threads_setup();
	qa_write(&shim_stats_on, true);
	stats_to_stderr = strcmp(v, "1") == 0;
	if (!stats_to_stderr) {
		if (strlen(v) >= sizeof stats_path) {
			fprintf(stderr, "libqlock-pthread: QLOCK_STATS: file name too long\n");
			return;
		}
		strcpy(stats_path, v);
	}
	atexit(stats_emit);
}
