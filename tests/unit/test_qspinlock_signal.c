/* SPDX-License-Identifier: MIT */
/*
 * qspinlock: a signal handler takes lock B while its thread is queued on
 * lock A (the kernel's nesting levels: the handler queues with node 1).
 *
 * 1. Deterministic: main holds A and B; workers queue on A (we wait until
 *    A's tail names one); two B-only threads contend for B until B has a
 *    queue (so no handler can take B's pending instead); each worker is
 *    signalled and its handler queues on B: the one we know is queued on
 *    A must use a nesting-level-1 node (event lock_use_node2, counted
 *    when the node is claimed).  We wait for that event, then let go.
 * 2. Stress: workers loop on A while a signaller rains SIGUSR1 on them;
 *    the handler takes and releases B, which a normal thread also loops
 *    on.  Both locks' critical sections check mutual exclusion.
 * Every variant, via the lock registry.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "core/atomic.h"
#include "core/lockevent.h"
#include "lock/qspinlock_variants.h"
#include "lockreg.h"

static const struct lr_lock *lk;
static qlock_spinlock_t *A, *B;
static long a_in, a_count, b_in, b_count; /* plain data under A / B */
static int stop, handlers_done;

static void cs_a(void)
{
	assert(++a_in == 1);
	a_count++;
	a_in--;
}

static void cs_b(void)
{
	assert(++b_in == 1);
	b_count++;
	b_in--;
}

static void on_signal(int sig)
{
	(void)sig;
	lk->lock(B);
	cs_b();
	lk->unlock(B);
	qa_fetch_add(&handlers_done, 1);
}

/* ---- 1. deterministic nesting ------------------------------------------ */

static void *a_once(void *arg)
{
	(void)arg;
	lk->lock(A);
	cs_a();
	lk->unlock(A);
	return NULL;
}

static void *b_once(void *arg)
{
	(void)arg;
	lk->lock(B);
	cs_b();
	lk->unlock(B);
	return NULL;
}

static void wait_tail(qlock_spinlock_t *l, int idx)
{
	for (;;) {
		uint32_t v = qa_read(&l->val);

		if ((v & QS_TAIL_MASK) && (idx < 0 || qs_tail_idx(v) == idx))
			return;
		sched_yield();
	}
}

static void nesting_once(void)
{
	enum { W = 3 };
	pthread_t w[W], bts[2];
	struct qc_class_stats st;

	a_count = b_count = 0;
	qa_write(&handlers_done, 0);
	qc_stats_reset();
	lk->lock(A);
	lk->lock(B);
	for (int i = 0; i < W; i++)
		assert(!pthread_create(&w[i], NULL, a_once, NULL));
	wait_tail(A, 0);  /* at least one worker queued on A */
	for (int i = 0; i < 2; i++)
		assert(!pthread_create(&bts[i], NULL, b_once, NULL));
	wait_tail(B, -1); /* B has a queue: it stays while we hold B */
	for (int i = 0; i < W; i++)
		assert(!pthread_kill(w[i], SIGUSR1));
	/* The worker queued on A (it stays queued: we hold A) runs its
	 * handler with its level-0 node in use, so it queues on B (held by
	 * us) with a level-1 node. */
	do {
		sched_yield();
		qc_stats_read(QC_CLASS_qspinlock, &st);
	} while (!st.ev[QC_EV_lock_use_node2]);
	lk->unlock(B);
	while (qa_read(&handlers_done) < W)
		sched_yield();
	lk->unlock(A);
	for (int i = 0; i < W; i++)
		assert(!pthread_join(w[i], NULL));
	for (int i = 0; i < 2; i++)
		assert(!pthread_join(bts[i], NULL));
	assert(a_count == W && b_count == W + 2);
	qc_stats_read(QC_CLASS_qspinlock, &st);
	assert(st.ev[QC_EV_lock_use_node2] >= 1);
}

/* ---- 2. stress ------------------------------------------------------------ */

static void *a_loop(void *arg)
{
	(void)arg;
	while (!qa_read(&stop)) {
		lk->lock(A);
		cs_a();
		lk->unlock(A);
	}
	return NULL;
}

static void *b_loop(void *arg)
{
	(void)arg;
	while (!qa_read(&stop)) {
		lk->lock(B);
		cs_b();
		lk->unlock(B);
	}
	return NULL;
}

static void stress(void)
{
	enum { W = 3, HANDLED = 1000 };
	pthread_t w[W], bt;

	a_count = b_count = 0;
	qa_write(&stop, 0);
	qa_write(&handlers_done, 0);
	for (int i = 0; i < W; i++)
		assert(!pthread_create(&w[i], NULL, a_loop, NULL));
	assert(!pthread_create(&bt, NULL, b_loop, NULL));
	/* Pending signals merge: keep signalling until enough ran. */
	for (int i = 0; qa_read(&handlers_done) < HANDLED; i++) {
		assert(!pthread_kill(w[i % W], SIGUSR1));
		if (i % 4 == 0)
			sched_yield();
	}
	qa_write(&stop, 1);
	for (int i = 0; i < W; i++)
		assert(!pthread_join(w[i], NULL));
	assert(!pthread_join(bt, NULL));
	assert(a_in == 0 && b_in == 0 && a_count > 0);
	assert(b_count >= qa_read(&handlers_done));
}

int main(void)
{
	static const char *const names[] = {
		"qspinlock", "qspinlock-cmpxchg-grab", "qspinlock-cmpxchg-wait",
		"qspinlock-spin-only",
	};
	struct sigaction sa;

#if defined(__SANITIZE_THREAD__)
	/* ThreadSanitizer holds asynchronous signals back until the thread
	 * makes a call it intercepts; a thread queued in the lock (spinning,
	 * or in a raw futex system call) never gets to its handler, so the
	 * scenario cannot happen under TSan.  The plain build runs it. */
	return 0;
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	assert(!sigaction(SIGUSR1, &sa, NULL));

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		lk = lr_find(names[i]);
		assert(lk);
		A = lr_new(lk);
		B = lr_new(lk);
		assert(A && B);
		nesting_once();
		/* The spin-only variant is not meant for oversubscription:
		 * its stress run would only measure the scheduler. */
		if (!(lk->flags & LR_SPIN_ONLY))
			stress();
		lr_free(lk, A);
		lr_free(lk, B);
	}
	return 0;
}
