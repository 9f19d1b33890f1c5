/* SPDX-License-Identifier: MIT */
/*
 * TP condition variable: timed wait (ETIMEDOUT with the mutex held again,
 * EINVAL without releasing it), no lost wake-up under stress (bounded
 * queue, producers and consumers, signal only: a lost wake-up hangs the
 * test), broadcast wakes every waiter, with the mutex held (requeue onto
 * the mutex word) and without.  Behaviour only, never timings.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static qlock_tp_cond_t not_empty = QLOCK_TP_COND_INIT;
static qlock_tp_cond_t not_full = QLOCK_TP_COND_INIT;

static void test_timed(void)
{
	struct timespec d, bad = { .tv_sec = 0, .tv_nsec = 1000000000L };

	qlock_tp_mutex_lock(&m);
	assert(qlock_tp_cond_timedwait(&not_empty, &m, &bad, CLOCK_MONOTONIC) == EINVAL);
	assert(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
	for (int clk = 0; clk < 2; clk++) {
		clockid_t c = clk ? CLOCK_REALTIME : CLOCK_MONOTONIC;

		clock_gettime(c, &d);
		d.tv_nsec += 10000000;
		if (d.tv_nsec >= 1000000000L) {
			d.tv_sec++;
			d.tv_nsec -= 1000000000L;
		}
		int r;
		do /* spurious wake-ups are allowed: wait for the deadline */
			r = qlock_tp_cond_timedwait(&not_empty, &m, &d, c);
		while (r == 0);
		assert(r == ETIMEDOUT);
		assert(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
	}
	qlock_tp_mutex_unlock(&m);
}

/* ---- bounded buffer: signal-only, a lost wake-up hangs ---------------- */

enum { CAP = 4, PRODUCERS = 3, CONSUMERS = 3, ITEMS = 20000 };
static long buf_count, produced, consumed; /* plain: under m */

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITEMS; i++) {
		qlock_tp_mutex_lock(&m);
		while (buf_count == CAP)
			qlock_tp_cond_wait(&not_full, &m);
		buf_count++;
		produced++;
		qlock_tp_cond_signal(&not_empty);
		/* Half the signals outside the mutex. */
		qlock_tp_mutex_unlock(&m);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITEMS; i++) {
		qlock_tp_mutex_lock(&m);
		while (buf_count == 0)
			qlock_tp_cond_wait(&not_empty, &m);
		buf_count--;
		consumed++;
		qlock_tp_mutex_unlock(&m);
		if (i & 1)
			qlock_tp_cond_signal(&not_full);
		else {
			qlock_tp_mutex_lock(&m);
			qlock_tp_cond_signal(&not_full);
			qlock_tp_mutex_unlock(&m);
		}
	}
	return NULL;
}

static void test_no_lost_wakeup(void)
{
	pthread_t t[PRODUCERS + CONSUMERS];

	for (int i = 0; i < PRODUCERS; i++)
		pthread_create(&t[i], NULL, producer, NULL);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_create(&t[PRODUCERS + i], NULL, consumer, NULL);
	for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
		pthread_join(t[i], NULL);
	assert(produced == PRODUCERS * ITEMS && consumed == produced);
	/* nval: no serial hand-off request left (bits 8-31); bits 0-7
	 * hold the serial lock's adaptive spin. */
	assert(buf_count == 0 && m.val == 0 && m.nval >> 8 == 0);
}

/* ---- broadcast wakes all ---------------------------------------------- */

enum { WAITERS = 8, ROUNDS = 300 };
static qlock_tp_cond_t go = QLOCK_TP_COND_INIT, arrived = QLOCK_TP_COND_INIT;
static long generation, nwaiting, nwoken; /* plain: under m */

static void *bwaiter(void *arg)
{
	(void)arg;
	for (long g = 1; g <= ROUNDS; g++) {
		qlock_tp_mutex_lock(&m);
		nwaiting++;
		qlock_tp_cond_signal(&arrived);
		while (generation < g)
			qlock_tp_cond_wait(&go, &m);
		nwoken++;
		qlock_tp_mutex_unlock(&m);
	}
	return NULL;
}

static void test_broadcast(void)
{
	pthread_t t[WAITERS];

	for (int i = 0; i < WAITERS; i++)
		pthread_create(&t[i], NULL, bwaiter, NULL);
	for (long g = 1; g <= ROUNDS; g++) {
		qlock_tp_mutex_lock(&m);
		while (nwaiting < WAITERS * g)
			qlock_tp_cond_wait(&arrived, &m);
		generation = g;
		if (g & 1) {        /* held: requeue onto the mutex */
			qlock_tp_cond_broadcast(&go);
			qlock_tp_mutex_unlock(&m);
		} else {            /* not held: wake all */
			qlock_tp_mutex_unlock(&m);
			qlock_tp_cond_broadcast(&go);
		}
	}
	for (int i = 0; i < WAITERS; i++)
		pthread_join(t[i], NULL);
	/* Every waiter of every round was woken (else a join hangs). */
	assert(nwoken == (long)WAITERS * ROUNDS);
	assert(m.val == 0 && m.nval >> 8 == 0 && m.serial == 0);
}

int main(void)
{
	test_timed();
	test_no_lost_wakeup();
	test_broadcast();
	printf("test_tp_cond: ok\n");
	return 0;
}
