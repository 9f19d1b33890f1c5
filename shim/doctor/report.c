/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's reports (QLOCK_STATS, the profile): a text buffer that
 * sections append to, the internal counters section, and the one write
 * that puts a report out (report.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/lockevent.h"
#include "report.h"

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

/* tmpl with %p replaced by the pid and %% by %; false if it does not fit. */
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
