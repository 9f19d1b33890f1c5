/* SPDX-License-Identifier: MIT */
/*
 * qlock_rwlock_t: the Linux kernel's queued reader-writer lock (qrwlock)
 * in user space.
 *
 * 8 bytes, zero-initialised: a 32-bit count word (writer byte, writer
 * waiting bit, reader count) and a qlock spinlock (qlock/qspinlock.h)
 * that queues the slow paths of readers and writers in arrival order.
 *
 *	static qlock_rwlock_t lock = QLOCK_RWLOCK_INIT;
 *	qlock_read_lock(&lock);  ...  qlock_read_unlock(&lock);
 *	qlock_write_lock(&lock); ...  qlock_write_unlock(&lock);
 *
 * Fair: a waiting writer stops new readers, and queued readers and
 * writers are served in queue order, so neither side starves the other.
 * Waiters spin for a bounded time and then sleep on a futex (see
 * qlock_tune_set()), so throughput does not collapse when threads
 * outnumber CPUs.  Not recursive: a thread that holds a read lock and
 * takes it again can deadlock behind a waiting writer (as in the kernel
 * outside interrupt context).  See docs/qrwlock.md.
 *
 * Misuse detected (reported through qlock_set_misuse_handler(), default:
 * message and abort; if the handler returns, the lock is left as it was):
 * qlock_read_unlock() of a lock no reader holds (free, or write-locked),
 * qlock_write_unlock() of a lock no writer holds (free, or read-locked).
 * The word records no owner: an unlock from another thread than the one
 * that locked is not detected (and releases the lock).
 */
#ifndef QLOCK_QRWLOCK_H
#define QLOCK_QRWLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "qlock/qlock.h"
#include "qlock/qspinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qlock_rwlock {
	uint32_t cnts;              /* count word; only the library touches it */
	qlock_spinlock_t wait_lock; /* queue of the slow paths */
} qlock_rwlock_t;

#define QLOCK_RWLOCK_INIT { 0, QLOCK_SPINLOCK_INIT }

static inline void qlock_rwlock_init(qlock_rwlock_t *lock)
{
	lock->cnts = 0;
	qlock_spin_init(&lock->wait_lock);
}

/* Most readers that hold the lock at once.  One more waits in
 * qlock_read_lock() until a reader leaves (so a thread that nests this
 * many read locks waits for itself), and fails in the trylocks; the
 * pthread drop-in answers EAGAIN. */
#define QLOCK_RWLOCK_MAX_READERS ((1u << 21) - 1)

QLOCK_API void qlock_read_lock(qlock_rwlock_t *lock);
/* true when taken; fails while a writer holds or waits, when
 * QLOCK_RWLOCK_MAX_READERS hold it (and, rarely, when a writer takes the
 * lock between its check and its increment). */
QLOCK_API bool qlock_read_trylock(qlock_rwlock_t *lock);
/* As qlock_read_trylock(), but also past a writer that waits (not one
 * that holds the lock): the kernel's reader in interrupt context, and
 * POSIX's realtime reader that outranks every waiting writer.  The waiting
 * writer then waits for this reader too; it is not woken early. */
QLOCK_API bool qlock_read_trylock_unfair(qlock_rwlock_t *lock);
/* As qlock_read_trylock_unfair(), but only while other readers hold the
 * lock: a reader that joins them past a waiting writer (which waits for
 * them anyway) cannot be one that reader waits for; the pthread drop-in's
 * readers after their bounded deferral. */
QLOCK_API bool qlock_read_trylock_join(qlock_rwlock_t *lock);
QLOCK_API void qlock_read_unlock(qlock_rwlock_t *lock);

QLOCK_API void qlock_write_lock(qlock_rwlock_t *lock);
/* As qlock_write_lock(), but a writer that has kept new readers out for
 * defer_ns nanoseconds while readers still hold the lock lets the threads
 * queued behind it pass and queues again: no reader waits longer than
 * defer_ns for each writer ahead of it, so readers that wait for one
 * another across threads cannot deadlock behind it (glibc's default
 * rwlock kind), and writers still get the lock whenever readers drain
 * within defer_ns. */
QLOCK_API void qlock_write_lock_bounded(qlock_rwlock_t *lock, uint64_t defer_ns);
/* true when taken; fails while anybody holds the lock or a writer waits. */
QLOCK_API bool qlock_write_trylock(qlock_rwlock_t *lock);
QLOCK_API void qlock_write_unlock(qlock_rwlock_t *lock);

/* Readers holding the lock (a snapshot; may count a reader that is about
 * to find the lock taken and back out). */
QLOCK_API uint32_t qlock_rwlock_readers(const qlock_rwlock_t *lock);

/* true while some thread waits in the queue (a hint, as the kernel's
 * rwlock_is_contended()). */
QLOCK_API bool qlock_rwlock_is_contended(qlock_rwlock_t *lock);

/*
 * ---- The read-biased variant ---------------------------------------------
 *
 * qlock_rwlock_biased_t is a qlock_rwlock_t with read bias (BRAVO, Dice
 * and Kogan, USENIX ATC 2019), for read-mostly locks.  While the lock is
 * biased a reader does not write it: it publishes the lock's address in
 * its own slot of a process-wide table of visible readers (one cmpxchg on
 * a cache line no other reader of this lock writes, and a fence), so
 * readers scale with the threads instead of moving the count word's cache
 * line between CPUs on every read.
 *
 * Why a variant and not a flag: qlock_rwlock_t's 8 bytes have no free
 * bit.  The count word uses all 32 (writer byte, WAITING, 21 bits of
 * reader count, one bit of headroom for readers backing out and one that
 * catches a wrapped count); the queue's qspinlock word is rewritten whole
 * bytes and halfwords at a time.  The smallest change inside 8 bytes
 * would take two bits from the reader count (at most 2^19 - 1 readers)
 * and mask them out of every state comparison of the lock; the variant
 * adds one 32-bit word instead and leaves qlock_rwlock_t and
 * QLOCK_RWLOCK_INIT as they are.  All-zero is an unlocked biased lock
 * (the bias turns on after its first reads).
 *
 * What it costs: a writer that finds the bias on turns it off and waits
 * until the table holds no reader of this lock (a scan of 32 KiB, about
 * 2 us, plus the longest biased reader's critical section); the bias then
 * stays off for 64 times that revocation's time and comes back with a
 * reader that takes the count word afterwards, so write-heavy phases pay
 * for at most one revocation in 65 time units.  A trylock writer that
 * finds biased readers fails.  Use it for locks read far more often than
 * written; keep qlock_rwlock_t for locks written often.  A biased read
 * must be released by the thread that took it; a thread may hold 8 biased
 * read locks at once (more take the count word), and a nested read of a
 * lock the thread holds biased nests on its slot.  After fork() the
 * child's table holds only the forking thread's readers.  See
 * docs/qrwlock.md.
 */
typedef struct qlock_rwlock_biased {
	qlock_rwlock_t rw;
	uint32_t bias; /* bias word; only the library touches it */
} qlock_rwlock_biased_t;

#define QLOCK_RWLOCK_BIASED_INIT { QLOCK_RWLOCK_INIT, 0 }

QLOCK_API void qlock_biased_read_lock(qlock_rwlock_biased_t *lock);
/* true when taken: biased, or as qlock_read_trylock(). */
QLOCK_API bool qlock_biased_read_trylock(qlock_rwlock_biased_t *lock);
QLOCK_API void qlock_biased_read_unlock(qlock_rwlock_biased_t *lock);
QLOCK_API void qlock_biased_write_lock(qlock_rwlock_biased_t *lock);
/* true when taken; also fails while biased readers hold the lock. */
QLOCK_API bool qlock_biased_write_trylock(qlock_rwlock_biased_t *lock);
QLOCK_API void qlock_biased_write_unlock(qlock_rwlock_biased_t *lock);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_QRWLOCK_H */
