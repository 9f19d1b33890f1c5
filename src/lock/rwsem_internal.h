/* SPDX-License-Identifier: MIT */
/*
 * Internal to the rwsem: what its two halves share.  rwsem.c is the word
 * protocol (the count and owner words, the fast paths, reader stealing,
 * writers' optimistic spinning, the API); rwsem_wait.c is the wait queue
 * (the waiter list, wake-up batches, the hand-off, the queued halves of
 * the slow paths).  rwsem.c calls into rwsem_wait.c, never the reverse;
 * both use the names and the owner word's operations here.
 */
#ifndef QLOCK_LOCK_RWSEM_INTERNAL_H
#define QLOCK_LOCK_RWSEM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"
#include "lock/rwsem_variants.h"
#include "qlock/rwsem.h"

#define CLS QC_CLASS_rwsem

/* The count word's bits (rwsem.c describes them). */
#define WRITER_LOCKED   QRWSEM_WRITER_LOCKED
#define FLAG_WAITERS    QRWSEM_FLAG_WAITERS
#define FLAG_HANDOFF    QRWSEM_FLAG_HANDOFF
#define READER_SHIFT    QRWSEM_READER_SHIFT
#define READER_BIAS     QRWSEM_READER_BIAS
#define FLAG_READFAIL   QRWSEM_FLAG_READFAIL
#define READER_MASK     QRWSEM_READER_MASK
#define LOCK_MASK       QRWSEM_LOCK_MASK
#define READ_FAILED_MASK QRWSEM_READ_FAILED_MASK
#define READ_FULL       QRWSEM_READ_FULL

#define READER_OWNED    QRWSEM_READER_OWNED
#define NONSPINNABLE    QRWSEM_NONSPINNABLE
#define OWNER_FLAGS     QRWSEM_OWNER_FLAGS

#define MAX_READERS_WAKEUP QRWSEM_MAX_READERS_WAKEUP

/* Spins between clock reads. */
#define CLOCK_EVERY 16

enum owner_state {
	OWNER_NULL,
	OWNER_WRITER,
	OWNER_READER,
	OWNER_NONSPINNABLE,
};

/* ---- thread tag -------------------------------------------------------- */

/* The address of a thread-local, 4-byte aligned (defined in rwsem_wait.c). */
extern __thread uint32_t qrwsem_tag_var
	__attribute__((tls_model("initial-exec"), aligned(4)));

static inline uintptr_t self_tag(void)
{
	return (uintptr_t)&qrwsem_tag_var;
}

/* ---- owner word (hints, relaxed) ---------------------------------------- */

static inline void set_owner(qlock_rwsem_t *sem)
{
	qa_write(&sem->owner, self_tag());
}

static inline void clear_owner(qlock_rwsem_t *sem)
{
	qa_write(&sem->owner, 0);
}

/* Keeps NONSPINNABLE; skips the store (a shared line) when unchanged. */
static inline void set_reader_owned_tag(qlock_rwsem_t *sem, uintptr_t tag)
{
	uintptr_t o = qa_read(&sem->owner);
	uintptr_t n = tag | READER_OWNED | (o & NONSPINNABLE);

	if (o != n)
		qa_write(&sem->owner, n);
}

static inline void set_reader_owned(qlock_rwsem_t *sem)
{
	set_reader_owned_tag(sem, self_tag());
}

static inline void clear_nonspinnable(qlock_rwsem_t *sem)
{
	if (qa_unlikely(qa_read(&sem->owner) & NONSPINNABLE))
		qa_fetch_andnot_relaxed(&sem->owner, NONSPINNABLE);
}

static inline enum owner_state owner_state_of(uintptr_t o)
{
	if (o & NONSPINNABLE)
		return OWNER_NONSPINNABLE;
	if (o & READER_OWNED)
		return OWNER_READER;
	return o ? OWNER_WRITER : OWNER_NULL;
}

/* ---- spinning on a writer owner (optimistic spinning, hand-off) ------- */

/* Spin on a writer owner until it changes or holds too long. */
static inline enum owner_state spin_on_owner(qlock_rwsem_t *sem,
					      uint64_t budget_ns)
{
	uintptr_t owner = qa_read(&sem->owner);
	enum owner_state st = owner_state_of(owner);
	uint64_t until = 0;

	if (st != OWNER_WRITER)
		return st;
	for (unsigned n = 1;; n++) {
		uintptr_t cur = qa_read(&sem->owner);

		if (cur != owner)
			return owner_state_of(cur);
		if (n % CLOCK_EVERY == 0) {
			uint64_t now = qc_now_ns();

			if (!until)
				until = now + budget_ns;
			else if (now >= until)
				return OWNER_NONSPINNABLE;
		}
		qa_cpu_relax();
	}
}

/* ---- the wait queue (rwsem_wait.c) -------------------------------------- */

/* The queued half of down_read's slow path: the reader's fast-path bias is
 * still counted; it is taken back as the reader queues.  0 or ETIMEDOUT. */
int qrwsem_down_read_queued(qlock_rwsem_t *sem, const struct timespec *abs,
			    clockid_t clk, bool front);
/* The queued half of down_write's slow path (after optimistic spinning;
 * spin_ns: the owner-spin budget, 0 = off).  0 or ETIMEDOUT. */
int qrwsem_down_write_queued(qlock_rwsem_t *sem, const struct timespec *abs,
			     clockid_t clk, bool front, uint64_t spin_ns);
/* An unlock (subtract `bias`) with WAITERS set; false when the count shows
 * the lock was not held that way (nothing changed). */
bool qrwsem_unlock_with_waiters(qlock_rwsem_t *sem, uint32_t bias, bool front,
				enum qc_op op);
/* A reader's bias made the count full (READ_FULL): take it back out and
 * wait for room.  0, or ETIMEDOUT; the caller starts again. */
int qrwsem_down_read_wait_room(qlock_rwsem_t *sem, const struct timespec *abs,
			       clockid_t clk, bool front);
/* The caller holds a read lock (it stole it, or downgraded): wake the
 * queued readers to share it. */
void qrwsem_wake_read_owned(qlock_rwsem_t *sem, bool front, enum qc_op op);

#endif /* QLOCK_LOCK_RWSEM_INTERNAL_H */
