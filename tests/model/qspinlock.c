/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the queued spinlock: 3 threads, a few
 * iterations each, plain data protected by the lock, assert, no I/O.
 * Model build (model_core.h): whole-word atomics (so the one-bit pending
 * layout) and the futex model.  A spin limit of 1 sends
 * waiters to sleep almost at once, so the parking paths (node sleep, head
 * SLOW sleep, stealing) are exercised too.  Mutation: the unlock's
 * release made relaxed.  Wake mutation: the slow unlock's wake of the
 * head sleeping with SLOW dropped (variants 0-2; variant 3 never
 * sleeps); its lost wake-up shows only with the loops unrolled 4 times
 * (at -unroll=2 the executions that reach it end blocked; 0.5-5 s each at
 * 4, where a verification run takes minutes).
 *
 * modelcheck: -unroll=2 variants=0,1,2,3 wake-mutants=0,1,2 wake-unroll=4
 */
#include "model_core.h"

#include "lock/qspinlock.c"

#include "lock/qspinlock_variants.h"
#include "qlock/qlock.h"
#include "qlock/qspinlock.h"

#ifndef QS_MODEL_ITERS
#define QS_MODEL_ITERS 1
#endif
#ifndef QS_MODEL_THREADS
#define QS_MODEL_THREADS 3
#endif
enum {
	THREADS = MODEL_ITERS(QS_MODEL_THREADS, 3),
	ITERS = MODEL_ITERS(QS_MODEL_ITERS, 3),
};

static qlock_spinlock_t lock = QLOCK_SPINLOCK_INIT;
static int in_cs, count; /* plain data */
static int variant;

static void take(void)
{
	switch (variant) {
	case 0: qlock_spin_lock(&lock); break;
	case 1: qs_lock_cmpxchg_grab(&lock); break;
	case 2: qs_lock_cmpxchg_wait(&lock); break;
	default: qs_lock_spin_only(&lock); break;
	}
}

static void drop(void)
{
	if (variant == 3)
		qs_unlock_spin_only(&lock);
	else
		qlock_spin_unlock(&lock);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		take();
		assert(++in_cs == 1);
		count++;
		in_cs--;
		drop();
	}
	return NULL;
}

int main(void)
{

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	for_each_variant(variant, 4) {
		count = 0;
		for (int i = 0; i < THREADS; i++)
			model_spawn(worker, NULL);
		model_join_all();
		assert(count == THREADS * ITERS);
		assert(!qlock_spin_is_locked(&lock));
	}
	return 0;
}
