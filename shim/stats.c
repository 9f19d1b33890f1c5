/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_STATS: at exit, the algorithms in use and every non-zero lock
 * event and futex counter per lock class.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "core/stats.h"

#include "shim.h"

void shim_print_stats(void)
{
	fprintf(stderr, "libqlock-pthread: mutex=%s rwlock=%s spin=%s\n",
		qlock_pthread_algorithm("mutex"), qlock_pthread_algorithm("rwlock"),
		qlock_pthread_algorithm("spin"));
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
