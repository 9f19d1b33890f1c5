/* SPDX-License-Identifier: MIT */
/*
 * Internal: the seed 000 variants of the qrwlock (the 2014/2015 layout and
 * its two ways of setting WAITING), built from the one source in
 * src/lock/qrwlock.c (see the comment at its top for layouts, transitions
 * and ordering).  Benchmark and tests only; the public API is
 * qlock/qrwlock.h, the current layout and its inline paths
 * qrwlock_fast.h.
 */
#ifndef QLOCK_LOCK_QRWLOCK_VARIANTS_H
#define QLOCK_LOCK_QRWLOCK_VARIANTS_H

#include <stdbool.h>

#include "lock/qrwlock_fast.h" /* the writer byte, the current layout */
#include "qlock/qrwlock.h"

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
