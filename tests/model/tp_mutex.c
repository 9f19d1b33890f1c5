/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the TP futex mutex (docs/testing.md): plain data
 * in the critical section, assert.  Built in the model build
 * (model_core.h).  Each variant is one check reaching one path (two
 * threads, one iteration each; a third thread multiplies GenMC's work
 * past any budget):
 *   0  hand-off: two lockers, hand-off asked at once (HANDOFF_NS 0), no
 *      owner spin: the waiter takes the serial lock, sets W|S and sleeps
 *      on the word; the unlock claims the request and writes the top
 *      waiter's tid into the word, then wakes it
 *   1  slow unlock and steal: as 0 with no hand-off: the unlock frees the
 *      word and wakes the top waiter, which takes it or finds it stolen
 *   2  top-waiter spin: an owner-spin budget that does not run out under
 *      the checker (its clock stands still): the top waiter spins on the
 *      owner and never sleeps
 *   3  trylock: a locker and a trylocker (fast path, steal, failure)
 *   4  timeout withdrawal: a locker and a timed locker whose futex waits
 *      may time out anywhere: as the top waiter (with two threads it
 *      never waits for the serial lock) it returns ETIMEDOUT from its
 *      wait on the word, or withdraws its hand-off request unless the
 *      unlock claimed it (a timed-out wait on the serial lock itself:
 *      tp_serial.c, variant 1)
 *   5  serial queue: three lockers (the serial lock's sleep, its wake and
 *      its hand-off request) in any order -- test runs only, too big for
 *      the checker (over 150 s under RC11); variants 6 to 8 and
 *      tp_serial.c fix parts of its interleavings
 *   6  serial queue, ordered: main holds the mutex, starts a locker,
 *      waits until it sleeps (the top waiter, on the word), starts a
 *      second, waits until it sleeps (on the serial lock), then unlocks:
 *      the serial lock's sleep and its wake (model_await_asleep prunes
 *      every other order); the woken top waiter takes the mutex with
 *      SERIAL (serial is 2) and its unlock releases the serial lock
 *      before the word and wakes the second after it.  The serial lock's hand-off request (a
 *      third locker beating the woken one: with main locking again the
 *      check ran past 150 s) and a timed-out wait on it (a third locker,
 *      timed) are checked on the serial lock alone: tests/model/tp_serial.c
 *   7  a late locker against a hand-off: main holds the mutex, starts a
 *      locker, waits until it sleeps on the word (top waiter: it asked
 *      for the hand-off at once, HANDOFF_NS 0, and set W|S), starts a
 *      second and unlocks at once: the second races with the unlock's
 *      hand-off and the top waiter's wake; its steal is refused while
 *      the request is pending (a free word with a request: the top
 *      waiter asked before main's fast unlock saw W), and it queues on
 *      the serial lock or takes the mutex once the top waiter is done
 *   8  a late locker against a sleeping top waiter, no hand-off: as 7
 *      with no hand-off: the second steals the word the unlock freed
 *      before the woken top waiter takes it (which sleeps again), or
 *      queues behind it
 *   9  requeue against the unlock (tp_model_requeues 1, no hand-off):
 *      main holds the mutex, starts a locker and unlocks at once; a top
 *      waiter that finds main's bare word gives main the serial lock
 *      (owner -> owner|SERIAL, its cmpxchg racing main's fast unlock)
 *      and queues on it again; main's unlock, failing on SERIAL, takes
 *      the slow path, releases the serial lock and the word and wakes
 *      it; or main's fast unlock comes first and the cmpxchg fails
 *  10  requeue, ordered: as 9, main unlocking only once the locker sleeps
 *      on the serial lock it gave away
 * Mutation: the steal's acquire made relaxed.  Wake mutation: the
 * unlock's wake of the sleeping top waiter dropped (variants 0, 6, 7,
 * 8).
 *
 * GenMC options: the futex out of line (QC_MODEL_FUTEX_OUT_OF_LINE,
 * core/futex.c says why) and instruction caching off, as rwsem.c: variant
 * 0 then checks in 0.3 s instead of 34 s, all of it GenMC's static pass.
 * Variant 5 with main holding the mutex until the others sleep (as
 * rwsem.c's variant 7) still ran past 150 s.
 *
 * modelcheck: -unroll=2 --disable-instruction-caching variants=0,1,2,3,4,6,7,8,9,10 mutants=0,1,2,3,4,7,8 wake-mutants=0,6,7,8 full-only=7:imm,8:imm
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
/* Variants 9 and 10 count the threads awake (core/futex.c): a serial
 * lock that the requeue left held for nobody leaves the locker asleep
 * for ever, which is otherwise only a blocked execution (a requeue that
 * does not set SERIAL is caught so, in both). */
#if defined(MODEL_VARIANT) && MODEL_VARIANT >= 9 && !defined(QC_MODEL_LOST_WAKE_CHECK)
#define QC_MODEL_LOST_WAKE_CHECK 1
#endif
#include "model_core.h"

#include "core/osq.c"
#include "lock/tp_mutex.c"
#include "lock/tp_tid.c"

#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

#define ITERS MODEL_ITERS(1, 2)

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static int counter; /* plain: protected by m */
static int extra;   /* plain: the try/timed locker's take, read after the join */
static int inside;
static int variant;

static void critical_section(void)
{
	assert(!inside);
	inside = 1;
	counter++;
	inside = 0;
}

static void *locker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		qlock_tp_mutex_lock(&m);
		assert(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
		critical_section();
		qlock_tp_mutex_unlock(&m);
	}
	return NULL;
}

static void *trylocker(void *arg)
{
	(void)arg;
	if (qlock_tp_mutex_trylock(&m)) {
		critical_section();
		extra = 1;
		qlock_tp_mutex_unlock(&m);
	}
	return NULL;
}

/* A deadline only a futex wait's time-out reaches under the checker. */
static void *timedlocker(void *arg)
{
	struct timespec later = { 1, 0 };

	(void)arg;
	if (qlock_tp_mutex_timedlock(&m, &later, CLOCK_MONOTONIC) == 0) {
		critical_section();
		extra = 1;
		qlock_tp_mutex_unlock(&m);
	}
	return NULL;
}

static void tune(int v)
{
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, v == 2 ? 1000000 : 0);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS,
		       v == 0 || (v >= 4 && v <= 7) ? 0 : 1000000000);
	tp_model_requeues = v >= 9;
}

/* Variant 6: main holds the mutex until the two lockers sleep, one on
 * the word (top waiter), one on the serial lock. */
static void behind_main(void)
{
	qlock_tp_mutex_lock(&m);
	model_spawn(locker, NULL);
	model_await_asleep(1);
	model_spawn(locker, NULL);
	model_await_asleep(2);
	critical_section();
	qlock_tp_mutex_unlock(&m);
}

/* Variants 9 and 10: main holds the mutex while a locker, as top
 * waiter, requeues for it (at once, or once it sleeps on the serial
 * lock it gave main). */
static void requeue_behind_main(bool ordered)
{
	qlock_tp_mutex_lock(&m);
	model_spawn(locker, NULL);
	if (ordered)
		model_await_asleep(1);
	critical_section();
	qlock_tp_mutex_unlock(&m);
}

/* Variants 7 and 8: main holds the mutex until a locker sleeps on the
 * word (the top waiter), then starts a second and unlocks at once: the
 * second races with the unlock and the top waiter's wake. */
static void late_locker(void)
{
	qlock_tp_mutex_lock(&m);
	model_spawn(locker, NULL);
	model_await_asleep(1);
	model_spawn(locker, NULL);
	critical_section();
	qlock_tp_mutex_unlock(&m);
}

int main(void)
{
	for_each_variant(variant, 11) {
		void *(*second)(void *) = variant == 3 ? trylocker :
					  variant == 4 ? timedlocker : locker;

		tune(variant);
		int lockers = (second == locker) + 1 + (variant == 5);

		counter = extra = 0;
		if (variant >= 9) {
			requeue_behind_main(variant == 10);
			lockers = 1;
			extra = 1; /* main's own section */
		} else if (variant == 6 || variant >= 7) {
			if (variant == 6)
				behind_main();
			else
				late_locker();
			extra = 1; /* main's own section */
		} else {
			model_spawn(locker, NULL);
			model_spawn(second, NULL);
			if (variant == 5)
				model_spawn(locker, NULL);
		}
		model_join_all();
		assert(counter == lockers * ITERS + extra);
		assert(m.val == 0 && m.serial == 0 && m.handoff == 0 &&
		       m.nval == 0);
	}
	return 0;
}
