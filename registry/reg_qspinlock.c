/* SPDX-License-Identifier: MIT */
/*
 * Registry entries for the queued spinlock and its variants (all built
 * from the one slow path in src/lock/qspinlock.c).
 */
#include "lockreg.h"

#include "lock/qspinlock_variants.h"
#include "qlock/qspinlock.h"

static int qs_init(void *l) { qlock_spin_init(l); return 0; }
static void qs_lock(void *l) { qlock_spin_lock(l); }
static void qs_unlock(void *l) { qlock_spin_unlock(l); }
static bool qs_trylock(void *l) { return qlock_spin_trylock(l); }
static void qs_grab_lock(void *l) { qs_lock_cmpxchg_grab(l); }
static void qs_wait_lock(void *l) { qs_lock_cmpxchg_wait(l); }
static void qs_spin_lock(void *l) { qs_lock_spin_only(l); }
static void qs_spin_unlock(void *l) { qs_unlock_spin_only(l); }
static bool qs_spin_trylock(void *l) { return qs_trylock_spin_only(l); }

const struct lr_lock lr_qspinlock[] = {
	{ .name = "qspinlock",
	  .desc = "kernel queued spinlock + paravirt-style parking (qlock_spin_*)",
	  .kind = LR_MUTEX, .size = sizeof(qlock_spinlock_t),
	  .stats_class = "qspinlock", .init = qs_init,
	  .lock = qs_lock, .unlock = qs_unlock, .trylock = qs_trylock },
	{ .name = "qspinlock-cmpxchg-grab",
	  .desc = "qspinlock, queue head claims with a cmpxchg loop (seed 003 before)",
	  .kind = LR_MUTEX, .size = sizeof(qlock_spinlock_t),
	  .stats_class = "qspinlock", .init = qs_init,
	  .lock = qs_grab_lock, .unlock = qs_unlock, .trylock = qs_trylock },
	{ .name = "qspinlock-cmpxchg-wait",
	  .desc = "qspinlock, pending/head wait with cmpxchg, early next (seed 001 RFC)",
	  .kind = LR_MUTEX, .size = sizeof(qlock_spinlock_t),
	  .stats_class = "qspinlock", .init = qs_init,
	  .lock = qs_wait_lock, .unlock = qs_unlock, .trylock = qs_trylock },
	{ .name = "qspinlock-spin-only",
	  .desc = "native kernel qspinlock: never sleeps, no stealing",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY,
	  .size = sizeof(qlock_spinlock_t), .stats_class = "qspinlock",
	  .init = qs_init, .lock = qs_spin_lock, .unlock = qs_spin_unlock,
	  .trylock = qs_spin_trylock },
	{ .name = NULL },
};
