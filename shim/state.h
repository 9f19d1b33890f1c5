/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's process-wide state, at the bottom of the shim: glibc's
 * functions, the algorithm serving each object class, how far the set-up
 * has come, the switches the statistics set and the per-thread id cache.
 * Every other unit may read it; it calls none of them.  config.c fills
 * it in at set-up (shim_setup()), exit_report.c and profile.c turn the
 * statistics on.
 */
#ifndef QLOCK_SHIM_STATE_H
#define QLOCK_SHIM_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/atomic.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- glibc's functions -------------------------------------------------- */

#define REAL_LIST(X)                                                        \
	X(pthread_mutex_init, int, (pthread_mutex_t *, const pthread_mutexattr_t *)) \
	X(pthread_mutex_destroy, int, (pthread_mutex_t *))                   \
	X(pthread_mutex_lock, int, (pthread_mutex_t *))                      \
	X(pthread_mutex_trylock, int, (pthread_mutex_t *))                   \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(pthread_mutex_unlock, int, (pthread_mutex_t *))                    \
	X(pthread_rwlock_init, int, (pthread_rwlock_t *, const pthread_rwlockattr_t *)) \
	X(pthread_rwlock_destroy, int, (pthread_rwlock_t *))                 \
	X(pthread_rwlock_rdlock, int, (pthread_rwlock_t *))                  \
	X(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t *))               \
	X(pthread_rwlock_clockrdlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_wrlock, int, (pthread_rwlock_t *))                  \
	X(pthread_rwlock_trywrlock, int, (pthread_rwlock_t *))               \
	X(pthread_rwlock_clockwrlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_unlock, int, (pthread_rwlock_t *))                  \
	X(pthread_spin_init, int, (pthread_spinlock_t *, int))               \
	X(pthread_spin_lock, int, (pthread_spinlock_t *))                    \
	X(pthread_spin_trylock, int, (pthread_spinlock_t *))                 \
	X(pthread_spin_unlock, int, (pthread_spinlock_t *))

struct shim_real {
#define X(name, ret, args) ret(*name) args;
	REAL_LIST(X)
#undef X
};
extern struct shim_real real;

/* ---- the algorithm serving each object class ---------------------------- */

enum shim_malg { MALG_GLIBC, MALG_QSPINLOCK, MALG_TP, MALG_NR };
enum shim_ralg { RALG_GLIBC, RALG_QRWLOCK, RALG_RWSEM, RALG_TP, RALG_NR };
enum shim_salg { SALG_GLIBC, SALG_QSPINLOCK, SALG_NR };

extern enum shim_malg shim_malg;
extern enum shim_ralg shim_ralg;
extern enum shim_salg shim_salg;

/* The names QLOCK_MUTEX, QLOCK_RWLOCK and QLOCK_SPIN take. */
extern const char *const shim_malg_names[MALG_NR];
extern const char *const shim_ralg_names[RALG_NR];
extern const char *const shim_salg_names[SALG_NR];

/* The name of the algorithm serving "mutex", "rwlock", "spin" or "cond",
 * as chosen so far (NULL for anything else). */
const char *shim_alg_name(const char *what);

/* ---- set-up ------------------------------------------------------------- */

extern int shim_state; /* 0 = not set up, 1 = being set up, 2 = ready */
/* Set up, mutexes on the TP algorithm: the entry points of NORMAL and
 * ADAPTIVE mutexes may take the inline fast paths (mutex.c);
 * SHIM_FAST_COUNT also while the statistics count, so that the fast paths
 * count too (entry.h).  With lockdep's checks on (and the statistics
 * off) SHIM_FAST_LOCKDEP alone: the blocking lock's and the unlock's
 * inline paths run and tell lockdep (lockdep_took(), lockdep_unlocking()),
 * the trylock's do not (a trylock goes through lockdep's hooks).  0: off
 * (lockdep's checks and the statistics both on).  SHIM_FAST_PROFILE
 * instead of SHIM_FAST_ON beside SHIM_FAST_COUNT while the profile is on:
 * the trylocks take the general path, which puts what they take on the
 * held-lock stack (SHIM_HELD(), entry.h; contention.h); the unlocks'
 * inline paths look at that stack whenever they count. */
#define SHIM_FAST_ON      1u
#define SHIM_FAST_COUNT   2u
#define SHIM_FAST_LOCKDEP 4u
#define SHIM_FAST_PROFILE 8u
extern uint8_t shim_mutex_fast;
/* The same for process-private rwlocks on the qrwlock or TP (rwlock.c). */
extern uint8_t shim_rwlock_fast;
/* Process-private rwlocks take the read bias (QLOCK_RWLOCK_BIAS=1; off
 * by default; rwlock.c). */
extern uint8_t shim_rwlock_bias;

/* ---- statistics switches ------------------------------------------------- */

/* QLOCK_STATS (or the profile) is on: the lock entry points also count
 * per lock (contention.h). */
extern bool shim_stats_on;
/* QLOCK_VERBOSE: the reports add the internal counters. */
extern bool shim_verbose;

/* ---- the calling thread ------------------------------------------------- */

/* pthread_self(), cached per thread (a call into libc otherwise; the
 * rwlock's write paths ask it on every operation).  A fork child's thread
 * keeps its pthread_self(), so the cache stays right there. */
extern __thread uint64_t shim_self_cache __attribute__((tls_model("initial-exec")));

static inline uint64_t self_id(void)
{
	uint64_t s = shim_self_cache;

	if (qa_unlikely(s == 0))
		s = shim_self_cache = (uint64_t)pthread_self();
	return s;
}

/* The cached pthread_self(), or 0 before this thread's first self_id():
 * for fast paths that leave such a thread to their general path (which
 * caches it) rather than make a call, so that they need no stack frame. */
static inline uint64_t self_id_cached(void)
{
	return shim_self_cache;
}

#endif /* QLOCK_SHIM_STATE_H */
