/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_STATS: at exit, the algorithms in use, the misuse the locks
 * detected, and every non-zero lock event and futex counter per lock
 * class.
 *
 * Misuse (unlocking a mutex nobody holds, ...) is counted, not fatal: a
 * program that runs under glibc must keep running under the drop-in, so
 * the shim installs its own misuse handler, which returns (the lock then
 * answers as glibc's would; include/qlock/qlock.h).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "core/stats.h"

#include "shim.h"

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

void shim_print_stats(void)
{
	fprintf(stderr, "libqlock-pthread: mutex=%s rwlock=%s spin=%s\n",
		qlock_pthread_algorithm("mutex"), qlock_pthread_algorithm("rwlock"),
		qlock_pthread_algorithm("spin"));
	uint64_t n = qa_read(&misuse_count);
	const char *fn = qa_read(&misuse_fn), *what = qa_read(&misuse_what);
	if (n)
		fprintf(stderr, "libqlock-pthread: misuse=%llu (first: %s: %s)\n",
			(unsigned long long)n, fn ? fn : "?", what ? what : "?");
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
		fprintf(stderr, "libqlock-pthread: %-10s", qc_class_name((enum qc_class)c));
		for (int e = 0; e < QC_NR_EVENTS; e++)
			if (s.ev[e])
				fprintf(stderr, " %s=%llu", qc_event_name((enum qc_event)e),
					(unsigned long long)s.ev[e]);
		static const char *const fxn[QC_NR_FX] = { "wait", "wake", "woken" };
		for (int o = 0; o < QC_NR_OPS; o++)
			for (int f = 0; f < QC_NR_FX; f++)
				if (s.fx[o][f])
					fprintf(stderr, " futex_%s[%s]=%llu", fxn[f],
						qc_op_name((enum qc_op)o),
						(unsigned long long)s.fx[o][f]);
		fprintf(stderr, "\n");
	}
}
