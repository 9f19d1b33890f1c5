/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the TP condition variable (src/lock/tp_cond.c)
 * on the TP mutex: waiters wait under the mutex until a flag is set, a
 * waker sets it under the mutex and wakes them; the flag and a count of
 * returns are plain data.  Spin limit 1, no owner spin, hand-off at once (in
 * test runs; not under the checker, see HANDOFF_NS).
 * Each variant is one check reaching one path (two threads; a third
 * multiplies GenMC's work past any budget):
 *   0  signal: one waiter, the waker signals
 *   1  broadcast: one waiter, the waker broadcasts (the requeue that wakes
 *      one and moves the rest onto the mutex's serial word, then marks
 *      or takes and releases that word)
 *   2  timeout: one timed waiter whose futex wait may time out anywhere,
 *      before or after the signal (a timed-out waiter that may have
 *      swallowed the wake passes one on)
 *   3  destroy after broadcast: as 1, then the waker destroys the condvar
 *      and frees it at once: the woken waiter's last access to it must
 *      happen before destroy returns
 *   4  broadcast, two waiters (one woken, one requeued onto the serial
 *      word) in any order -- test runs only, too big for the checker
 *   5  destroy after broadcast, two waiters -- test runs only (see
 *      docs/testing.md, "Model checking")
 *   6  broadcast to two sleepers, ordered: main starts a waiter, waits
 *      until it sleeps on the condvar (synchronised with its sleep,
 *      model_await_asleep_synced), starts a second, waits likewise, then
 *      sets the flag under the mutex, unlocks and broadcasts: the
 *      requeue wakes one and moves the other onto the mutex's free
 *      serial word, which the broadcast takes with 2 and releases (a
 *      wake of the requeued one); both re-take the mutex through its
 *      waiter queue.  Spin limit 0 (6 and 7)
 *   7  as 6 with the mutex's hand-off asked at once (HANDOFF_NS 0): the
 *      relocking waiter that becomes top waiter asks for it
 * Mutation: the waiter's leaving decrement (its last access to the
 * condvar) made relaxed instead of release: destroy's acquire no longer
 * orders the waiter's accesses before the free (variant 3; 6 and 7 have
 * no destroy).  Under RC11 only: GenMC 0.10.3 checks no access against
 * a free under IMM (its IMMChecker::checkErrors reports nothing), and a
 * free racing with an access is this mutation's only symptom
 * (docs/testing.md).
 * Wake mutation: the signal's futex wake dropped (variant 0), and the
 * broadcast's requeue of the sleepers it does not wake (variants 6 and
 * 7: the second sleeper stays on the condvar; one waiter, as in 1 and
 * 3, has nobody to requeue); caught under both models.
 * GenMC options: as the rwsem harness's (futex out of line, instruction
 * caching off); before the futex was out of line GenMC 0.10.3 never got
 * past its SpinAssumePass (the mutex's slow paths inlined into the
 * condvar's).
 *
 * modelcheck: -unroll=2 --disable-instruction-caching variants=0,1,2,3,6,7 mutants=3 mutant-models=rc11 wake-mutants=0,6,7 full-only=1:imm,2:imm,3:imm
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
#include "model_core.h"

#include "lock/tp_mutex.c"
#include "lock/tp_tid.c"
#undef CLS /* tp_mutex.c's, and tp_cond.c has its own */
#include "lock/tp_cond.c"

#include <stdlib.h>

/*
 * The mutex's hand-off: at once in test runs; under the checker a budget
 * its clock never reaches (the hand-off is tp_mutex.c's harness's; here
 * it multiplied the executions by 4-5).
 */
#ifdef QLOCK_UNDER_GENMC
#define HANDOFF_NS 1000000000L
#else
#define HANDOFF_NS 0
#endif

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static qlock_tp_cond_t *c;
static int ready, returned, timed_out; /* plain: protected by m */
static int variant;

static bool broadcasts(void)
{
	return variant == 1 || variant >= 3;
}

static bool destroys(void)
{
	return variant == 3 || variant == 5;
}

/* One wait; a timed one may time out. */
static void wait_once(void)
{
	if (variant == 2) {
		/* A deadline only the futex wait's time-out reaches under
		 * the checker. */
		struct timespec later = { 1, 0 };

		if (qlock_tp_cond_timedwait(c, &m, &later, CLOCK_MONOTONIC) ==
		    ETIMEDOUT)
			timed_out = 1;
	} else {
		qlock_tp_cond_wait(c, &m);
	}
}

static void *waiter(void *arg)
{
	(void)arg;
	qlock_tp_mutex_lock(&m);
#ifdef QLOCK_UNDER_GENMC
	/* One wait, no loop (fewer executions): the model has no spurious
	 * wake-ups, so a wait returns only when signalled or timed out
	 * (which the assert below checks). */
	if (!ready)
		wait_once();
#else
	while (!ready && !timed_out)
		wait_once();
#endif
	assert(ready || timed_out);
	returned++;
	qlock_tp_mutex_unlock(&m);
	return NULL;
}

static void *waker(void *arg)
{
	(void)arg;
	qlock_tp_mutex_lock(&m);
	ready = 1;
	if (variant >= 6) {
		/* The broadcast after the unlock (as POSIX allows): the
		 * requeued waiter's serial word is free then.  Under the
		 * mutex it ran 3 times the executions (18765 under RC11). */
		qlock_tp_mutex_unlock(&m);
		qlock_tp_cond_broadcast(c);
		return NULL;
	}
	if (broadcasts())
		qlock_tp_cond_broadcast(c);
	else
		qlock_tp_cond_signal(c);
	qlock_tp_mutex_unlock(&m);
	if (destroys()) {
		qlock_tp_cond_destroy(c);
		free(c);
	}
	return NULL;
}

/*
 * Variants 6 and 7: main is the waker, once both waiters sleep on the
 * condvar.  Straight-line code: a loop in main counts against -unroll.
 */
static void broadcast_to_sleepers(void)
{
	model_spawn(waiter, NULL);
	model_await_asleep_synced(1);
	model_spawn(waiter, NULL);
	model_await_asleep_synced(2);
	waker(NULL);
}

int main(void)
{
	qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, 0);
	for_each_variant(variant, 8) {
		int waiters = variant >= 4 ? 2 : 1;

		/* 6 and 7 without the serial lock's spin (fewer
		 * executions). */
		qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, variant >= 6 ? 0 : 1);
		qlock_tune_set(QLOCK_TUNE_HANDOFF_NS,
			       variant == 7 ? 0 : HANDOFF_NS);
		c = malloc(sizeof(*c));
		assert(c);
		qlock_tp_cond_init(c);
		ready = returned = timed_out = 0;
		if (variant >= 6) {
			broadcast_to_sleepers();
		} else {
			for (int i = 0; i < waiters; i++)
				model_spawn(waiter, NULL);
			model_spawn(waker, NULL);
		}
		model_join_all();
		assert(returned == waiters);
		assert(qlock_tp_mutex_owner(&m) == 0);
		if (!destroys())
			free(c);
	}
	return 0;
}
