/* SPDX-License-Identifier: MIT */
/*
 * The reader count of every rwlock stops at its documented maximum and
 * never wraps: the trylocks (fair and unfair) fail there, a blocking
 * reader waits (until a reader leaves; for the TP rwlock, whose waiting
 * reader sleeps as its top waiter, until the readers are gone), a timed
 * one times out, and once the
 * readers are gone a writer gets the lock.  (Before the limits, the qrwlock
 * wrapped past 2^22 nested readers and admitted a writer at 2^23, the
 * rwsem admitted one at 2^24.)
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "qlock/qrwlock.h"
#include "qlock/rwsem.h"
#include "qlock/tp_rwlock.h"

static qlock_rwlock_t qrw = QLOCK_RWLOCK_INIT;
static qlock_rwsem_t sem = QLOCK_RWSEM_INIT;
static qlock_tp_rwlock_t tp = QLOCK_TP_RWLOCK_INIT;
static volatile int got;

static void *qrw_reader(void *a) { (void)a; qlock_read_lock(&qrw); got = 1; qlock_read_unlock(&qrw); return NULL; }
static void *sem_reader(void *a) { (void)a; qlock_down_read(&sem); got = 1; qlock_up_read(&sem); return NULL; }
static void *tp_reader(void *a) { (void)a; qlock_tp_rwlock_rdlock(&tp); got = 1; qlock_tp_rwlock_rdunlock(&tp); return NULL; }

static struct timespec soon(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	t.tv_nsec += 20 * 1000 * 1000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* A reader blocked on the full count gets in once one reader leaves. */
static void blocked_reader(void *(*fn)(void *), void (*unlock_one)(void))
{
	pthread_t t;

	got = 0;
	assert(pthread_create(&t, NULL, fn, NULL) == 0);
	usleep(20 * 1000);
	assert(!got); /* still waiting: the count is full */
	unlock_one();
	assert(pthread_join(t, NULL) == 0);
	assert(got);
}

static void qrw_unlock_one(void) { qlock_read_unlock(&qrw); }
static void sem_unlock_one(void) { qlock_up_read(&sem); }

static void test_qrwlock(void)
{
	uint32_t n = 0;

	while (qlock_read_trylock(&qrw))
		n++;
	printf("qrwlock: %u readers (max %u)\n", n, QLOCK_RWLOCK_MAX_READERS);
	assert(n == QLOCK_RWLOCK_MAX_READERS);
	assert(qlock_rwlock_readers(&qrw) == n);
	assert(!qlock_read_trylock_unfair(&qrw));
	assert(!qlock_write_trylock(&qrw));
	blocked_reader(qrw_reader, qrw_unlock_one);
	assert(qlock_read_trylock(&qrw)); /* room for one again */
	while (n--)
		qlock_read_unlock(&qrw);
	assert(qlock_rwlock_readers(&qrw) == 0);
	assert(qlock_write_trylock(&qrw));
	qlock_write_unlock(&qrw);
}

static void test_rwsem(void)
{
	struct timespec t;
	uint32_t n = 0;

	while (qlock_down_read_trylock(&sem))
		n++;
	printf("rwsem: %u readers (max %u)\n", n, QLOCK_RWSEM_MAX_READERS);
	assert(n == QLOCK_RWSEM_MAX_READERS);
	assert(qlock_rwsem_readers(&sem) == n);
	assert(!qlock_down_read_trylock_unfair(&sem));
	assert(!qlock_down_write_trylock(&sem));
	t = soon(CLOCK_MONOTONIC);
	assert(qlock_down_read_timed(&sem, &t, CLOCK_MONOTONIC) == ETIMEDOUT);
	assert(qlock_rwsem_readers(&sem) == n);
	blocked_reader(sem_reader, sem_unlock_one);
	assert(qlock_down_read_trylock(&sem));
	while (n--)
		qlock_up_read(&sem);
	assert(qlock_rwsem_readers(&sem) == 0);
	assert(qlock_down_write_trylock(&sem));
	qlock_up_write(&sem);
}

static void test_tp(void)
{
	struct timespec t;
	uint32_t n = 0;

	while (qlock_tp_rwlock_tryrdlock(&tp))
		n++;
	printf("tp rwlock: %u readers (max %u)\n", n, QLOCK_TP_RWLOCK_MAX_READERS);
	assert(n == QLOCK_TP_RWLOCK_MAX_READERS);
	assert(qlock_tp_rwlock_readers(&tp) == n);
	assert(!qlock_tp_rwlock_tryrdlock_unfair(&tp));
	assert(!qlock_tp_rwlock_trywrlock(&tp));
	t = soon(CLOCK_MONOTONIC);
	assert(qlock_tp_rwlock_timedrdlock(&tp, &t, CLOCK_MONOTONIC) == ETIMEDOUT);
	/* The blocked reader is the top waiter and sleeps with WAITERS set:
	 * the last reader out wakes it (an earlier one does not). */
	{
		pthread_t th;

		got = 0;
		assert(pthread_create(&th, NULL, tp_reader, NULL) == 0);
		usleep(20 * 1000);
		assert(!got);
		while (n--)
			qlock_tp_rwlock_rdunlock(&tp);
		assert(pthread_join(th, NULL) == 0);
		assert(got);
	}
	assert(qlock_tp_rwlock_readers(&tp) == 0);
	assert(qlock_tp_rwlock_trywrlock(&tp));
	qlock_tp_rwlock_wrunlock(&tp);
}

int main(void)
{
	test_qrwlock();
	test_rwsem();
	test_tp();
	printf("ok\n");
	return 0;
}
