/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_MODEL: the build of the core that a model checker (GenMC) can
 * explore, and that the tests/model harnesses also run with real threads.
 * A harness defines QLOCK_MODEL and #includes the library's own sources
 * (tests/model/model_core.h), so one .c file is the whole program.
 *
 * What changes, and why:
 *  - atomics: whole-word only (QLOCK_WORD_ATOMICS_ONLY), since checkers
 *    reject a byte access to a word that is also accessed whole;
 *  - futex: a model with a queue of sleepers, so a wake-up that nobody
 *    sends leaves its sleeper blocked for ever (futex.c);
 *  - time: a per-thread model clock that advances by 1 ns per reading
 *    (qc_now_ns), and jumps to the deadline when a timed futex wait
 *    times out, so deadlines and spin budgets expire after a few steps;
 *  - threads: the model thread index below names slots and TP owners,
 *    instead of pthread keys, pthread_once and gettid();
 *  - lock event and futex call counters are compiled out, misuse is an
 *    assertion instead of a message on stderr, nothing reads the
 *    environment.
 *
 * Under GenMC (detected by its <genmc.h> on the include path) a relax is
 * empty: GenMC turns side-effect-free spin loops into assume()s.
 */
#ifndef QLOCK_CORE_MODEL_H
#define QLOCK_CORE_MODEL_H

#ifdef QLOCK_MODEL

#ifndef QLOCK_WORD_ATOMICS_ONLY
#define QLOCK_WORD_ATOMICS_ONLY 1
#endif
#ifndef QLOCK_NO_LOCK_EVENTS
#define QLOCK_NO_LOCK_EVENTS 1
#endif
#if defined(__has_include)
#if __has_include(<genmc.h>)
#define QLOCK_UNDER_GENMC 1
#endif
#endif

/*
 * Threads a model program may start, main included: GenMC numbers them
 * without reuse, so a harness has main and at most 3 threads there (every
 * futex wake scans them all); run as a test, every thread it ever starts.
 */
#ifdef QLOCK_UNDER_GENMC
#define QC_MODEL_THREADS 4
#else
#define QC_MODEL_THREADS 64
#endif
#ifndef QLOCK_MAX_THREADS
#define QLOCK_MAX_THREADS QC_MODEL_THREADS
#endif

/* This thread's index, 0 .. QC_MODEL_THREADS - 1 (asserted). */
int qc_model_self(void);

#ifndef QLOCK_UNDER_GENMC
#include <sched.h>
#endif

/*
 * Threads that can still wake a sleeper: main while it starts the others,
 * then every started thread until it returns, minus the futex sleepers.
 * The harness (tests/model/model_core.h) counts starts and returns; when a
 * sleeper sees none left, nobody can ever wake it: a lost wake-up, which
 * the model reports as a failed assertion (so no liveness check is needed).
 */
void qc_model_awake_add(int n);
/* A started thread: awake and not returned (+1), or returned (-1). */
void qc_model_thread_add(int n);

/* A pause in a model wait loop: real threads on few CPUs give the CPU to
 * the thread they wait for; GenMC needs nothing (and has no sched.h). */
static inline void qc_model_relax(void)
{
#ifndef QLOCK_UNDER_GENMC
	sched_yield();
#endif
}

/*
 * A store that only marks progress, after an inner loop that ends without
 * one (a part cmpxchg that finds another value).  GenMC 0.10.3 looks for
 * the previous iteration of an enclosing retry loop from the nearest loop
 * start, which is the inner loop's; with no store after it, the retry
 * looks like an idle spin and the execution is cut (wrongly: a liveness
 * error under -check-liveness, a lost execution without).
 */
#ifdef QLOCK_UNDER_GENMC
extern unsigned qc_model_steps[QC_MODEL_THREADS];
static inline void qc_model_step(void)
{
	qc_model_steps[qc_model_self()]++;
}
#endif

#endif /* QLOCK_MODEL */

#ifndef QLOCK_UNDER_GENMC
#define qc_model_step() ((void)0)
#endif

#endif /* QLOCK_CORE_MODEL_H */
