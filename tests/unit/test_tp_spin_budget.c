/* SPDX-License-Identifier: MIT */
/*
 * The TP mutex's top waiter keeps its owner-spin budget when its poll gap
 * has grown (tp_poll_clock_due() in tp_internal.h).  It used to read the
 * clock every TP_CLOCK_EVERY polls only, so with a long gap it spun far
 * past the budget: 15 polls before its first sleep whatever the budget.
 *
 * With a 1 ns budget and a held mutex the waiter must sleep after a few
 * polls (2 with today's gap doubling).  Counted in polls (QC_EV_spin),
 * never in time, so a slow or preempted machine cannot fail it.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "core/lockevent.h"
#include "lock/tp_internal.h"
#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

#ifdef QLOCK_NO_LOCK_EVENTS
int main(void)
{
	puts("SKIP: lock event counters compiled out");
	return 77;
}
#else
static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;

static void *waiter(void *arg)
{
	(void)arg;
	qlock_tp_mutex_lock(&m);
	qlock_tp_mutex_unlock(&m);
	return NULL;
}

static struct qc_class_stats read_stats(int c)
{
	struct qc_class_stats st;

	qc_stats_read((enum qc_class)c, &st);
	return st;
}

int main(void)
{
	int c = qc_class_lookup("tp-mutex");
	pthread_t t;
	uint64_t spins;

	assert(c >= 0);
	assert(qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, 1) == 0);
	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, 1024) == 0);
	/* No hand-off request while we hold it (that path sleeps at once). */
	assert(qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 60L * 1000000000L) == 0);
	qc_stats_reset();

	qlock_tp_mutex_lock(&m);
	assert(pthread_create(&t, NULL, waiter, NULL) == 0);
	/* A hang guard, not a timing check: the waiter sleeps within
	 * microseconds; a minute means it never will. */
	time_t give_up = time(NULL) + 60;
	while (read_stats(c).ev[QC_EV_sleep] == 0) {
		if (time(NULL) > give_up) {
			puts("FAIL: the top waiter never slept on a held mutex");
			return 1;
		}
		sched_yield();
	}
	qlock_tp_mutex_unlock(&m);
	assert(pthread_join(t, NULL) == 0);

	spins = read_stats(c).ev[QC_EV_spin];
	printf("top waiter polls before sleeping, 1 ns budget: %llu\n",
	       (unsigned long long)spins);
	fflush(stdout); /* shown even when the assert below aborts */
	/* 2 expected; a spurious wake-up adds as many again.  The old
	 * clock rule gives TP_CLOCK_EVERY - 1 = 15 per sleep. */
	assert(spins >= 1 && spins < TP_CLOCK_EVERY / 2);
	return 0;
}
#endif /* QLOCK_NO_LOCK_EVENTS */
