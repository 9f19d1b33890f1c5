/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the queued spinlock: 3 threads (2 in variants
 * 0-3 under the checker), a few iterations each, plain data protected by
 * the lock, assert, no I/O.
 * Model build (model_core.h): whole-word atomics (so the one-bit pending
 * layout) and the futex model.  A spin limit of 1 sends
 * waiters to sleep almost at once, so the parking paths (node sleep, head
 * SLOW sleep, stealing) are exercised too.  Mutation: the unlock's
 * release made relaxed.  Wake mutation: the slow unlock's wake of the
 * head sleeping with SLOW dropped (variants 0-2; variant 3 never
 * sleeps); its lost wake-up shows only with the loops unrolled 4 times
 * (at -unroll=2 the executions that reach it end blocked; 0.5-5 s each at
 * 4, where a verification run takes minutes).
 * Under GenMC variants 0-3 run 2 lockers, not 3: with 3, main's spawn
 * loop was cut at -unroll=2 after two starts and main never reached its
 * final assertions, and with main's loops left whole variant 0 ran over
 * 500 s.  Three lockers (queue, head and pending at once) are checked in
 * variants 5-7, ordered by main.
 * Variants 4-7 (run_ordered) emulate nesting: no signals under GenMC, so
 * a worker presets its slot's depth (node0->count) as an interrupted
 * outer slow path leaves it, and checks it is restored; main holds the
 * lock and orders the arrivals.  Variant 4 (park, levels 1 and 0 in one
 * queue) runs as a test only: 9360 executions under RC11, over 200 s
 * under IMM.
 *
 * modelcheck: -unroll=2 variants=0,1,2,3,5,6,7 wake-mutants=0,1,2 wake-unroll=4
 */
#include "model_core.h"

#include "lock/qspinlock.c"

#include "lock/qspinlock_variants.h"
#include "qlock/qlock.h"
#include "qlock/qspinlock.h"

#ifndef QS_MODEL_ITERS
#define QS_MODEL_ITERS 1
#endif
/* Lockers of variants 0-3 under the checker: 2 (with 3, variant 0 ran
 * past 500 s; the three-locker queue is checked in variants 5-7, ordered
 * by main).  Main's spawn loop stays within -unroll=2 this way, so it
 * reaches its join and final assertions. */
#ifndef QS_MODEL_THREADS
#define QS_MODEL_THREADS 2
#endif
enum {
	THREADS = MODEL_ITERS(QS_MODEL_THREADS, 3),
	ITERS = MODEL_ITERS(QS_MODEL_ITERS, 3),
};

static qlock_spinlock_t lock = QLOCK_SPINLOCK_INIT;
static int in_cs, count; /* plain data */
static int variant, kind; /* kind: the lock variant (0-3) taken */
/* Nesting depth each worker finds in its slot's node 0 (variants 4-7). */
static uint32_t depth[3];

static void take(void)
{
	switch (kind) {
	case 0: qlock_spin_lock(&lock); break;
	case 1: qs_lock_cmpxchg_grab(&lock); break;
	case 2: qs_lock_cmpxchg_wait(&lock); break;
	default: qs_lock_spin_only(&lock); break;
	}
}

static void drop(void)
{
	if (kind == 3)
		qs_unlock_spin_only(&lock);
	else
		qlock_spin_unlock(&lock);
}

static void critical_section(void)
{
	assert(++in_cs == 1);
	count++;
	in_cs--;
}

static void *worker(void *arg)
{
	uint32_t d = depth[(intptr_t)arg];
	uint32_t *nest = NULL;

	/* Emulated nesting: the depth an outer slow path, interrupted by a
	 * signal whose handler now locks, leaves in node 0 (only a worker
	 * with one touches its slot here, as in variants 0-3). */
	if (d) {
		nest = &qs_nodes[qc_slot_self()][0].count;
		qa_write(nest, d);
	}
	for (int i = 0; i < ITERS; i++) {
		take();
		critical_section();
		drop();
		if (nest)
			assert(qa_read(nest) == d); /* its nodes given back */
	}
	return NULL;
}

/*
 * Main, holding the lock, waits until the word shows the worker it just
 * started queued with node `idx` (-1: owning pending, 0,1,1), so that the
 * next worker meets it there.  Under GenMC one read and an assume: the
 * other orders end blocked (variants 0-3 leave them free); as a test a
 * bounded poll, a preference only.
 */
static bool shows(uint32_t w, int idx)
{
	if (idx < 0)
		return w == (QS_PENDING_VAL | QS_LOCKED_VAL);
	return (w & QS_TAIL_SLOT_MASK) && qs_tail_idx(w) == idx;
}

static void await_worker(int idx)
{
#ifdef QLOCK_UNDER_GENMC
	__VERIFIER_assume(shows(qa_read(&lock.val), idx));
#else
	model_poll(shows(qa_read(&lock.val), idx));
#endif
}

/* model_join_all() without its loop, which -unroll=2 cuts after two
 * joins (main would block there, its final assertions unchecked). */
static void join_unrolled(void)
{
	qc_model_awake_add(-1);
	if (model_njoined < model_nstarts)
		assert(!pthread_join(model_starts[model_njoined++].t, NULL));
	if (model_njoined < model_nstarts)
		assert(!pthread_join(model_starts[model_njoined++].t, NULL));
	if (model_njoined < model_nstarts)
		assert(!pthread_join(model_starts[model_njoined++].t, NULL));
	assert(model_njoined == model_nstarts);
	qc_model_awake_add(1);
}

/*
 * Variants 4-7: main takes the lock, starts the workers one by one, each
 * once the previous one shows in the word (the no-node worker never
 * does: started last, free), then releases.  Workers 0..2 use depth[].
 *  4 park: worker 0 (depth 1: node 1) queues, worker 1 (node 0) behind
 *    it decodes a level-1 tail; node 1 hands over to node 0.
 *  5 spin-only: worker 0 owns pending, worker 1 (depth 3: node 3, the
 *    last) queues, worker 2 (node 0) behind it.
 *  6 park: worker 0 queues (node 0); worker 1 (depth QS_MAX_NODES) takes
 *    the no-node path: the stealing trylock against the queue head.
 *  7 spin-only: worker 0 owns pending, worker 1 queues (node 0), worker 2
 *    (depth QS_MAX_NODES) has no node: the fair trylock.
 */
static int run_ordered(void)
{
	static const int shown[4][3] = {
		{ 1, 0, -2 }, { -1, 3, 0 }, { 0, -2, -2 }, { -1, 0, -2 },
	};
	const int *want = shown[variant - 4];
	int n = variant == 4 || variant == 6 ? 2 : 3;

	depth[0] = variant == 4 ? 1 : 0;
	depth[1] = variant == 5 ? QS_MAX_NODES - 1 :
		   variant == 6 ? QS_MAX_NODES : 0;
	depth[2] = variant == 7 ? QS_MAX_NODES : 0;
	take();
	critical_section();
	model_spawn(worker, (void *)(intptr_t)0);
	await_worker(want[0]);
	model_spawn(worker, (void *)(intptr_t)1);
	if (want[1] > -2)
		await_worker(want[1]);
	if (n == 3) {
		model_spawn(worker, (void *)(intptr_t)2);
		if (want[2] > -2)
			await_worker(want[2]);
	}
	drop();
	join_unrolled();
	return n * ITERS + 1;
}

int main(void)
{

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	for_each_variant(variant, 8) {
		int total = THREADS * ITERS;

		kind = variant < 4 ? variant : variant & 1 ? 3 : 0;
		count = 0;
		if (variant < 4) {
			/* Straight-line: a loop in main counts against
			 * -unroll (see THREADS). */
			model_spawn(worker, (void *)(intptr_t)0);
			model_spawn(worker, (void *)(intptr_t)0);
			if (THREADS > 2)
				model_spawn(worker, (void *)(intptr_t)0);
			model_join_all();
		} else {
			total = run_ordered();
		}
		assert(count == total);
		assert(!qlock_spin_is_locked(&lock));
	}
	return 0;
}
