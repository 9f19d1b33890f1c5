/* SPDX-License-Identifier: MIT */
/*
 * The qspinlock's word as the pthread drop-in (shim/) needs it, inline:
 * the uncontended lock, is it held, a trylock that waits out a hand-over,
 * the reset after fork, and the values the word never holds.  The layout
 * is qspinlock_variants.h's (the (tail,pending,locked) states:
 * qspinlock.c); every slow path stays in qspinlock.c.  Not installed.
 */
#ifndef QLOCK_LOCK_QSPINLOCK_FAST_H
#define QLOCK_LOCK_QSPINLOCK_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"
#include "lock/qspinlock_variants.h"
#include "qlock/qspinlock.h"

/* The uncontended lock, (0,0,0) -> (0,0,1), qlock_spin_lock()'s first
 * step, with *v == 0: true when taken, else false with the word it found
 * in *v (the caller then takes qlock_spin_lock()).  Acquire: pairs with
 * the release of the previous owner's unlock.  A macro: the drop-in's
 * pthread_spin_lock() is the same instructions as with the cmpxchg
 * written in place. */
#define QS_LOCK_FAST(l, v) qa_try_cmpxchg_acquire(&(l)->val, (v), QS_LOCKED_VAL)

/* A thread holds it: the locked byte is set, (*,*,1) or (*,*,3); the
 * pending owner of (*,1,0) has not taken it yet. */
static inline bool qs_is_held(qlock_spinlock_t *l)
{
	return (qa_read(&l->val) & QS_LOCKED_MASK) != 0;
}

/* Nobody holds, takes over or waits for it: (0,0,0).  Acquire: a free
 * word is read after the last owner's release, so its memory may go. */
static inline bool qs_is_free(qlock_spinlock_t *l)
{
	return qa_read_acquire(&l->val) == 0;
}

/*
 * A trylock that fails only while the lock is held: qlock_spin_trylock()
 * also fails in (*,1,0), when the owner has gone and a pending waiter (or
 * a spinning queue head) is about to take the lock with a plain store
 * nobody may race.  The lock is free at that instant (POSIX allows
 * pthread_mutex_trylock() and pthread_spin_trylock() EBUSY only while it
 * is locked): wait out the hand-over (a few instructions of a running
 * thread), then answer for the lock as it is.
 */
static inline bool qs_trylock_unless_held(qlock_spinlock_t *l)
{
	for (;;) {
		if (qlock_spin_trylock(l))
			return true;
		if (qs_is_held(l))
			return false;
		qa_cpu_relax();
	}
}

/* In a fork child, whose only thread is the forking one: the waiters the
 * word records (tail, pending, a sleeping head's SLOW) are the parent's
 * other threads, gone.  Held stays held, (0,0,1); else (0,0,0). */
static inline void qs_fork_reset(qlock_spinlock_t *l)
{
	uint32_t v = qa_read(&l->val), n;

	do
		n = (v & QS_LOCKED_MASK) ? QS_LOCKED_VAL : 0;
	while (!qa_try_cmpxchg(&l->val, &v, n));
}

/* Values the word never holds: a locked byte of 0x50..0x53 with every
 * other bit clear (in both pending layouts).  A user of the word may keep
 * another lock in it under these values and tell the two apart (the
 * drop-in's process-shared pthread spinlock). */
#define QS_FOREIGN 0x50u
/* The word itself, for such a lock. */
static inline uint32_t *qs_word(qlock_spinlock_t *l)
{
	return &l->val;
}
static inline bool qs_is_foreign(uint32_t v)
{
	return (v & ~3u) == QS_FOREIGN;
}
/* The locked byte holds 0..3 (3 = SLOW, 2 on its way back to 0). */
_Static_assert(QS_SLOW_VAL < QS_FOREIGN && QS_FOREIGN + 3 <= QS_LOCKED_MASK,
	       "QS_FOREIGN: values the locked byte never holds");

#endif /* QLOCK_LOCK_QSPINLOCK_FAST_H */
