/* SPDX-License-Identifier: MIT */
/*
 * Stand-in locks for developing lockbench before the baseline family
 * lands (only built with -DLOCKBENCH_DEV_LOCKS=ON; see bench/locks.c).
 * They reuse baseline names so tests and presets run unchanged; the real
 * registry entries win as soon as they exist.
 */
#include <pthread.h>

#include "core/atomic.h"
#include "lockreg.h"

static int dm_init(void *l) { return pthread_mutex_init(l, NULL); }
static void dm_destroy(void *l) { pthread_mutex_destroy(l); }
static void dm_lock(void *l) { pthread_mutex_lock(l); }
static void dm_unlock(void *l) { pthread_mutex_unlock(l); }

static int drw_init(void *l) { return pthread_rwlock_init(l, NULL); }
static void drw_destroy(void *l) { pthread_rwlock_destroy(l); }
static void drw_lock(void *l) { pthread_rwlock_wrlock(l); }
static void drw_unlock(void *l) { pthread_rwlock_unlock(l); }
static void drw_rdlock(void *l) { pthread_rwlock_rdlock(l); }

static void dt_lock(void *l)
{
	uint32_t *w = l;

	for (;;) {
		while (qa_read(w))
			qa_cpu_relax();
		if (!qa_xchg_acquire(w, 1u))
			return;
	}
}
static void dt_unlock(void *l) { qa_write_release((uint32_t *)l, 0u); }

/* A deliberately broken lock: lets the verification be demonstrated. */
static void db_lock(void *l) { (void)l; }
static void db_unlock(void *l) { (void)l; }

const struct lr_lock lb_dev_locks[] = {
	{ .name = "pthread-mutex", .desc = "dev stand-in: glibc pthread_mutex",
	  .kind = LR_MUTEX, .size = sizeof(pthread_mutex_t),
	  .init = dm_init, .destroy = dm_destroy,
	  .lock = dm_lock, .unlock = dm_unlock },
	{ .name = "pthread-rwlock", .desc = "dev stand-in: glibc pthread_rwlock",
	  .kind = LR_RWLOCK, .size = sizeof(pthread_rwlock_t),
	  .init = drw_init, .destroy = drw_destroy,
	  .lock = drw_lock, .unlock = drw_unlock,
	  .rdlock = drw_rdlock, .rdunlock = drw_unlock },
	{ .name = "ttas", .desc = "dev stand-in: test-and-test-and-set spinlock",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY, .size = sizeof(uint32_t),
	  .stats_class = "ttas", .lock = dt_lock, .unlock = dt_unlock },
	{ .name = "dev-broken", .desc = "dev only: no mutual exclusion at all",
	  .kind = LR_MUTEX, .size = sizeof(uint32_t),
	  .lock = db_lock, .unlock = db_unlock },
	{ .name = NULL },
};
