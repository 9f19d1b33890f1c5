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

#include "core/atomic.h"
#include "core/lockevent.h"
#include "contention.h"
#include "profile.h"
#include "report.h"
#include "state.h"
#include "exit_report.h"

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

/*
 * Waits that found the lock's owner in sched_yield(), a sleep or a
 * condition variable's wake-up (the TP locks see it through shim/offcpu.c
 * and shim/cond.c): the program holds the lock across the call, and its
 * waiters wait for the call, which no lock can shorten.
 */
static void report_off_cpu_owners(struct shim_report *r)
{
	struct qc_class_stats s;
	uint64_t n;

	/* The contended acquisitions of the table (contention.h,
	 * lockstat_off_cpu_wait()), not the locks' own event, which counts
	 * a condition variable's re-lock too. */
	qc_stats_read(QC_CLASS_other, &s);
	n = s.ev[QC_EV_owner_off_cpu];
	if (n)
		shim_report_add(r, "libqlock-pthread: off-CPU owners"
				"    %llu waits found the owner in "
				"sched_yield(), a sleep or a condvar wake-up "
				"(a lock held across the call)\n",
				(unsigned long long)n);
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
			shim_alg_name("mutex"), shim_alg_name("rwlock"),
			shim_alg_name("spin"));
	if (n)
		shim_report_add(&r, "libqlock-pthread: misuse=%llu (first: %s: %s)\n",
				(unsigned long long)n, fn ? fn : "?", what ? what : "?");
	lockstat_report(&r, 10);
	report_off_cpu_owners(&r);
	shim_report_add(&r, "libqlock-pthread: hint: --profile names the call sites and stacks that waited for each lock and times its holds\n");
	if (shim_verbose)
		shim_report_counters(&r);
	return r.len;
}

/* QLOCK_STATS: unset, empty or "0" = off, "1" = stderr, else a file name
 * in which %p stands for the pid (at exit: a forked child writes its own)
 * and %% for %. */
static char stats_path[PATH_MAX];
static bool stats_to_stderr;

static void stats_emit(void)
{
	char buf[16384];
	size_t n = shim_stats_format(buf, sizeof buf);

	shim_report_emit(stats_to_stderr ? NULL : stats_path, false, buf, n);
}

void shim_stats_setup(void)
{
	const char *v = getenv("QLOCK_VERBOSE");

	shim_verbose = v && *v && strcmp(v, "0") != 0;
	shim_profile_setup();
	v = getenv("QLOCK_STATS");
	if (!v || !*v || strcmp(v, "0") == 0)
		return;
	lockstat_setup();
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
