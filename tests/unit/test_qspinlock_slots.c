/* SPDX-License-Identifier: MIT */
/*
 * qspinlock: more contending threads than thread slots.  With the slot
 * limit lowered to 2, threads that find no slot take the no-node path (a
 * bounded trylock loop, then yield): all still get the lock, mutual
 * exclusion holds, the word ends free and lock_no_node is counted.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

#include "core/atomic.h"
#include "core/slot.h"
#include "core/lockevent.h"
#include "lockreg.h"
#include "qlock/qspinlock.h"

enum { THREADS = 6, ITERS = 2000 };

static const struct lr_lock *lk;
static void *lock;
static long in_cs, count;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		lk->lock(lock);
		assert(++in_cs == 1);
		count++;
		in_cs--;
		lk->unlock(lock);
	}
	return NULL;
}

static void run(const char *name)
{
	pthread_t t[THREADS];
	struct qc_class_stats st;

	lk = lr_find(name);
	assert(lk);
	lock = lr_new(lk);
	assert(lock);
	count = 0;
	qc_stats_reset();
	/* Hold the lock while they start, so they queue (or fail to). */
	lk->lock(lock);
	for (int i = 0; i < THREADS; i++)
		assert(!pthread_create(&t[i], NULL, worker, NULL));
	/* More waiters than slots pile up behind us: some must fall back. */
	do {
		sched_yield();
		qc_stats_read(QC_CLASS_qspinlock, &st);
	} while (!st.ev[QC_EV_lock_no_node]);
	lk->unlock(lock);
	for (int i = 0; i < THREADS; i++)
		assert(!pthread_join(t[i], NULL));
	assert(count == (long)THREADS * ITERS);
	assert(qa_read(&((qlock_spinlock_t *)lock)->val) == 0);
	qc_stats_read(QC_CLASS_qspinlock, &st);
	assert(st.ev[QC_EV_lock_no_node] >= 1);
	lr_free(lk, lock);
}

int main(void)
{
	assert(qc_slot_set_limit(2) == 2);
	run("qspinlock");
	run("qspinlock-cmpxchg-grab");
	run("qspinlock-cmpxchg-wait");
	run("qspinlock-spin-only");
	return 0;
}
