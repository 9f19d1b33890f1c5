/* SPDX-License-Identifier: MIT */
/*
 * The qrwlock's count word (the current kernel layout, the qlock_* API)
 * and its uncontended paths, inline: what the pthread drop-in
 * (shim/rwlock.c) runs without a call.  src/lock/qrwlock.c has the
 * transitions, the O1-O6 orderings and every slow path; the seed 000
 * benchmark variants are in qrwlock_variants.h.  Not installed.
 */
#ifndef QLOCK_LOCK_QRWLOCK_FAST_H
#define QLOCK_LOCK_QRWLOCK_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"
#include "core/testhook.h"
#include "qlock/qrwlock.h"

/* ---- the writer byte (bits 0-7 of the count word), every layout ------- */
#define QRW_W_LOCKED   0xffu /* a writer holds the lock */
#define QRW_W_SLOW     0x80u /* a writer holds it and the queue head sleeps */
#define QRW_W_HELD     0x80u /* bit set in both "held" values above */
#define QRW_W_SLEEP    0x02u /* the waiting writer sleeps until readers drain */
#define QRW_W_BYTE     0xffu

/* ---- current layout (qlock_* API, variant "qrwlock") ------------------- */
#define QRW_CUR_WAITING 0x100u     /* bit 8: a writer waits */
#define QRW_CUR_WMASK   0x1ffu     /* writer byte + waiting bit */
#define QRW_CUR_RSHIFT  9u
#define QRW_CUR_BIAS    (1u << QRW_CUR_RSHIFT)

/*
 * The reader count is full (every layout): bit 30 set, i.e. 2^21 readers
 * in the current layout (2^22 in 2015's).  A reader whose add makes it
 * full takes its count back out and fails or waits for room, so at most
 * QLOCK_RWLOCK_MAX_READERS hold the lock; the 2^21 (2^22) values above
 * are headroom for the transient counts of readers backing out, and bit
 * 31 stays the unlock's wrap detector below.
 */
#define QRW_R_FULL 0xc0000000u

/*
 * What a read unlock's sub_return gives when nothing was read-locked: the
 * reader count wrapped (bit 31: 2^22 real readers are out of reach), or a
 * writer holds the lock (while a reader's count is in, no writer can take
 * it, so a real reader never sees W_HELD here).
 */
#define QRW_READ_UNLOCK_BAD (0x80000000u | QRW_W_HELD)

/*
 * ---- the current layout's uncontended paths -------------------------------
 * Inline here so that the pthread drop-in (shim/rwlock.c) runs them without
 * a call; qlock_read_lock() and friends are built from the same functions
 * (src/lock/qrwlock.c has the transitions and the O1-O6 orderings).  Every
 * miss goes to qrwlock.c.
 */
void qrw_cur_read_back_out(qlock_rwlock_t *lock);
void qrw_cur_read_unlock_slow(qlock_rwlock_t *lock, uint32_t cnts);

/* Read lock: R += 1, taken unless a writer holds or waits or the count is
 * full; else the count is taken back out (which may wake a writer) and
 * false returned. */
/* The reader's add alone: false when a writer holds or waits for the
 * lock, or the count is full, and then the caller owes
 * qrw_cur_read_back_out() (a caller that must call nothing on its inline
 * path backs out on its slow path). */
static inline bool qrw_cur_read_lock_add(qlock_rwlock_t *lock)
{
	uint32_t cnts = qa_add_return_acquire(&lock->cnts, QRW_CUR_BIAS); /* O1 */

	return qa_likely(!(cnts & (QRW_CUR_WMASK | QRW_R_FULL)));
}

static inline bool qrw_cur_read_lock_fast(qlock_rwlock_t *lock)
{
	if (qrw_cur_read_lock_add(lock))
		return true;
	qrw_cur_read_back_out(lock);
	return false;
}

/* Read unlock: R -= 1; misuse and the last reader waking a sleeping
 * writer go out of line. */
static inline void qrw_cur_read_unlock(qlock_rwlock_t *lock)
{
	uint32_t cnts = qa_sub_return_release(&lock->cnts, QRW_CUR_BIAS); /* O2 */

	if (qa_unlikely((cnts & QRW_READ_UNLOCK_BAD) ||
			cnts == (QRW_CUR_WAITING | QRW_W_SLEEP))) {
		qrw_cur_read_unlock_slow(lock, cnts);
		return;
	}
	qc_test_released(lock);
}

/* Write lock on a free word: 0 -> LOCKED (O2). */
static inline bool qrw_cur_write_lock_fast(qlock_rwlock_t *lock)
{
	uint32_t cnts = 0;

	return qa_try_cmpxchg_acquire(&lock->cnts, &cnts, QRW_W_LOCKED);
}

/* Write unlock: the write-mode byte LOCKED -> 0 (O1/O2/O3 release).
 * Returns the byte it found: LOCKED when released, else (SLOW: a waiter
 * sleeps; or misuse) nothing changed and qlock_write_unlock() does the
 * rest. */
static inline uint8_t qrw_cur_write_unlock_fast(qlock_rwlock_t *lock)
{
#ifndef QLOCK_MUTATE_QRWLOCK
	uint8_t w = qa_u8_cmpxchg_release(&lock->cnts, 0, QRW_W_LOCKED, 0);
#else /* model-check mutation (tests/model): must be caught */
	uint8_t w = qa_u8_cmpxchg_relaxed(&lock->cnts, 0, QRW_W_LOCKED, 0);
#endif

	if (qa_likely(w == QRW_W_LOCKED))
		qc_test_released(lock);
	return w;
}

/* The write unlock, done here: true; false (nothing changed) leaves it to
 * qlock_write_unlock() (a sleeping waiter, or misuse).  A macro: the
 * drop-in's unlock path is the same instructions as with the byte
 * compared in place. */
#define QRW_CUR_WRITE_UNLOCK_DONE(lock) \
	(qrw_cur_write_unlock_fast(lock) == QRW_W_LOCKED)

#endif /* QLOCK_LOCK_QRWLOCK_FAST_H */
