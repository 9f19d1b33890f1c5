/* SPDX-License-Identifier: MIT */
/*
 * qspinlock with the one-bit pending layout (the kernel's
 * _Q_PENDING_BITS == 1: a 21-bit tail slot, whole-word tail updates).
 * The library is built with the default layout, so this test compiles its
 * own copy of the lock with QLOCK_QSPINLOCK_PENDING_BITS=1 (it uses no
 * registry entry, so the library's copy is never linked in), checks the
 * encoding and runs contended threads through every path.
 */
#define QLOCK_QSPINLOCK_PENDING_BITS 1
#include "lock/qspinlock.c"

#include <assert.h>
#include <pthread.h>
#include <sched.h>

static void test_layout(void)
{
	qlock_spinlock_t l = QLOCK_SPINLOCK_INIT;

	assert(QS_PENDING_BITS == 1);
	assert(QS_LOCKED_MASK == 0xffu && QS_PENDING_MASK == 0x100u);
	assert(QS_TAIL_IDX_MASK == 0x600u && QS_TAIL_SLOT_MASK == 0xfffff800u);
	assert(QS_TAIL_SLOT_MAX == (1u << 21) - 1);
	for (int slot = 0; slot < (1 << 21) - 1; slot += 99991)
		for (int idx = 0; idx < QS_MAX_NODES; idx++) {
			uint32_t t = qs_encode_tail(slot, idx);

			assert(t && !(t & QS_LOCKED_PENDING_MASK));
			assert(qs_tail_slot(t) == slot && qs_tail_idx(t) == idx);
		}
	assert(qs_encode_tail(0, 1) == ((1u << 11) | (1u << 9)));
	qlock_spin_lock(&l);
	assert(qa_read(&l.val) == 1 && qlock_spin_is_locked(&l));
	assert(!qlock_spin_trylock(&l) && !qs_trylock_spin_only(&l));
	qlock_spin_unlock(&l);
	assert(qa_read(&l.val) == 0 && !qlock_spin_is_locked(&l));
}

enum { THREADS = 4, ITERS = 20000 };

static qlock_spinlock_t lock = QLOCK_SPINLOCK_INIT;
static void (*lock_fn)(qlock_spinlock_t *);
static void (*unlock_fn)(qlock_spinlock_t *);
static long in_cs, count;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		lock_fn(&lock);
		assert(++in_cs == 1);
		count++;
		in_cs--;
		unlock_fn(&lock);
	}
	return NULL;
}

static void run(void (*l)(qlock_spinlock_t *), void (*u)(qlock_spinlock_t *),
		int threads)
{
	pthread_t t[THREADS];

	lock_fn = l;
	unlock_fn = u;
	count = 0;
	for (int i = 0; i < threads; i++)
		assert(!pthread_create(&t[i], NULL, worker, NULL));
	for (int i = 0; i < threads; i++)
		assert(!pthread_join(t[i], NULL));
	assert(count == (long)threads * ITERS);
	assert(qa_read(&lock.val) == 0);
}

/* A waiter that finds the lock held must take the slow path. */
static void *contender(void *arg)
{
	(void)arg;
	qlock_spin_lock(&lock);
	qlock_spin_unlock(&lock);
	return NULL;
}

int main(void)
{
	struct qc_class_stats st;
	pthread_t t;

	test_layout();
	qc_stats_reset();
	qlock_spin_lock(&lock);
	assert(!pthread_create(&t, NULL, contender, NULL));
	/* Wait for the contender to show up in the word (pending or tail). */
	while (qa_read(&lock.val) == QS_LOCKED_VAL)
		sched_yield();
	qlock_spin_unlock(&lock);
	assert(!pthread_join(t, NULL));
	run(qlock_spin_lock, qlock_spin_unlock, THREADS);
	run(qs_lock_cmpxchg_grab, qlock_spin_unlock, THREADS);
	run(qs_lock_cmpxchg_wait, qlock_spin_unlock, THREADS);
	run(qs_lock_spin_only, qs_unlock_spin_only, 2);
	qc_stats_read(QC_CLASS_qspinlock, &st);
	assert(st.ev[QC_EV_slowpath] > 0);
	return 0;
}
