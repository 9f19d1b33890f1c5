/* SPDX-License-Identifier: MIT */
/*
 * Test-only hooks (builds with QLOCK_TEST_HOOKS; nothing in the library or
 * its users' builds): the library calls qc_test_point() at a few points
 * where a test needs to stall a thread or interrupt it deterministically
 * (tests/hooks/).
 *
 * QC_TP_RELEASED: every unlock, at the point from which another thread may
 *   take the lock, destroy it and free its memory; after it an unlock may
 *   only make a FUTEX_WAKE on the lock's address.
 * QC_TP_OSQ_NODE / QC_TP_OSQ_UNLOCK: qc_osq_lock() has initialised its
 *   node (before queueing), qc_osq_unlock() is about to pass the queue on;
 *   a signal handler that spins on another OSQ there must not get the
 *   same node.
 */
#ifndef QLOCK_CORE_TESTHOOK_H
#define QLOCK_CORE_TESTHOOK_H

enum qc_test_point { QC_TP_RELEASED, QC_TP_OSQ_NODE, QC_TP_OSQ_UNLOCK };

#ifdef QLOCK_TEST_HOOKS
#include "core/atomic.h"

typedef void (*qc_test_hook_fn)(enum qc_test_point p, const void *obj);
extern qc_test_hook_fn qc_test_hook;

static inline void qc_test_point(enum qc_test_point p, const void *obj)
{
	qc_test_hook_fn h = qa_read_acquire(&qc_test_hook);

	if (h)
		h(p, obj);
}
#else
static inline void qc_test_point(enum qc_test_point p, const void *obj)
{
	(void)p;
	(void)obj;
}
#endif

static inline void qc_test_released(const void *lock)
{
	qc_test_point(QC_TP_RELEASED, lock);
}

#endif /* QLOCK_CORE_TESTHOOK_H */
