/* SPDX-License-Identifier: MIT */
/*
 * The core of the library, in its model build, for a harness to include:
 * a harness is one translation unit, so that GenMC (which checks a single
 * file) sees the library's real sources, not copies.
 *
 *	#include "model_core.h"      first, before any other header
 *	#include "lock/tp_mutex.c"   then the lock sources under test
 *
 * The same file builds as an ordinary test (tests/CMakeLists.txt).  Each
 * harness also has one mutation (QLOCK_MUTATE_<NAME>, a weakened ordering
 * or a dropped wake in the lock source) that the checker must catch.
 */
#ifndef QLOCK_TESTS_MODEL_CORE_H
#define QLOCK_TESTS_MODEL_CORE_H

#define QLOCK_MODEL 1

/*
 * A harness is the whole program in one file: gcc's ipa-reference then
 * sees every function that writes a harness's static plain data (a flag
 * set under the lock) and, finding none on the path through a lock or
 * condvar call (its externals, sched_yield and the like, are leaf), keeps
 * the value in a register across the call, acquires notwithstanding.
 * gcc 12 for s390x and aarch64 did so in tp_cond.c's waiter: `while
 * (!ready) wait` read `ready` once and waited again after the signal, a
 * lost wake-up that was the compiler's.  Real threads write that data, so
 * the analysis is off for the model programs (clang has no such pass).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-ipa-reference")
#endif

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/model.c"
#include "core/bravo.c"
#include "core/futex.c"
#include "core/misuse.c"
#include "core/slot.c"
#include "core/spin.c"
#include "core/lockevent.c"

/*
 * Start and join harness threads through these, so the futex model knows
 * who can still wake a sleeper (qc_model_awake_add in core/model.h): main
 * counts as awake while it starts threads, not while it joins them.
 */
static struct model_start {
	void *(*fn)(void *);
	void *arg;
	pthread_t t;
} model_starts[QC_MODEL_THREADS];
static int model_nstarts, model_njoined;

static void *model_run(void *p)
{
	struct model_start *s = p;
	void *r = s->fn(s->arg);

	qc_model_thread_add(-1);
	return r;
}

static inline void model_spawn(void *(*fn)(void *), void *arg)
{
	struct model_start *s;

	assert(model_nstarts < QC_MODEL_THREADS - 1);
	s = &model_starts[model_nstarts++];

	s->fn = fn;
	s->arg = arg;
	qc_model_thread_add(1);
	assert(!pthread_create(&s->t, NULL, model_run, s));
}

/* Join the next thread started and not yet joined, if any. */
static inline void model_join_next(void)
{
	if (model_njoined < model_nstarts)
		assert(!pthread_join(model_starts[model_njoined++].t, NULL));
}

/*
 * Join every thread started since the last call.  Under GenMC the joins
 * are straight-line code, not a loop: a loop in main counts against
 * -unroll, and at -unroll=2 GenMC cut it even for two threads, so main
 * never got past it and no harness's final assertions were checked.
 */
static inline void model_join_all(void)
{
	qc_model_awake_add(-1); /* main only waits now */
#ifdef QLOCK_UNDER_GENMC
	_Static_assert(QC_MODEL_THREADS == 4, "one model_join_next per thread");
	model_join_next();
	model_join_next();
	model_join_next();
#else
	while (model_njoined < model_nstarts)
		model_join_next();
#endif
	qc_model_awake_add(1);
}

/*
 * model_await_asleep(t): main, holding a lock, waits until thread t (the
 * t-th it started) sleeps in the futex, so that what it does next meets
 * t queued: a harness prunes the interleavings where it goes on earlier
 * (the two-thread variants cover those), which makes three lock users
 * checkable.  Under GenMC one read of t's queue entry and an assume (no
 * loop: -unroll would cut it): an execution where t is not asleep yet
 * ends blocked, unexplored.  Run as a test, a bounded poll: the order is
 * a preference there, every order being correct.
 */
#ifdef QLOCK_UNDER_GENMC
#include <genmc.h>
static inline void model_await_asleep(int t)
{
	__VERIFIER_assume(qa_read(&model_sleeping_on[t]) != 0);
}

/*
 * model_await_asleep_synced(t): as model_await_asleep(t), and main then
 * takes and drops the futex model's bucket lock, whose release t's sleep
 * ended with: everything t did before it sleeps happens-before what main
 * does next (and what the threads main starts next do).  Without it a
 * later thread may still read t's older stores, which a three-waiter
 * queue multiplies past any budget (rwsem variant 9: over 200 s against
 * 2 s); those views belong to the variants where the threads race.
 */
static inline void model_await_asleep_synced(int t)
{
	model_await_asleep(t);
	model_bucket_lock();
	model_bucket_unlock();
}
#else
/*
 * model_poll(cond): the bounded poll of a harness run as a test, where
 * `cond` is a preference: it ends after 100000 relaxes or 100 ms,
 * whichever comes first.  Quiet, a relax (sched_yield) takes about a
 * microsecond; when other processes keep every CPU busy, one can cost a
 * time slice, and 100000 of them took minutes (the rwsem harness: 198 s
 * beside `stress-ng --cpu 4` on 2 CPUs with the count alone, 0.3 s with
 * the time bound too).
 */
#include <time.h>

static inline uint64_t model_poll_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define model_poll(cond)						\
	do {								\
		uint64_t model_end_ = model_poll_now_ns() + 100000000u;	\
		for (int model_i_ = 0; model_i_ < 100000 && !(cond);	\
		     model_i_++) {					\
			if (model_i_ % 16 == 15 &&			\
			    model_poll_now_ns() > model_end_)		\
				break;					\
			qc_model_relax();				\
		}							\
	} while (0)

/* Every thread started and not joined sleeps in the futex. */
static inline bool model_all_asleep(void)
{
	int asleep = 0;

	for (int j = 1; j < QC_MODEL_THREADS; j++)
		asleep += qa_read(&model_sleeping_on[j]) != 0;
	return asleep >= model_nstarts - model_njoined;
}

static inline void model_await_asleep(int t)
{
	(void)t;
	model_poll(model_all_asleep());
}

static inline void model_await_asleep_synced(int t)
{
	model_await_asleep(t);
}
#endif

/*
 * model_await(cond): main waits until a lock-state condition holds, for a
 * thread that spins instead of sleeping (a reader group's leader), where
 * model_await_asleep does not fit.  `cond` reads the lock with qa_read();
 * as above, an assume under GenMC (an execution where the condition does
 * not hold yet ends blocked) and a bounded poll as a test.
 */
#ifdef QLOCK_UNDER_GENMC
#define model_await(cond) __VERIFIER_assume(cond)
#else
#define model_await(cond) model_poll(cond)
#endif

/*
 * for_each_variant(v, n): as an ordinary test, a harness runs each of its
 * n variants in turn; under GenMC, which numbers threads without reuse,
 * one per check: MODEL_VARIANT (default 0; `make modelcheck` runs the ones
 * the harness lists on its "modelcheck: variants=" line).
 */
#ifdef QLOCK_UNDER_GENMC
#ifndef MODEL_VARIANT
#define MODEL_VARIANT 0
#endif
#define for_each_variant(v, n) \
	for ((v) = MODEL_VARIANT; (v) == MODEL_VARIANT && (v) < (n); (v) = (n))
#else
#define for_each_variant(v, n) for ((v) = 0; (v) < (n); (v)++)
#endif

/* Iterations: fewer under the checker, where each one multiplies the
 * executions explored. */
#ifdef QLOCK_UNDER_GENMC
#define MODEL_ITERS(checked, tested) (checked)
#else
#define MODEL_ITERS(checked, tested) (tested)
#endif

#endif /* QLOCK_TESTS_MODEL_CORE_H */
