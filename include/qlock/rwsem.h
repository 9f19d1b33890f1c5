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
	uint32_t bias;      /* read bias: 0 = none (see below) */
} qlock_rwsem_t;

/* All-zero is unlocked: static zero-initialisation works as well. */
#define QLOCK_RWSEM_INIT { 0, 0, 0, 0, 0, 0 }

QLOCK_API void qlock_rwsem_init(qlock_rwsem_t *sem);

/*
 * Read bias (BRAVO, Dice and Kogan, USENIX ATC 2019), for read-mostly
 * locks: a lock initialised with qlock_rwsem_init_biased() (or
 * QLOCK_RWSEM_INIT_BIASED) lets a reader in without writing the lock: it
 * publishes the lock's address in its own slot of a process-wide table of
 * visible readers (one cmpxchg on a cache line no other reader of this
 * lock writes, and a fence).  Readers of a busy lock then scale with the
 * threads instead of fighting over the count word's cache line.
 *
 * What it costs: a writer that finds the bias on turns it off and waits
 * until the table holds no reader of this lock (a scan of 32 KiB, about
 * 2 us, plus the longest biased reader's critical section); the bias then
 * stays off for 64 times that revocation's time and comes back with the
 * first reader that takes the count word afterwards, so write-heavy
 * phases pay for at most one revocation in 65 time units.  A trylock
 * writer that finds biased readers fails; a timed one waits for them
 * until its deadline.  Use it for locks read far more often than written
 * (a writer at most every few hundred microseconds); leave it off for
 * locks written often, for locks taken by very many threads at once in
 * write mode, and for readers that release their read lock from another
 * thread than the one that took it (a biased read must be released by its
 * own thread).  A thread may hold up to 8 biased read locks at once (more
 * take the count word), and a thread's nested read of a lock it holds
 * biased nests on its slot.  The rwsem is still not recursive: without
 * the bias, a nested read may wait behind a writer.  After fork() the
 * child's table holds only the forking thread's readers.
 * qlock_rwsem_readers() counts biased readers too (it scans the table);
 * qlock_rwsem_is_locked() does not see them.  See docs/rwsem.md.
 */
#define QLOCK_RWSEM_BIAS_ON      1u
#define QLOCK_RWSEM_BIAS_CAPABLE 4u
#define QLOCK_RWSEM_INIT_BIASED \
	{ 0, 0, 0, 0, 0, QLOCK_RWSEM_BIAS_CAPABLE | QLOCK_RWSEM_BIAS_ON }
QLOCK_API void qlock_rwsem_init_biased(qlock_rwsem_t *sem);

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
