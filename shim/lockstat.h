/* SPDX-License-Identifier: MIT */
/*
 * Per-lock contention table of the pthread drop-in (QLOCK_STATS, qlock-run
 * --stats): for each pthread lock a program takes, its acquisitions, the
 * acquisitions that had to wait, and the total and longest wait, printed
 * at exit with the most contended locks first (in the spirit of mutrace).
 *
 * Off, it costs the entry points one predictable branch.  On, an
 * uncontended acquisition adds one table look-up and one counter update;
 * only a contended one reads the clock (twice).
 */
#ifndef QLOCK_SHIM_LOCKSTAT_H
#define QLOCK_SHIM_LOCKSTAT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/futex.h"

enum lockstat_kind {
	LOCKSTAT_MUTEX,
	LOCKSTAT_RWLOCK_READ,
	LOCKSTAT_RWLOCK_WRITE,
	LOCKSTAT_SPIN,
	LOCKSTAT_NR_KINDS
};

/* Count one acquisition of `lock`; `waited` it blocked for `wait_ns`. */
void lockstat_record(const volatile void *lock, enum lockstat_kind kind, bool waited,
		     uint64_t wait_ns);

/* Append the per-kind totals and the `top` most contended locks to the
 * QLOCK_STATS report (shim_stats_format()). */
struct shim_report;
void lockstat_report(struct shim_report *out, int top);

/*
 * Acquire through `try_call`, and when that reports EBUSY through
 * `block_call`, timing the wait; record the acquisition if one succeeded.
 * Evaluates to the error code of the call that decided.
 */
#define LOCKSTAT_ACQUIRE(lock, kind, try_call, block_call) __extension__({ \
	int err_ = (try_call);                                            \
	bool waited_ = err_ == EBUSY;                                     \
	uint64_t t0_ = 0;                                                 \
	if (waited_) {                                                    \
		t0_ = qc_now_ns();                                        \
		err_ = (block_call);                                      \
	}                                                                 \
	if (err_ == 0)                                                    \
		lockstat_record((lock), (kind), waited_,                  \
				waited_ ? qc_now_ns() - t0_ : 0);         \
	err_;                                                             \
})

#endif /* QLOCK_SHIM_LOCKSTAT_H */
