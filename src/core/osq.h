/* SPDX-License-Identifier: MIT */
/*
 * OSQ: the kernel's optimistic spin queue (kernel/locking/osq_lock.c), for
 * user space.  An MCS lock that a spinner can abandon: sleeping locks use it
 * so that only the thread at its head spins on the lock owner, and the other
 * would-be spinners spin on their own queue node instead of the lock word.
 *
 * The queue word holds slot + 1 of the last queued spinner (0 = empty);
 * nodes are per thread slot (src/core/slot.h), one per thread: a thread is
 * in at most one OSQ at a time.  A thread without a slot, or already queued
 * on an OSQ (a signal handler), gets `false` at once and must not spin.
 *
 * In user space no one can see whether the thread ahead is running, so a
 * queued spinner gives up (unqueues, returns false) when its deadline
 * passes; the caller then sleeps on its lock instead of spinning.
 */
#ifndef QLOCK_CORE_OSQ_H
#define QLOCK_CORE_OSQ_H

#include <stdbool.h>
#include <stdint.h>

struct qc_osq {
	uint32_t tail; /* slot + 1 of the last queued spinner, 0 = empty */
};

#define QC_OSQ_INIT { 0 }

/*
 * Queue up as a spinner.  true: this thread is at the head of the queue
 * (owns the OSQ) and must call qc_osq_unlock() when it stops spinning.
 * false: it gave up (CLOCK_MONOTONIC deadline_ns from qc_now_ns() passed,
 * no thread slot, or already queued on an OSQ) and holds nothing.
 */
bool qc_osq_lock(struct qc_osq *osq, uint64_t deadline_ns);

/* Pass the head of the queue to the next spinner, if any. */
void qc_osq_unlock(struct qc_osq *osq);

/* Is any thread queued (a hint: racy by nature)? */
bool qc_osq_is_locked(struct qc_osq *osq);

#endif /* QLOCK_CORE_OSQ_H */
