/* SPDX-License-Identifier: MIT */
/*
 * Futex layer: timeouts on both clocks, EINVAL for malformed deadlines and
 * clocks, immediate return when the word changed, a real wake-up, and the
 * per-class/op call counters.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"

static struct timespec realtime_in_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static void check_timeouts(void)
{
	uint32_t w = 1;
	struct timespec mono = qc_deadline_in(5 * 1000000u);
	struct timespec real = realtime_in_ms(5);
	struct timespec past = { 0, 0 };

	assert(qc_futex_wait(&w, 1, &mono, CLOCK_MONOTONIC, QC_CLASS_other,
			     QC_OP_LOCK) == ETIMEDOUT);
	assert(qc_deadline_passed(&mono, CLOCK_MONOTONIC));
	assert(qc_futex_wait(&w, 1, &real, CLOCK_REALTIME, QC_CLASS_other,
			     QC_OP_LOCK) == ETIMEDOUT);
	assert(qc_deadline_passed(&real, CLOCK_REALTIME));
	assert(qc_futex_wait(&w, 1, &past, CLOCK_MONOTONIC, QC_CLASS_other,
			     QC_OP_LOCK) == ETIMEDOUT);
}

static void check_einval(void)
{
	uint32_t w = 1;
	struct timespec big = { .tv_sec = 1, .tv_nsec = 1000000000L };
	struct timespec neg = { .tv_sec = 1, .tv_nsec = -1 };
	struct timespec negsec = { .tv_sec = -1, .tv_nsec = 0 };
	struct timespec ok = qc_deadline_in(1000000u);

	assert(!qc_timespec_valid(&big) && !qc_timespec_valid(&neg) &&
	       !qc_timespec_valid(&negsec) && qc_timespec_valid(&ok));
	assert(qc_futex_wait(&w, 1, &big, CLOCK_MONOTONIC, QC_CLASS_other,
			     QC_OP_LOCK) == EINVAL);
	assert(qc_futex_wait(&w, 1, &neg, CLOCK_REALTIME, QC_CLASS_other,
			     QC_OP_LOCK) == EINVAL);
	assert(qc_futex_wait(&w, 1, &negsec, CLOCK_MONOTONIC, QC_CLASS_other,
			     QC_OP_LOCK) == EINVAL);
	assert(qc_futex_wait(&w, 1, &ok, CLOCK_PROCESS_CPUTIME_ID,
			     QC_CLASS_other, QC_OP_LOCK) == EINVAL);
}

static void check_changed_word(void)
{
	uint32_t w = 2;

	/* The word no longer holds the expected value: back at once. */
	assert(qc_futex_wait(&w, 1, NULL, CLOCK_MONOTONIC, QC_CLASS_other,
			     QC_OP_LOCK) == 0);
	assert(qc_futex_wake(&w, 1, QC_CLASS_other, QC_OP_UNLOCK) == 0);
}

static uint32_t flag;

static void *waiter(void *arg)
{
	(void)arg;
	/* Re-check after every return: a futex wait may return spuriously. */
	while (qa_read_acquire(&flag) == 0)
		(void)qc_futex_wait(&flag, 0, NULL, CLOCK_MONOTONIC,
				    QC_CLASS_other, QC_OP_RLOCK);
	return NULL;
}

static void check_wake(void)
{
	pthread_t t;

	pthread_create(&t, NULL, waiter, NULL);
	qa_write_release(&flag, 1); /* pairs with the waiter's acquire */
	(void)qc_futex_wake(&flag, 1, QC_CLASS_other, QC_OP_RUNLOCK);
	pthread_join(t, NULL);
}

int main(void)
{
	struct qc_class_stats st;

	qc_stats_reset();
	check_timeouts();
	check_einval();
	check_changed_word();
	check_wake();

	qc_stats_read(QC_CLASS_other, &st);
	/* Three timed waits and one on a changed word count as LOCK waits;
	 * rejected deadlines make no call. */
	assert(st.fx[QC_OP_LOCK][QC_FX_WAIT] == 4);
	assert(st.fx[QC_OP_UNLOCK][QC_FX_WAKE] == 1);
	assert(st.fx[QC_OP_RUNLOCK][QC_FX_WAKE] == 1);
	assert(st.fx[QC_OP_RUNLOCK][QC_FX_WOKEN] <= 1);
	return 0;
}
