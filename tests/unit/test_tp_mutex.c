/* SPDX-License-Identifier: MIT */
/*
 * TP futex mutex: word encoding, owner query, trylock, timed lock
 * (ETIMEDOUT on both clocks, EINVAL), forced hand-off, timed-lock
 * withdrawal under contention, the serial lock's hand-off to a waiter
 * that asked for it.  Behaviour only, never timings.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/futex.h"
#include "core/lockevent.h"
#include "lock/tp_internal.h"
#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static pthread_barrier_t bar;

static struct timespec in_ns(clockid_t clk, long ns)
{
	struct timespec t;

	clock_gettime(clk, &t);
	t.tv_nsec += ns % 1000000000L;
	t.tv_sec += ns / 1000000000L + t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static void *hold_then_release(void *arg)
{
	(void)arg;
	qlock_tp_mutex_lock(&m);
	pthread_barrier_wait(&bar); /* 1: held */
	pthread_barrier_wait(&bar); /* 2: main probed */
	qlock_tp_mutex_unlock(&m);
	return NULL;
}

static void test_encoding_and_probes(void)
{
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	struct timespec bad = { .tv_sec = 1, .tv_nsec = 1000000000L };
	struct timespec neg = { .tv_sec = -1, .tv_nsec = 0 };
	struct timespec past = { 0, 0 };
	pthread_t t;

	assert(sizeof(qlock_tp_mutex_t) == 16);
	assert(qlock_tp_self_tid() == me && me <= QLOCK_TP_TID_MASK);
	assert(qlock_tp_mutex_owner(&m) == 0);
	qlock_tp_mutex_lock(&m);
	assert(m.val == me && qlock_tp_mutex_owner(&m) == me);
	qlock_tp_mutex_unlock(&m);
	assert(m.val == 0);
	assert(qlock_tp_mutex_trylock(&m) && m.val == me);
	qlock_tp_mutex_unlock(&m);

	/* Malformed deadlines and clocks: EINVAL, nothing taken. */
	assert(qlock_tp_mutex_timedlock(&m, &bad, CLOCK_MONOTONIC) == EINVAL);
	assert(qlock_tp_mutex_timedlock(&m, &neg, CLOCK_REALTIME) == EINVAL);
	assert(qlock_tp_mutex_timedlock(&m, &past, CLOCK_PROCESS_CPUTIME_ID) == EINVAL);
	assert(m.val == 0);
	/* Free: a past deadline still succeeds. */
	assert(qlock_tp_mutex_timedlock(&m, &past, CLOCK_MONOTONIC) == 0);
	qlock_tp_mutex_unlock(&m);

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, hold_then_release, NULL);
	pthread_barrier_wait(&bar);
	assert(qlock_tp_mutex_owner(&m) != 0 && qlock_tp_mutex_owner(&m) != me);
	assert(!qlock_tp_mutex_trylock(&m));
	assert(qlock_tp_mutex_timedlock(&m, &past, CLOCK_MONOTONIC) == ETIMEDOUT);
	struct timespec d1 = in_ns(CLOCK_MONOTONIC, 20000000);
	assert(qlock_tp_mutex_timedlock(&m, &d1, CLOCK_MONOTONIC) == ETIMEDOUT);
	struct timespec d2 = in_ns(CLOCK_REALTIME, 20000000);
	assert(qlock_tp_mutex_timedlock(&m, &d2, CLOCK_REALTIME) == ETIMEDOUT);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	/* The timed-out waiter left at most W behind: the next unlock
	 * cleared it. */
	/* nval: no serial hand-off request left (bits 8-31); bits 0-7
	 * hold the serial lock's adaptive spin. */
	assert(m.val == 0 && m.serial == 0 && m.handoff == 0 && m.nval >> 8 == 0);
	pthread_barrier_destroy(&bar);
}

/* ---- contention: hand-off, timeouts, mutual exclusion ------------------ */

enum { THREADS = 6, ITERS = 20000 };
static long counter;        /* plain: protected by m */
static int inside;          /* plain */
static long timeouts;

static void *worker(void *arg)
{
	long id = (long)arg, to = 0;

	for (int i = 0; i < ITERS; i++) {
		if (id % 3 == 2 && i % 4 == 0) {
			struct timespec d = in_ns(CLOCK_MONOTONIC, (i % 7) * 1000);

			if (qlock_tp_mutex_timedlock(&m, &d, CLOCK_MONOTONIC)) {
				to++;
				continue;
			}
		} else if (id % 3 == 1 && i % 5 == 0) {
			if (!qlock_tp_mutex_trylock(&m))
				continue;
		} else {
			qlock_tp_mutex_lock(&m);
		}
		assert(!inside);
		inside = 1;
		counter++;
		if (i % 64 == 0)
			sched_yield(); /* a preempted owner: waiters sleep */
		inside = 0;
		qlock_tp_mutex_unlock(&m);
	}
	__atomic_fetch_add(&timeouts, to, __ATOMIC_RELAXED);
	return NULL;
}

static long run_contended(void)
{
	pthread_t t[THREADS];

	counter = 0;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert(m.val == 0 && m.serial == 0 && m.nval >> 8 == 0 && m.handoff == 0);
	/* The serial lock's adaptive spin: a shift of at most 6 (1/64 of
	 * the limit) in bits 0-2, nothing else in the low byte. */
	assert((m.nval & 0xff) <= 6);
	return counter;
}

static void test_contended(void)
{
	struct qc_class_stats st;
	int c = qc_class_lookup("tp-mutex");

	assert(c >= 0);
	qc_stats_reset();
	assert(run_contended() > 0);

	/* Hand-off at once: the top waiter asks for it on its first look,
	 * so every contended episode ends in a hand-off. */
	long old = qlock_tune_get(QLOCK_TUNE_HANDOFF_NS);

	assert(qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0) == 0);
	qc_stats_reset();
	assert(run_contended() > 0);
	qc_stats_read((enum qc_class)c, &st);
	printf("hand-off run: slowpath %llu handoff %llu steal %llu sleep %llu timeouts %ld\n",
	       (unsigned long long)st.ev[QC_EV_slowpath],
	       (unsigned long long)st.ev[QC_EV_handoff],
	       (unsigned long long)st.ev[QC_EV_steal],
	       (unsigned long long)st.ev[QC_EV_sleep], timeouts);
	assert(st.ev[QC_EV_slowpath] == 0 || st.ev[QC_EV_handoff] > 0);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, old);
}

/* ---- the serial lock's hand-off (tp_serial.h) ----------------------------- */

static uint32_t ser, ho;
static uint32_t requester_tid;

static void *request_serial(void *arg)
{
	const struct timespec *abs = arg;
	int r;

	qa_write(&requester_tid, tp_self_tid());
	r = tp_serial_request(&ser, &ho, abs, CLOCK_MONOTONIC,
			      QC_CLASS_tp_mutex, QC_OP_LOCK, NULL, 0);
	if (r == 0) {
		/* Handed over: ours, with the request gone. */
		assert(qa_read(&ser) != 0 && !(qa_read(&ho) >> TP_HO_SHIFT));
		tp_serial_unlock(&ser, &ho, QC_CLASS_tp_mutex, QC_OP_LOCK);
	}
	return (void *)(intptr_t)r;
}

static void test_serial_handoff(void)
{
	struct timespec soon;
	pthread_t t;
	void *ret;

	/* Held: the request waits, bargers keep off, the release hands the
	 * lock to the requester instead of freeing it. */
	ho = 5; /* the low bits belong to the lock and must survive */
	assert(tp_serial_lock(&ser, &ho, NULL, CLOCK_MONOTONIC,
				 QC_CLASS_tp_mutex, QC_OP_LOCK, NULL, 0, 1) == 0);
	assert(pthread_create(&t, NULL, request_serial, NULL) == 0);
	while (qa_read(&ho) >> TP_HO_SHIFT == 0)
		sched_yield();
	assert(qa_read(&ho) >> TP_HO_SHIFT == qa_read(&requester_tid));
	assert(!tp_serial_no_request(&ho));
	/* A second request while one is pending is refused. */
	assert(tp_serial_request(&ser, &ho, NULL, CLOCK_MONOTONIC,
				 QC_CLASS_tp_mutex, QC_OP_LOCK, NULL, 0) == EAGAIN);
	tp_serial_unlock(&ser, &ho, QC_CLASS_tp_mutex, QC_OP_LOCK);
	assert(pthread_join(t, &ret) == 0 && ret == NULL);
	assert(ser == 0 && ho == 5);

	/* Free: the requester takes it at once and withdraws its request. */
	assert(tp_serial_request(&ser, &ho, NULL, CLOCK_MONOTONIC,
				 QC_CLASS_tp_mutex, QC_OP_LOCK, NULL, 0) == 0);
	assert(ser == 2 && ho == 5);
	/* A timed request against a holder that keeps it: ETIMEDOUT, the
	 * request withdrawn, the holder's release frees the lock. */
	soon = in_ns(CLOCK_MONOTONIC, 20 * 1000 * 1000);
	assert(pthread_create(&t, NULL, request_serial, &soon) == 0);
	assert(pthread_join(t, &ret) == 0 && ret == (void *)(intptr_t)ETIMEDOUT);
	assert(ho == 5);
	tp_serial_unlock(&ser, &ho, QC_CLASS_tp_mutex, QC_OP_LOCK);
	assert(ser == 0 && ho == 5);
}

int main(void)
{
	test_encoding_and_probes();
	test_contended();
	test_serial_handoff();
	printf("test_tp_mutex: ok\n");
	return 0;
}
