/* SPDX-License-Identifier: MIT */
/*
 * qlock_spinlock_t: the Linux kernel's queued spinlock (qspinlock) in user
 * space, with the paravirt qspinlock's answer to preemption: waiters spin
 * for a bounded time and then sleep on a futex, so throughput does not
 * collapse when threads outnumber cores.
 *
 * 4 bytes, zero-initialised, no per-call node argument:
 *
 *	static qlock_spinlock_t lock = QLOCK_SPINLOCK_INIT;
 *	qlock_spin_lock(&lock);  ...  qlock_spin_unlock(&lock);
 *
 * A thread that uses it gets a thread slot on first contention (see
 * qlock_max_threads()); signal handlers may take other qlock spinlocks
 * while their thread waits for one (up to 4 nesting levels; deeper
 * nesting and threads beyond the slot limit still get the lock through a
 * slower path).  Not recursive; unlock by the owner.  See docs/qspinlock.md.
 *
 * Misuse detected: qlock_spin_unlock() of a free lock (reported through
 * qlock_set_misuse_handler(), default: message and abort; if the handler
 * returns, the lock stays free).  The word records no owner, so an unlock
 * by another thread than the owner releases the lock.
 */
#ifndef QLOCK_QSPINLOCK_H
#define QLOCK_QSPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "qlock/qlock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qlock_spinlock {
	uint32_t val; /* the lock word; only the library touches it */
} qlock_spinlock_t;

#define QLOCK_SPINLOCK_INIT { 0 }

static inline void qlock_spin_init(qlock_spinlock_t *lock)
{
	lock->val = 0;
}

QLOCK_API void qlock_spin_lock(qlock_spinlock_t *lock);
/* true when taken; fails only while the lock is held or being handed to
 * a waiter, never spuriously. */
QLOCK_API bool qlock_spin_trylock(qlock_spinlock_t *lock);
QLOCK_API void qlock_spin_unlock(qlock_spinlock_t *lock);
/* true while held or while a waiter is taking it over (a hint only,
 * as the kernel's spin_is_locked()). */
QLOCK_API bool qlock_spin_is_locked(qlock_spinlock_t *lock);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_QSPINLOCK_H */
