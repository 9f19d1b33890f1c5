/* SPDX-License-Identifier: MIT */
/*
 * Registry entries for the baseline locks: glibc's pthread locks and the
 * in-tree baselines of src/baseline (benchmark and test only).
 */
#define _GNU_SOURCE
#include "lockreg.h"

#include <errno.h>
#include <pthread.h>

#include "baseline/baseline.h"

/*
 * ThreadSanitizer (gcc 12's libtsan) intercepts pthread_mutex_timedlock but
 * not the clock-taking variants used here, so it would miss those
 * acquisitions and report the following unlock, and the critical sections
 * it protects, as errors.  Tell it about a successful one.
 */
#if defined(__SANITIZE_THREAD__)
#define REG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define REG_TSAN 1
#endif
#endif

#ifdef REG_TSAN
#include <sanitizer/tsan_interface.h>
static int tsan_note_lock(void *l, int err, unsigned flags)
{
	if (err == 0) {
		__tsan_mutex_pre_lock(l, flags);
		__tsan_mutex_post_lock(l, flags, 0);
	}
	return err;
}
#define TSAN_WRITE_LOCK 0
#define TSAN_READ_LOCK __tsan_mutex_read_lock
#else
#define tsan_note_lock(l, err, flags) (err)
#endif

/* ---- pthread_mutex (normal and adaptive) ---------------------------------- */

static int mutex_init_type(void *l, int type)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	err = pthread_mutex_init(l, &a);
	pthread_mutexattr_destroy(&a);
	return err;
}

static int pmutex_init(void *l) { return mutex_init_type(l, PTHREAD_MUTEX_NORMAL); }
static int pmutex_adaptive_init(void *l) { return mutex_init_type(l, PTHREAD_MUTEX_ADAPTIVE_NP); }
static void pmutex_destroy(void *l) { pthread_mutex_destroy(l); }
static void pmutex_lock(void *l) { pthread_mutex_lock(l); }
static void pmutex_unlock(void *l) { pthread_mutex_unlock(l); }
static bool pmutex_trylock(void *l) { return pthread_mutex_trylock(l) == 0; }
static int pmutex_timedlock(void *l, const struct timespec *abs)
{
	return tsan_note_lock(l, pthread_mutex_clocklock(l, CLOCK_MONOTONIC, abs),
			      TSAN_WRITE_LOCK);
}

/* ---- pthread_rwlock (default and writer-preferring) ------------------------ */

static int rwlock_init_kind(void *l, int kind)
{
	pthread_rwlockattr_t a;
	int err;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, kind);
	err = pthread_rwlock_init(l, &a);
	pthread_rwlockattr_destroy(&a);
	return err;
}

static int prw_init(void *l) { return rwlock_init_kind(l, PTHREAD_RWLOCK_DEFAULT_NP); }
static int prw_wpref_init(void *l)
{
	return rwlock_init_kind(l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
}
static void prw_destroy(void *l) { pthread_rwlock_destroy(l); }
static void prw_wrlock(void *l) { pthread_rwlock_wrlock(l); }
static void prw_unlock(void *l) { pthread_rwlock_unlock(l); }
static bool prw_trywrlock(void *l) { return pthread_rwlock_trywrlock(l) == 0; }
static int prw_timedwrlock(void *l, const struct timespec *abs)
{
	return tsan_note_lock(l, pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, abs),
			      TSAN_WRITE_LOCK);
}
static void prw_rdlock(void *l) { pthread_rwlock_rdlock(l); }
static bool prw_tryrdlock(void *l) { return pthread_rwlock_tryrdlock(l) == 0; }
static int prw_timedrdlock(void *l, const struct timespec *abs)
{
	return tsan_note_lock(l, pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, abs),
			      TSAN_READ_LOCK);
}

/* ---- pthread_spinlock -------------------------------------------------------- */

static int pspin_init(void *l) { return pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE); }
static void pspin_destroy(void *l) { pthread_spin_destroy(l); }
static void pspin_lock(void *l) { pthread_spin_lock(l); }
static void pspin_unlock(void *l) { pthread_spin_unlock(l); }
static bool pspin_trylock(void *l) { return pthread_spin_trylock(l) == 0; }

/* ---- in-tree baselines --------------------------------------------------------- */

static int ticket_init_v(void *l) { ticket_init(l); return 0; }
static void ticket_lock_v(void *l) { ticket_lock(l); }
static void ticket_unlock_v(void *l) { ticket_unlock(l); }
static bool ticket_trylock_v(void *l) { return ticket_trylock(l); }
static int ticket_timedlock_v(void *l, const struct timespec *abs) { return ticket_timedlock(l, abs); }

static int ttas_init_v(void *l) { ttas_init(l); return 0; }
static void ttas_lock_v(void *l) { ttas_lock(l); }
static void ttas_unlock_v(void *l) { ttas_unlock(l); }
static bool ttas_trylock_v(void *l) { return ttas_trylock(l); }
static int ttas_timedlock_v(void *l, const struct timespec *abs) { return ttas_timedlock(l, abs); }

static int wwm_init(void *l) { ww_mutex_init(l); return 0; }
static void wwm_lock(void *l) { ww_mutex_lock(l); }
static void wwm_unlock(void *l) { ww_mutex_unlock(l); }
static bool wwm_trylock(void *l) { return ww_mutex_trylock(l); }
static int wwm_timedlock(void *l, const struct timespec *abs) { return ww_mutex_timedlock(l, abs); }

static int wwrw_rpref_init(void *l) { ww_rwlock_init(l, false); return 0; }
static int wwrw_wpref_init(void *l) { ww_rwlock_init(l, true); return 0; }
static void wwrw_wrlock(void *l) { ww_rwlock_wrlock(l); }
static void wwrw_wrunlock(void *l) { ww_rwlock_wrunlock(l); }
static bool wwrw_trywrlock(void *l) { return ww_rwlock_trywrlock(l); }
static int wwrw_timedwrlock(void *l, const struct timespec *abs) { return ww_rwlock_timedwrlock(l, abs); }
static void wwrw_rdlock(void *l) { ww_rwlock_rdlock(l); }
static void wwrw_rdunlock(void *l) { ww_rwlock_rdunlock(l); }
static bool wwrw_tryrdlock(void *l) { return ww_rwlock_tryrdlock(l); }
static int wwrw_timedrdlock(void *l, const struct timespec *abs) { return ww_rwlock_timedrdlock(l, abs); }

#define PMUTEX_OPS                                                          \
	.kind = LR_MUTEX, .size = sizeof(pthread_mutex_t),                  \
	.destroy = pmutex_destroy, .lock = pmutex_lock,                     \
	.unlock = pmutex_unlock, .trylock = pmutex_trylock,                 \
	.timedlock = pmutex_timedlock

#define PRWLOCK_OPS                                                         \
	.kind = LR_RWLOCK, .size = sizeof(pthread_rwlock_t),                \
	.destroy = prw_destroy, .lock = prw_wrlock, .unlock = prw_unlock,   \
	.trylock = prw_trywrlock, .timedlock = prw_timedwrlock,             \
	.rdlock = prw_rdlock, .rdunlock = prw_unlock,                       \
	.tryrdlock = prw_tryrdlock, .timedrdlock = prw_timedrdlock

#define WWRW_OPS                                                            \
	.kind = LR_RWLOCK, .size = sizeof(struct ww_rwlock),                \
	.stats_class = "ww-rwlock",                                         \
	.lock = wwrw_wrlock, .unlock = wwrw_wrunlock,                       \
	.trylock = wwrw_trywrlock, .timedlock = wwrw_timedwrlock,           \
	.rdlock = wwrw_rdlock, .rdunlock = wwrw_rdunlock,                   \
	.tryrdlock = wwrw_tryrdlock, .timedrdlock = wwrw_timedrdlock

const struct lr_lock lr_baseline[] = {
	{ .name = "pthread-mutex",
	  .desc = "glibc pthread_mutex_t, PTHREAD_MUTEX_NORMAL",
	  .init = pmutex_init, PMUTEX_OPS },
	{ .name = "pthread-mutex-adaptive",
	  .desc = "glibc pthread_mutex_t, PTHREAD_MUTEX_ADAPTIVE_NP (spins briefly before sleeping)",
	  .init = pmutex_adaptive_init, PMUTEX_OPS },
	{ .name = "pthread-rwlock",
	  .desc = "glibc pthread_rwlock_t, default (reader-preferring)",
	  .flags = LR_MAY_STARVE_WRITERS,
	  .init = prw_init, PRWLOCK_OPS },
	/* glibc hands the lock from writer to waiting writer while readers
	 * wait, so a steady stream of writers starves readers. */
	{ .name = "pthread-rwlock-wpref",
	  .desc = "glibc pthread_rwlock_t, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP",
	  .flags = LR_MAY_STARVE_READERS,
	  .init = prw_wpref_init, PRWLOCK_OPS },
	{ .name = "pthread-spinlock",
	  .desc = "glibc pthread_spinlock_t (test-and-set spinner)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY,
	  .size = sizeof(pthread_spinlock_t),
	  .init = pspin_init, .destroy = pspin_destroy, .lock = pspin_lock,
	  .unlock = pspin_unlock, .trylock = pspin_trylock },
	{ .name = "ticket",
	  .desc = "ticket spinlock (FIFO spinner; timed lock polls trylock)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY,
	  .size = sizeof(struct ticket_lock), .stats_class = "ticket",
	  .init = ticket_init_v, .lock = ticket_lock_v,
	  .unlock = ticket_unlock_v, .trylock = ticket_trylock_v,
	  .timedlock = ticket_timedlock_v },
	{ .name = "ttas",
	  .desc = "test-and-test-and-set spinlock (unfair spinner)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY,
	  .size = sizeof(struct ttas_lock), .stats_class = "ttas",
	  .init = ttas_init_v, .lock = ttas_lock_v,
	  .unlock = ttas_unlock_v, .trylock = ttas_trylock_v,
	  .timedlock = ttas_timedlock_v },
	{ .name = "ww-mutex",
	  .desc = "seed 004 WW wait-wake futex mutex (0 free/1 locked/2 waiters)",
	  .kind = LR_MUTEX, .size = sizeof(struct ww_mutex),
	  .stats_class = "ww-mutex",
	  .init = wwm_init, .lock = wwm_lock, .unlock = wwm_unlock,
	  .trylock = wwm_trylock, .timedlock = wwm_timedlock },
	{ .name = "ww-rwlock-rpref",
	  .desc = "WW event-count futex rwlock, reader-preferring (perf bench futex default)",
	  .flags = LR_MAY_STARVE_WRITERS,
	  .init = wwrw_rpref_init, WWRW_OPS },
	{ .name = "ww-rwlock-wpref",
	  .desc = "WW event-count futex rwlock, writer-preferring (perf bench futex -W)",
	  .flags = LR_MAY_STARVE_READERS,
	  .init = wwrw_wpref_init, WWRW_OPS },
	{ .name = NULL },
};
