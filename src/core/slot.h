/* SPDX-License-Identifier: MIT */
/*
 * Thread slots: small integers naming threads in lock words (a queued
 * lock's tail stores slot + 1) and indexing per-thread queue nodes kept in
 * static arrays, which outlive any thread.
 *
 * A thread gets a slot on first use and gives it back at thread exit,
 * when it is reused.  At most qc_slot_limit() slots exist at once
 * (QLOCK_MAX_THREADS, 16383 by default: the qspinlock tail has 14 bits
 * for slot + 1).  When none is free qc_slot_self() returns -1 and the
 * caller must take its slot-less path; it retries on its next call.
 */
#ifndef QLOCK_CORE_SLOT_H
#define QLOCK_CORE_SLOT_H

#include "atomic.h"

#ifndef QLOCK_MAX_THREADS
#define QLOCK_MAX_THREADS 16383
#endif

/* slot + 1; 0 = none yet. */
extern __thread int qc_slot_plus1 __attribute__((tls_model("initial-exec")));

int qc_slot_acquire(void);

static inline int qc_slot_self(void)
{
	int s = qc_slot_plus1;

	if (qa_likely(s != 0))
		return s - 1;
	return qc_slot_acquire();
}

/* Current limit (<= QLOCK_MAX_THREADS). */
int qc_slot_limit(void);

/*
 * Lower (or restore up to QLOCK_MAX_THREADS) the number of slots handed
 * out from now on; slots already held stay valid.  For tests and the
 * QLOCK_MAX_THREADS environment variable.  Returns the limit in force.
 */
int qc_slot_set_limit(int n);

/* Slots currently held (tests). */
int qc_slots_in_use(void);

#endif /* QLOCK_CORE_SLOT_H */
