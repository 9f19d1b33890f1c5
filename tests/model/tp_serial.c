/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the TP locks' serial lock on its own
 * (tp_serial_lock/unlock and the hand-off request, src/lock/tp_serial.h),
 * over two words of its own: through the whole mutex its hand-off request
 * needs a third locker, past any budget (tests/model/tp_mutex.c).  Plain
 * data in the critical section, assert; after the join the count of
 * sections, the serial word free (never left held for nobody) and no
 * request left.  Built in the model build (model_core.h).
 * Each variant is one check reaching one path:
 *   0  hand-off request (main and a waiter A, spin limit 1): main holds
 *      the lock, starts A, waits until A sleeps on the serial word
 *      (model_await_asleep), releases (the wake) and takes it again at
 *      once.  Where the re-take comes between the wake and A's xchg, the
 *      woken A finds the lock taken, asks for it, sleeps on the request
 *      word, and main's release hands it over and wakes A; the other
 *      orders: A's request finds the lock free (the two cmpxchg's on the
 *      serial word decide), A takes it first and main sleeps, a release
 *      that took the lock back finds the request gone and frees it again
 *   1  timed-out wait: as 0 with A's futex waits timed, so they may time
 *      out anywhere: on the serial word (ETIMEDOUT, A's xchg having left
 *      2: one spare wake-up), or on the request word (A withdraws its
 *      request, or finds the lock handed to it meanwhile and keeps it):
 *      a timed-out A never holds the lock
 *   2  a pending request met (main and waiters A and B, spin limit 0):
 *      main holds the lock until A and then B sleep on the serial word,
 *      releases and takes it again: a woken waiter beaten to the lock
 *      while the other's request is pending makes none (EAGAIN) and
 *      sleeps on the serial word again
 *   3  a new arrival and two releasers (main and waiters A and B, spin
 *      limit 0): as 0 until A's request is pending (main awaits A asleep
 *      on the request word), then main starts B and releases: B arrives
 *      while the request is pending, so its cmpxchg on a free word is
 *      refused; it takes the lock with its xchg in the gap of main's
 *      release (then B's release and main's race for A's one request:
 *      one hands the lock over, the other finds the request served), or
 *      sleeps on the serial word until A's release wakes it
 * Mutation: the requester's acquire read of the request word made relaxed:
 * a lock handed over no longer orders the releaser's critical section
 * before the requester's (caught in every variant).
 * (The release's hand-over made relaxed is not a weakening: the releaser's
 * fully ordered RMW of the request word before it heads a release sequence
 * that the relaxed RMW continues; GenMC verified it under both models.)
 * Wake mutation: the release's wake of the requester sleeping on the
 * request word dropped (variants 0 and 3, where A sleeps untimed).
 *
 * GenMC options: as tp_mutex.c's (futex out of line, instruction caching
 * off); -unroll=3: at 2, 10 executions of variant 0 ended blocked.
 *
 * modelcheck: -unroll=3 --disable-instruction-caching variants=0,1,2,3 wake-mutants=0,3
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
#include "model_core.h"

/* tp_self_tid()'s slow path and cache are tp_tid.c's (tp_tid_slow). */
#include "lock/tp_mutex.c"
#include "lock/tp_tid.c"

#include "qlock/qlock.h"

/* Test runs: each variant this many times (60 threads in all, within
 * the model's QC_MODEL_THREADS). */
#define RUNS MODEL_ITERS(1, 10)

static uint32_t serial, request; /* the lock's serial and ho words */
static int counter;              /* plain: protected by the serial lock */
static int inside;
static int timed_out; /* plain: A's, read after the join */
static int variant;

/*
 * Run as a test, main re-takes the lock long before the woken waiter
 * runs, and is gone again by the time the waiter asks: main holds it
 * until a request is made or every waiter returned (bounded), so that
 * the hand-off happens there too.  And a timed waiter times out at once
 * there (the futex model), so main waits until each waiter sleeps or has
 * returned, not the whole of model_await_asleep()'s bound.  Under GenMC
 * every order is explored anyway (a shared count would only multiply
 * them), and model_await_asleep() is an assume.
 */
#ifdef QLOCK_UNDER_GENMC
static void waiter_returns(void)
{
}

static void await_waiters(void)
{
	model_await_asleep(model_nstarts);
}

static void let_waiter_ask(void)
{
}

/* Variant 3: A (thread 1) asleep on the request word: asleep with its
 * request made (it sleeps on the serial word only without one).  Two
 * assumes: GenMC's compare only integer constants. */
static void await_request_sleeper(void)
{
	model_await(qa_read(&model_sleeping_on[1]) != 0);
	model_await((qa_read(&request) >> TP_HO_SHIFT) != 0);
}
#else
static int returned; /* waiters returned, in all runs */

static void waiter_returns(void)
{
	qa_fetch_add(&returned, 1);
}

/* Each waiter started has returned or sleeps. */
static bool waiters_done_or_asleep(void)
{
	int n = qa_read(&returned);

	for (int j = 1; j < QC_MODEL_THREADS; j++)
		n += qa_read(&model_sleeping_on[j]) != 0;
	return n >= model_nstarts;
}

static void await_waiters(void)
{
	model_poll(waiters_done_or_asleep());
}

static void let_waiter_ask(void)
{
	model_poll(qa_read(&request) || qa_read(&returned) >= model_nstarts);
}

/* A thread sleeps on the request word, or every waiter has returned. */
static bool request_sleeper_or_done(void)
{
	for (int j = 1; j < QC_MODEL_THREADS; j++)
		if (qa_read(&model_sleeping_on[j]) == &request)
			return true;
	return qa_read(&returned) >= model_nstarts;
}

static void await_request_sleeper(void)
{
	model_poll(request_sleeper_or_done());
}
#endif

static void critical_section(void)
{
	assert(!inside);
	inside = 1;
	counter++;
	inside = 0;
}

static int serial_lock(const struct timespec *abs)
{
	return tp_serial_lock(&serial, &request, abs, CLOCK_MONOTONIC, CLS,
			      QC_OP_LOCK, NULL, 0, 1);
}

static void serial_unlock(void)
{
	tp_serial_unlock(&serial, &request, CLS, QC_OP_UNLOCK);
}

static void *waiter(void *arg)
{
	/* A deadline only a futex wait's time-out reaches under the
	 * checker. */
	struct timespec later = { 1, 0 };
	int err;

	(void)arg;
	err = serial_lock(variant == 1 ? &later : NULL);
	if (err) {
		assert(err == ETIMEDOUT && variant == 1);
		timed_out = 1;
	} else {
		critical_section();
		serial_unlock();
	}
	waiter_returns();
	return NULL;
}

int main(void)
{
	for_each_variant(variant, 4) {
		/* Variants 2 and 3 without the spin (0 and 1 have it): half
		 * the executions. */
		qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, variant >= 2 ? 0 : 1);
		for (int run = 0; run < RUNS; run++) {
			int waiters = 1 + (variant == 2);

			counter = timed_out = 0;
			assert(serial_lock(NULL) == 0);
			model_spawn(waiter, NULL);
			await_waiters();
			if (waiters == 2) {
				model_spawn(waiter, NULL);
				await_waiters();
			}
			critical_section();
			serial_unlock();
			assert(serial_lock(NULL) == 0);
			let_waiter_ask();
			if (variant == 3) {
				await_request_sleeper();
				model_spawn(waiter, NULL);
				waiters++;
			}
			critical_section();
			serial_unlock();
			model_join_all();
			assert(counter == 2 + waiters - timed_out);
			/* Free, and never held for nobody: a withdrawn request
			 * leaves neither the lock taken nor the request. */
			assert(serial == 0 && request == 0);
		}
	}
	return 0;
}
