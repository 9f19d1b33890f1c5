/* SPDX-License-Identifier: MIT */
/*
 * Internal: the qspinlock word layout and the benchmark variants built
 * from the same slow path (src/lock/qspinlock.c).  Not exported; the lock
 * registry (registry/reg_qspinlock.c) and the tests reach them here.
 */
#ifndef QLOCK_LOCK_QSPINLOCK_VARIANTS_H
#define QLOCK_LOCK_QSPINLOCK_VARIANTS_H

#include <stdbool.h>
#include <stdint.h>

#include "qlock/qspinlock.h"

/*
 * Pending layout: QLOCK_QSPINLOCK_PENDING_BITS 8 (default: pending is a
 * byte, the tail a halfword, so the tail exchange and the hand-over are
 * halfword operations) or 1 (pending is one bit, the tail is 23 bits wide
 * and updated with whole-word cmpxchg loops).  QLOCK_WORD_ATOMICS_ONLY
 * forces 1.
 */
#if defined(QLOCK_WORD_ATOMICS_ONLY)
#undef QLOCK_QSPINLOCK_PENDING_BITS
#define QLOCK_QSPINLOCK_PENDING_BITS 1
#elif !defined(QLOCK_QSPINLOCK_PENDING_BITS)
#define QLOCK_QSPINLOCK_PENDING_BITS 8
#endif
#if QLOCK_QSPINLOCK_PENDING_BITS != 8 && QLOCK_QSPINLOCK_PENDING_BITS != 1
#error "QLOCK_QSPINLOCK_PENDING_BITS must be 8 or 1"
#endif

#define QS_LOCKED_OFFSET   0
#define QS_LOCKED_BITS     8
#define QS_PENDING_OFFSET  8
#define QS_PENDING_BITS    QLOCK_QSPINLOCK_PENDING_BITS
#define QS_TAIL_IDX_OFFSET (QS_PENDING_OFFSET + QS_PENDING_BITS)
#define QS_TAIL_IDX_BITS   2
#define QS_TAIL_SLOT_OFFSET (QS_TAIL_IDX_OFFSET + QS_TAIL_IDX_BITS)
#define QS_TAIL_SLOT_BITS  (32 - QS_TAIL_SLOT_OFFSET)
#define QS_TAIL_OFFSET     QS_TAIL_IDX_OFFSET

#define QS_MASK(off, bits) ((((uint32_t)1 << (bits)) - 1) << (off))
#define QS_LOCKED_MASK     QS_MASK(QS_LOCKED_OFFSET, QS_LOCKED_BITS)
#define QS_PENDING_MASK    QS_MASK(QS_PENDING_OFFSET, QS_PENDING_BITS)
#define QS_TAIL_IDX_MASK   QS_MASK(QS_TAIL_IDX_OFFSET, QS_TAIL_IDX_BITS)
#define QS_TAIL_SLOT_MASK  (~(uint32_t)0 << QS_TAIL_SLOT_OFFSET)
#define QS_TAIL_MASK       (QS_TAIL_IDX_MASK | QS_TAIL_SLOT_MASK)
#define QS_LOCKED_PENDING_MASK (QS_LOCKED_MASK | QS_PENDING_MASK)

#define QS_LOCKED_VAL  ((uint32_t)1 << QS_LOCKED_OFFSET)
#define QS_PENDING_VAL ((uint32_t)1 << QS_PENDING_OFFSET)
/* Locked byte value meaning "held, and the queue head sleeps on the lock
 * word: the unlocker must wake it" (the paravirt _Q_SLOW_VAL). */
#define QS_SLOW_VAL    ((uint32_t)3 << QS_LOCKED_OFFSET)

/* Per-thread queue nodes: 4 nesting levels (thread, signal handlers). */
#define QS_MAX_NODES 4

/* Largest slot + 1 the tail can name. */
#define QS_TAIL_SLOT_MAX ((uint32_t)QS_TAIL_SLOT_MASK >> QS_TAIL_SLOT_OFFSET)

static inline uint32_t qs_encode_tail(int slot, int idx)
{
	return ((uint32_t)(slot + 1) << QS_TAIL_SLOT_OFFSET) |
	       ((uint32_t)idx << QS_TAIL_IDX_OFFSET);
}

static inline int qs_tail_slot(uint32_t tail)
{
	return (int)(tail >> QS_TAIL_SLOT_OFFSET) - 1;
}

static inline int qs_tail_idx(uint32_t tail)
{
	return (int)((tail & QS_TAIL_IDX_MASK) >> QS_TAIL_IDX_OFFSET);
}

/* ---- variants (benchmark and tests; same slow path, one parameter) ---- */

/* qspinlock-cmpxchg-grab: the queue head claims with a cmpxchg loop
 * (seed 003's "before").  Unlock and trylock: qlock_spin_*. */
void qs_lock_cmpxchg_grab(qlock_spinlock_t *lock);
/* qspinlock-cmpxchg-wait: the pending owner and the queue head wait with
 * cmpxchg instead of load-acquire spinning, and read `next` early
 * (seed 001's RFC).  Unlock and trylock: qlock_spin_*. */
void qs_lock_cmpxchg_wait(qlock_spinlock_t *lock);
/* qspinlock-spin-only: the kernel's native qspinlock: never sleeps, no
 * stealing, unlock is one release store. */
void qs_lock_spin_only(qlock_spinlock_t *lock);
bool qs_trylock_spin_only(qlock_spinlock_t *lock);
void qs_unlock_spin_only(qlock_spinlock_t *lock);

#endif /* QLOCK_LOCK_QSPINLOCK_VARIANTS_H */
