/* SPDX-License-Identifier: MIT */
/*
 * qlock_tp_mutex_t: the throughput-optimised (TP) futex mutex of Waiman
 * Long's 2016-2017 TP-futex series, with the kernel side done in user
 * space over FUTEX_WAIT/FUTEX_WAKE.
 *
 * The futex word holds the owner's thread id (gettid(), low 29 bits) and
 * a WAITERS bit (bit 31) that sends the unlock to its slow path, as the
 * series' word does.  Lock and unlock are one cmpxchg each when
 * uncontended.  Contended, the waiters are serialised: only the top
 * waiter spins on the owner (bounded) and then sleeps on the word; other
 * arrivals get one steal attempt and queue.  Lock stealing is allowed
 * until the top waiter has waited QLOCK_HANDOFF_NS (default 4 ms), then
 * the unlocker hands the lock straight to it.  See docs/tp-locks.md.
 *
 *	static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
 *	qlock_tp_mutex_lock(&m);  ...  qlock_tp_mutex_unlock(&m);
 *
 * 16 bytes, zero-initialised = unlocked, no destructor.  Not recursive;
 * only the owner unlocks.  Held across fork() by the forking thread, it
 * is the child's thread's to unlock (the library remembers that thread's
 * tid before the fork); held by another thread of the parent, it stays
 * held in the child, and waiters of the parent's other threads at the
 * instant of fork are not repaired (the drop-in does repair them).
 *
 * Misuse detected (reported through qlock_set_misuse_handler(), default:
 * message and abort): qlock_tp_mutex_unlock() of a free mutex (if the
 * handler returns: nothing changes) and by a thread that is not the owner
 * (if the handler returns: the mutex is released, as glibc's NORMAL mutex
 * does).  Relocking a mutex the caller holds is not detected (it
 * deadlocks).
 */
#ifndef QLOCK_TP_MUTEX_H
#define QLOCK_TP_MUTEX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "qlock/qlock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qlock_tp_mutex {
	uint32_t val;     /* futex word: owner tid | WAITERS */
	uint32_t serial;  /* serialises the waiters (who is top waiter) */
	uint32_t handoff; /* tid of the top waiter asking for hand-off, or 0 */
	uint32_t nval;    /* serial lock hand-off request (internal) */
} qlock_tp_mutex_t;

#define QLOCK_TP_MUTEX_INIT { 0, 0, 0, 0 }

/* The futex word's bits (the series' FUTEX_WAITERS / FUTEX_TID_MASK;
 * SLEEPER: the top waiter sleeps on the word, its unlock must wake it;
 * SERIAL: the owner still holds the waiters' serial lock, which its
 * unlock releases). */
#define QLOCK_TP_WAITERS  0x80000000u
#define QLOCK_TP_SLEEPER  0x40000000u
#define QLOCK_TP_SERIAL   0x20000000u
#define QLOCK_TP_TID_MASK 0x1fffffffu

static inline void qlock_tp_mutex_init(qlock_tp_mutex_t *m)
{
	m->val = m->serial = m->handoff = m->nval = 0;
}

QLOCK_API void qlock_tp_mutex_lock(qlock_tp_mutex_t *m);
/* true when taken; fails while held or being handed to a waiter. */
QLOCK_API bool qlock_tp_mutex_trylock(qlock_tp_mutex_t *m);
/* 0 when taken; ETIMEDOUT once the absolute deadline `abs` on `clk`
 * (CLOCK_MONOTONIC or CLOCK_REALTIME) passed; EINVAL for a malformed
 * deadline or another clock (checked before anything else).  abs == NULL:
 * no deadline (as qlock_tp_mutex_lock()), in every qlock timed call. */
QLOCK_API int qlock_tp_mutex_timedlock(qlock_tp_mutex_t *m,
				       const struct timespec *abs,
				       int clk);
QLOCK_API void qlock_tp_mutex_unlock(qlock_tp_mutex_t *m);
/* Thread id of the owner, 0 when unlocked (a snapshot). */
QLOCK_API uint32_t qlock_tp_mutex_owner(const qlock_tp_mutex_t *m);
/* gettid() of the calling thread, as the locks record it. */
QLOCK_API uint32_t qlock_tp_self_tid(void);
/*
 * The calling thread is about to leave the CPU by its own doing (yield,
 * sleep, block in a system call) while it may hold TP locks: waiters that
 * would spin on it sleep at once instead (begin), until it runs again
 * (end).  A hint, never needed for correctness; the pthread drop-in calls
 * it around sched_yield(), nanosleep(), clock_nanosleep(), usleep() and
 * sleep().  Pairs do not nest.
 */
QLOCK_API void qlock_tp_off_cpu_begin(void);
QLOCK_API void qlock_tp_off_cpu_end(void);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_TP_MUTEX_H */
