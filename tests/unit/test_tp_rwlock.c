/* SPDX-License-Identifier: MIT */
/*
 * TP futex rwlock: word encoding (SHARED + count, writer tid), queries,
 * try/timed locks in both modes, writer preference (a sleeping writer
 * stops new readers), forced hand-off to readers and writers, separate
 * reader and writer threads both progressing, for tp-rwlock and
 * tp-rwlock-nogroup.  Behaviour only, never timings.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/lockevent.h"
#include "lockreg.h"
#include "qlock/qlock.h"
#include "qlock/tp_rwlock.h"

static qlock_tp_rwlock_t rw = QLOCK_TP_RWLOCK_INIT;
static const struct lr_lock *lk; /* tp-rwlock or tp-rwlock-nogroup */
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

static void *writer_holds(void *arg)
{
	(void)arg;
	qlock_tp_rwlock_wrlock(&rw);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	qlock_tp_rwlock_wrunlock(&rw);
	return NULL;
}

static void *reader_holds(void *arg)
{
	(void)arg;
	qlock_tp_rwlock_rdlock(&rw);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	qlock_tp_rwlock_rdunlock(&rw);
	return NULL;
}

static void test_encoding(void)
{
	uint32_t me = (uint32_t)syscall(SYS_gettid);
	struct timespec bad = { .tv_sec = 0, .tv_nsec = -1 };
	struct timespec past = { 0, 0 };
	pthread_t t;

	assert(sizeof(rw) == 32);
	qlock_tp_rwlock_rdlock(&rw);
	assert(rw.val == (QLOCK_TP_RW_SHARED | 1));
	assert(qlock_tp_rwlock_tryrdlock(&rw));
	assert(rw.val == (QLOCK_TP_RW_SHARED | 2));
	assert(qlock_tp_rwlock_readers(&rw) == 2 && qlock_tp_rwlock_writer(&rw) == 0);
	assert(!qlock_tp_rwlock_trywrlock(&rw));
	assert(qlock_tp_rwlock_timedwrlock(&rw, &past, CLOCK_MONOTONIC) == ETIMEDOUT);
	qlock_tp_rwlock_rdunlock(&rw);
	qlock_tp_rwlock_rdunlock(&rw);
	assert(rw.val == 0);
	qlock_tp_rwlock_wrlock(&rw);
	assert(rw.val == me && qlock_tp_rwlock_writer(&rw) == me);
	assert(qlock_tp_rwlock_readers(&rw) == 0);
	qlock_tp_rwlock_wrunlock(&rw);
	assert(rw.val == 0);
	assert(qlock_tp_rwlock_timedrdlock(&rw, &bad, CLOCK_MONOTONIC) == EINVAL);
	assert(qlock_tp_rwlock_timedwrlock(&rw, &past, CLOCK_THREAD_CPUTIME_ID) == EINVAL);
	assert(rw.val == 0);

	pthread_barrier_init(&bar, NULL, 2);
	/* Under a writer: every read and write attempt times out. */
	pthread_create(&t, NULL, writer_holds, NULL);
	pthread_barrier_wait(&bar);
	assert(!qlock_tp_rwlock_tryrdlock(&rw) && !qlock_tp_rwlock_trywrlock(&rw));
	struct timespec d = in_ns(CLOCK_MONOTONIC, 20000000);
	assert(qlock_tp_rwlock_timedrdlock(&rw, &d, CLOCK_MONOTONIC) == ETIMEDOUT);
	d = in_ns(CLOCK_REALTIME, 20000000);
	assert(qlock_tp_rwlock_timedwrlock(&rw, &d, CLOCK_REALTIME) == ETIMEDOUT);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	/* Under a reader: readers share, writers time out. */
	pthread_create(&t, NULL, reader_holds, NULL);
	pthread_barrier_wait(&bar);
	d = in_ns(CLOCK_MONOTONIC, 20000000);
	assert(qlock_tp_rwlock_timedwrlock(&rw, &d, CLOCK_MONOTONIC) == ETIMEDOUT);
	assert(qlock_tp_rwlock_timedrdlock(&rw, &past, CLOCK_MONOTONIC) == 0);
	qlock_tp_rwlock_rdunlock(&rw);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	assert(rw.val == 0 && rw.serial == 0 && rw.nval == 0 && rw.handoff == 0);
	pthread_barrier_destroy(&bar);
}

/* A writer that sleeps behind a reader sets WAITERS: new readers wait. */
static void *blocked_writer(void *arg)
{
	(void)arg;
	lk->lock(&rw);
	lk->unlock(&rw);
	return NULL;
}

static void test_writer_preference(void)
{
	pthread_t t;

	lk->rdlock(&rw);
	pthread_create(&t, NULL, blocked_writer, NULL);
	while (!(qa_read(&rw.val) & QLOCK_TP_RW_WAITERS))
		sched_yield();
	assert(!lk->tryrdlock(&rw)); /* writer preferred */
	lk->rdunlock(&rw);
	pthread_join(t, NULL);
	assert(rw.val == 0);
}

/* ---- separate readers and writers, hand-off, timeouts -------------------- */

enum { READERS = 4, WRITERS = 2, GOAL = 2000 };
static long wr_done, rd_done;   /* atomics */
static uint64_t a, b;           /* plain: a == b outside write sections */

static void *reader(void *arg)
{
	long n = 0;

	(void)arg;
	while (qa_read(&wr_done) < GOAL * WRITERS || n < GOAL) {
		if (n % 7 == 3) {
			struct timespec d = in_ns(CLOCK_MONOTONIC, 2000);

			if (lk->timedrdlock(&rw, &d))
				continue;
		} else {
			lk->rdlock(&rw);
		}
		assert(a == b);
		lk->rdunlock(&rw);
		n++;
		qa_fetch_add(&rd_done, 1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	long n = 0;

	(void)arg;
	while (qa_read(&rd_done) < GOAL * READERS || n < GOAL) {
		if (n % 5 == 1) {
			struct timespec d = in_ns(CLOCK_MONOTONIC, 3000);

			if (lk->timedlock(&rw, &d))
				continue;
		} else {
			lk->lock(&rw);
		}
		a++;
		if (n % 50 == 0)
			sched_yield();
		b++;
		lk->unlock(&rw);
		n++;
		qa_fetch_add(&wr_done, 1);
	}
	return NULL;
}

static void run_xthread(void)
{
	pthread_t t[READERS + WRITERS];

	wr_done = rd_done = 0;
	a = b = 0;
	for (int i = 0; i < READERS; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&t[READERS + i], NULL, writer, NULL);
	for (int i = 0; i < READERS + WRITERS; i++)
		pthread_join(t[i], NULL);
	/* Both sides reached their goal (the loops end only then). */
	assert(a == b && (long)a == wr_done && wr_done >= GOAL * WRITERS);
	assert(rd_done >= GOAL * READERS);
	assert(rw.val == 0 && rw.serial == 0 && rw.nval == 0 &&
	       rw.handoff == 0 && rw.leader == 0);
}

static void test_xthread(void)
{
	struct qc_class_stats st;
	long old = qlock_tune_get(QLOCK_TUNE_HANDOFF_NS);

	run_xthread();
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0);
	qc_stats_reset();
	run_xthread();
	qc_stats_read((enum qc_class)qc_class_lookup("tp-rwlock"), &st);
	printf("%s hand-off run: slowpath %llu handoff %llu alone %llu group %llu\n",
	       lk->name, (unsigned long long)st.ev[QC_EV_slowpath],
	       (unsigned long long)st.ev[QC_EV_handoff],
	       (unsigned long long)st.ev[QC_EV_read_alone],
	       (unsigned long long)st.ev[QC_EV_read_group]);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, old);
}

int main(void)
{
	test_encoding();
	for (int i = 0; i < 2; i++) {
		lk = lr_find(i ? "tp-rwlock-nogroup" : "tp-rwlock");
		assert(lk);
		test_writer_preference();
		test_xthread();
	}
	printf("test_tp_rwlock: ok\n");
	return 0;
}
