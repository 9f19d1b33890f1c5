/* SPDX-License-Identifier: MIT */
/*
 * Internal: the qrwlock's word layouts and the seed 000 variants, built
 * from the one source in src/lock/qrwlock.c (see the comment at its top
 * for layouts, transitions and ordering).  Benchmark and tests only; the
 * public API is qlock/qrwlock.h (the current kernel layout).
 */
#ifndef QLOCK_LOCK_QRWLOCK_VARIANTS_H
#define QLOCK_LOCK_QRWLOCK_VARIANTS_H

#include <stdbool.h>
#include <stdint.h>

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

/* ---- 2014/2015 layout (variants "qrwlock-2015-*") ---------------------- */
#define QRW_2015_WAITING 0x01u     /* writer byte value: a writer waits */
#define QRW_2015_WMASK   0xffu     /* the writer byte ("wmode") */
#define QRW_2015_RSHIFT  8u
#define QRW_2015_BIAS    (1u << QRW_2015_RSHIFT)

/*
 * The seed 000 variants: same layout, same reader paths, they differ only
 * in how the queue-head writer sets WAITING.
 *   qrw_2015_loop_*  whole-word cmpxchg(cnts, cnts | WAITING) loop, broken
 *                    by every reader arriving meanwhile ("before")
 *   qrw_2015_byte_*  byte cmpxchg(wmode, 0, WAITING) ("after")
 */
#define QRW_DECLARE_VARIANT(p)                                        \
	void p##_read_lock(qlock_rwlock_t *lock);                     \
	bool p##_read_trylock(qlock_rwlock_t *lock);                  \
	void p##_read_unlock(qlock_rwlock_t *lock);                   \
	void p##_write_lock(qlock_rwlock_t *lock);                    \
	bool p##_write_trylock(qlock_rwlock_t *lock);                 \
	void p##_write_unlock(qlock_rwlock_t *lock);

QRW_DECLARE_VARIANT(qrw_2015_loop)
QRW_DECLARE_VARIANT(qrw_2015_byte)

#endif /* QLOCK_LOCK_QRWLOCK_VARIANTS_H */
