/* SPDX-License-Identifier: MIT */
/*
 * qlock_tp_rwlock_t: the TP-futex series' reader-writer lock ("rwmutex"),
 * kernel side done in user space.
 *
 * Futex word (the series' shared-mode encoding):
 *	bit 31     WAITERS: the top waiter sleeps or wants a hand-off
 *	bit 30     SLEEPER: the top waiter sleeps on the word (the series'
 *	           OWNER_DIED, unused here)
 *	bit 29     SHARED: reader-owned, bits 0-23 count the readers
 *	bit 28     SHARED_UNLOCK: the last reader is releasing the lock
 *	bits 0-28  writer's thread id when SHARED is clear
 *
 * Readers take the lock with one cmpxchg (0 -> SHARED+1, or +1 while
 * SHARED and no WAITERS/SHARED_UNLOCK); writers with cmpxchg 0 -> tid.
 * Writers are preferred (a waiting writer stops new readers), and the
 * hand-off to the top waiter bounds every wait.  Contending readers form
 * a group behind the first one.  See docs/tp-locks.md.
 *
 * 32 bytes, zero-initialised = unlocked, no destructor.  Not recursive
 * (a read lock taken again while a writer waits can deadlock).
 *
 * Misuse detected (reported through qlock_set_misuse_handler(), default:
 * message and abort; if the handler returns, the lock is left as it was):
 * qlock_tp_rwlock_rdunlock() of a lock no reader holds (free, or
 * write-locked), qlock_tp_rwlock_wrunlock() by a thread that does not
 * hold the write lock (free, read-locked, or another thread's).  Readers
 * are not recorded: a read unlock by another thread than the reader's is
 * not detected.
 */
#ifndef QLOCK_TP_RWLOCK_H
#define QLOCK_TP_RWLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "qlock/qlock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qlock_tp_rwlock {
	uint32_t val;     /* futex word, see above */
	uint32_t serial;  /* serialises the waiters (who is top waiter) */
	uint32_t handoff; /* hand-off request of the top waiter, or 0 */
	uint32_t nval;    /* serial lock hand-off request (internal) */
	uint32_t leader;  /* reader group leader's tid (| asleep bit), or 0 */
	uint32_t rosq;    /* the reader group's optimistic spin queue */
	uint32_t pad[2];
} qlock_tp_rwlock_t;

#define QLOCK_TP_RWLOCK_INIT { 0, 0, 0, 0, 0, 0, { 0, 0 } }

#define QLOCK_TP_RW_WAITERS       0x80000000u
#define QLOCK_TP_RW_SLEEPER       0x40000000u
#define QLOCK_TP_RW_SHARED        0x20000000u
#define QLOCK_TP_RW_SHARED_UNLOCK 0x10000000u
#define QLOCK_TP_RW_COUNT_MASK    0x00ffffffu
#define QLOCK_TP_RW_TID_MASK      0x1fffffffu

static inline void qlock_tp_rwlock_init(qlock_tp_rwlock_t *rw)
{
	/* Field by field: a compound literal is not C++. */
	rw->val = rw->serial = rw->handoff = rw->nval = 0;
	rw->leader = rw->rosq = 0;
	rw->pad[0] = rw->pad[1] = 0;
}

/* Most readers that hold the lock at once (the count's 24 bits).  One
 * more waits in rdlock/timedrdlock, as the top waiter, until the readers
 * are gone (so a thread that nests this many read locks waits for
 * itself), and fails in the trylocks; the pthread drop-in answers EAGAIN. */
#define QLOCK_TP_RWLOCK_MAX_READERS QLOCK_TP_RW_COUNT_MASK

QLOCK_API void qlock_tp_rwlock_rdlock(qlock_tp_rwlock_t *rw);
QLOCK_API bool qlock_tp_rwlock_tryrdlock(qlock_tp_rwlock_t *rw);
/* 0, ETIMEDOUT or EINVAL as qlock_tp_mutex_timedlock(); abs == NULL:
 * no deadline. */
QLOCK_API int qlock_tp_rwlock_timedrdlock(qlock_tp_rwlock_t *rw,
					  const struct timespec *abs,
					  int clk);
QLOCK_API void qlock_tp_rwlock_rdunlock(qlock_tp_rwlock_t *rw);

QLOCK_API void qlock_tp_rwlock_wrlock(qlock_tp_rwlock_t *rw);
QLOCK_API bool qlock_tp_rwlock_trywrlock(qlock_tp_rwlock_t *rw);
QLOCK_API int qlock_tp_rwlock_timedwrlock(qlock_tp_rwlock_t *rw,
					  const struct timespec *abs,
					  int clk);
QLOCK_API void qlock_tp_rwlock_wrunlock(qlock_tp_rwlock_t *rw);

/* Writer's thread id, 0 when unlocked or reader-owned (a snapshot). */
QLOCK_API uint32_t qlock_tp_rwlock_writer(const qlock_tp_rwlock_t *rw);
/* Number of readers holding it (a snapshot). */
QLOCK_API uint32_t qlock_tp_rwlock_readers(const qlock_tp_rwlock_t *rw);

/* Like tryrdlock, but also while writers wait (not while one holds it):
 * for a reader that must go before every waiting writer, such as POSIX's
 * SCHED_FIFO/SCHED_RR reader that outranks them.  Never spurious. */
QLOCK_API bool qlock_tp_rwlock_tryrdlock_unfair(qlock_tp_rwlock_t *rw);
/* Like tryrdlock_unfair, but only while readers hold the lock: a reader
 * that joins them past waiting writers (which wait for them anyway), as
 * the pthread drop-in's readers do after their bounded deferral. */
QLOCK_API bool qlock_tp_rwlock_tryrdlock_join(qlock_tp_rwlock_t *rw);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_TP_RWLOCK_H */
