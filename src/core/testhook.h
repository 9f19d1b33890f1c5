/* SPDX-License-Identifier: MIT */
/*
 * Test-only hook (builds with QLOCK_TEST_HOOKS; nothing in the library or
 * its users' builds).  Every unlock calls qc_test_released(lock) at the
 * point from which another thread may take the lock, destroy it and free
 * its memory: after it, an unlock may only make a FUTEX_WAKE on the
 * lock's address.  A lifetime test installs a hook that stalls the
 * unlocker there while the next owner unmaps the lock
 * (tests/lifetime/test_lifetime.c).
 */
#ifndef QLOCK_CORE_TESTHOOK_H
#define QLOCK_CORE_TESTHOOK_H

#ifdef QLOCK_TEST_HOOKS
#include "core/atomic.h"

typedef void (*qc_test_hook_fn)(const void *lock);
extern qc_test_hook_fn qc_test_released_hook;

static inline void qc_test_released(const void *lock)
{
	qc_test_hook_fn h = qa_read_acquire(&qc_test_released_hook);

	if (h)
		h(lock);
}
#else
static inline void qc_test_released(const void *lock)
{
	(void)lock;
}
#endif

#endif /* QLOCK_CORE_TESTHOOK_H */
