/* SPDX-License-Identifier: MIT */
/*
 * qlock rwsem: the Linux kernel's rw_semaphore for user space.
 *
 * A sleeping reader-writer lock: a count word that the fast paths change
 * with one atomic instruction, a FIFO queue of waiters that sleep on their
 * own futex word, writers that spin for a while on a running writer (queued
 * behind an optimistic spin queue) before they sleep, readers that may
 * steal the lock ahead of queued waiters, and a hand-off that gives the
 * lock to a waiter once it has waited longer than QLOCK_HANDOFF_NS
 * (default 4 ms).  When the first waiter is a reader, an unlock wakes up to
 * 256 readers from the whole queue (the kernel's rwsem since 2019).
 * See docs/rwsem.md.
 *
 * Not recursive: a thread that holds the lock in any mode must not take it
 * again.  Readers and writers may be different threads from the ones that
 * unlock (like the kernel's rwsem, the lock has no owner requirement on
 * unlock).
 *
 * Misuse detected (reported through qlock_set_misuse_handler(), default:
 * message and abort; if the handler returns, the lock is left unchanged):
 * qlock_up_read() of a lock with no reader counted (free or write-locked),
 * qlock_up_write() and qlock_downgrade_write() of a lock no writer holds.
 */
#ifndef QLOCK_RWSEM_H
#define QLOCK_RWSEM_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "qlock/qlock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qlock_rwsem {
	uint32_t count;     /* writer-locked, waiters, hand-off, readers */
	uint32_t wait_lock; /* internal lock of the wait queue (0/1/2) */
	uintptr_t owner;    /* writer's thread tag, or reader-owned flags */
	void *wait_list;    /* first waiter (nodes on the waiters' stacks) */
	uint32_t osq;       /* optimistic spin queue of the writers */
	uint32_t pad;
} qlock_rwsem_t;

/* All-zero is unlocked: static zero-initialisation works as well. */
#define QLOCK_RWSEM_INIT { 0, 0, 0, 0, 0, 0 }

QLOCK_API void qlock_rwsem_init(qlock_rwsem_t *sem);

/* Most readers that hold the lock at once.  One more waits in
 * qlock_down_read()/qlock_down_read_timed() until a reader leaves (so a
 * thread that nests this many read locks waits for itself), and fails in
 * the trylocks; the pthread drop-in answers EAGAIN. */
#define QLOCK_RWSEM_MAX_READERS ((1u << 22) - 1)

/* Shared (read) side. */
QLOCK_API void qlock_down_read(qlock_rwsem_t *sem);
/* true when taken; false while a writer holds it, waiters are queued, a
 * hand-off is pending, or QLOCK_RWSEM_MAX_READERS hold it. */
QLOCK_API bool qlock_down_read_trylock(qlock_rwsem_t *sem);
/* As qlock_down_read_trylock(), but also past queued waiters and a
 * pending hand-off (not past a writer that holds the lock): for a thread
 * that already holds a read lock and must not wait behind a writer that
 * waits for it (the pthread drop-in's recursive readers).  The waiting
 * writer then waits for this reader too. */
QLOCK_API bool qlock_down_read_trylock_unfair(qlock_rwsem_t *sem);
/* As qlock_down_read_trylock_unfair(), but only while readers hold the
 * lock (it may count one about to back out): a reader that joins them
 * past queued writers, as the pthread drop-in's readers do after their
 * bounded deferral. */
QLOCK_API bool qlock_down_read_trylock_join(qlock_rwsem_t *sem);
/* Readers holding the lock (a snapshot; may count a reader that is about
 * to back out). */
QLOCK_API uint32_t qlock_rwsem_readers(const qlock_rwsem_t *sem);
/*
 * Wait at most until the absolute deadline `abs` on clock `clk`
 * (CLOCK_MONOTONIC or CLOCK_REALTIME).  0: taken; ETIMEDOUT: the deadline
 * passed (the lock is not held, everything else unaffected); EINVAL: a
 * malformed deadline or another clock (checked before anything else).
 * abs == NULL: no deadline (waits as qlock_down_read()), as in every
 * qlock timed call.
 */
QLOCK_API int qlock_down_read_timed(qlock_rwsem_t *sem,
				    const struct timespec *abs, int clk);
QLOCK_API void qlock_up_read(qlock_rwsem_t *sem);

/* Exclusive (write) side. */
QLOCK_API void qlock_down_write(qlock_rwsem_t *sem);
QLOCK_API bool qlock_down_write_trylock(qlock_rwsem_t *sem);
QLOCK_API int qlock_down_write_timed(qlock_rwsem_t *sem,
				     const struct timespec *abs, int clk);
QLOCK_API void qlock_up_write(qlock_rwsem_t *sem);

/*
 * Turn a held write lock into a read lock without letting a writer in
 * between; readers queued at the front are woken to share it.
 */
QLOCK_API void qlock_downgrade_write(qlock_rwsem_t *sem);

/* Is the lock held in any mode, or has it waiters (a racy hint)? */
QLOCK_API bool qlock_rwsem_is_locked(qlock_rwsem_t *sem);
QLOCK_API bool qlock_rwsem_is_contended(qlock_rwsem_t *sem);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_RWSEM_H */
