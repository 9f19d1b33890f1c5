/* SPDX-License-Identifier: MIT */
/*
 * Per-lock contention table of the pthread drop-in (QLOCK_STATS, qlock-run
 * --stats; QLOCK_PROFILE, qlock-run --profile): for each pthread lock a
 * program takes, its acquisitions, the acquisitions that had to wait, and
 * the total and longest wait, printed at exit with the locks that cost the
 * most waiting first (in the spirit of mutrace), each named by the call
 * site that first locked it.
 *
 * Off, it costs the entry points one predictable branch.  On, an
 * uncontended acquisition adds one counter update in the thread's own
 * counters (profile.h, struct pf_count; the lock's row when the thread
 * has no record, or the lock does not keep a counter slot); only a
 * contended one reads the clock (ticks.h): before its wait, and after it
 * when the wait slept in the kernel (or could have, where glibc's lock
 * is behind the call), is the thread's first for a lock with no timed
 * wait on record, finds no counter slot, or is one of the random 1 in 8
 * sampled (profile.h, PF_SAMPLE); it counts the acquisition as contended
 * and the wait's time, a sampled one's 8 times, in the same counter.  A
 * wait that only spun is short, and the clock read after it would
 * lengthen the hold of a lock that changes hands fast: wait totals and
 * percentiles are exact for the waits that slept and estimated for the
 * rest, the counts are exact.  Nothing is written on a line another
 * thread writes while the lock is held, save for the locks without a
 * counter slot: the counters are added to the rows later (thread exit,
 * report).
 *
 * The profile (shim_profile_on, profile.c) adds, still only on the
 * contended path: a wait histogram (p50, p99), the call sites that
 * waited (their counts scaled to the contended acquisitions at a
 * report), and the hold time of the sampled acquisitions that waited
 * and of each lock's first timed one (one more clock read, at the
 * unlock), per lock, in the thread's own
 * share of the lock's details (profile.h, struct pf_detail), added up the
 * same way; and on every blocking lock call a push on the thread's
 * held-lock stack (a few thread-local stores; its unlock pops it), which
 * tells the deadlock watchdog (deadlock.c) who holds what.  Condition
 * variables: waits, timeouts, signals and broadcasts.
 *
 * What is recorded where: the call site is the return address of the
 * exported pthread call (symbolize.h, SHIM_CALLER()); lock calls with a
 * deadline and trylocks are not counted, and their locks are not on the
 * held-lock stack; a condition variable's wait ends the mutex's hold and
 * starts a new one when it returns (its re-lock is not counted, and that
 * hold is not timed).
 */
#ifndef QLOCK_SHIM_LOCKSTAT_H
#define QLOCK_SHIM_LOCKSTAT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "ticks.h"

enum lockstat_kind {
	LOCKSTAT_MUTEX,
	LOCKSTAT_RWLOCK_READ,
	LOCKSTAT_RWLOCK_WRITE,
	LOCKSTAT_SPIN,
	LOCKSTAT_COND,
	LOCKSTAT_NR_KINDS
};

/* Profile mode (QLOCK_PROFILE): details, held-lock stacks, condvars. */
extern bool shim_profile_on;

/* The hooks of an acquisition (lockstat_acquired(), lockstat_waited())
 * and of an unlock (lockstat_release(), before the lock is released) are
 * inline in profile.h. */
/* Profile: this thread is about to block for `lock`, and is done. */
void lockstat_wait_begin(const volatile void *lock, enum lockstat_kind kind, const void *pc);
void lockstat_wait_end(void);

/* Condition variables (profile): a wait on `cond` with `mutex` from the
 * call at pc, which returned err; a signal or broadcast. */
uint64_t lockstat_cond_wait_begin(const volatile void *cond, const volatile void *mutex,
				  const void *pc);
void lockstat_cond_wait_end(const volatile void *cond, const volatile void *mutex,
			    const void *pc, uint64_t t0, int err);
void lockstat_cond_wake(const volatile void *cond, bool broadcast, const void *pc);

/* Append the per-kind totals and the `top` locks with the most waiting
 * to the QLOCK_STATS report (shim_stats_format()). */
struct shim_report;
void lockstat_report(struct shim_report *out, int top);

/* A condition variable wait `call` on cond with mutex, counted. */
#define LOCKSTAT_COND_WAIT(cond, mutex, pc, call) __extension__({          \
	uint64_t t0_ = lockstat_cond_wait_begin((cond), (mutex), (pc));   \
	int err_ = (call);                                                \
	lockstat_cond_wait_end((cond), (mutex), (pc), t0_, err_);         \
	err_;                                                             \
})

#endif /* QLOCK_SHIM_LOCKSTAT_H */
