/* SPDX-License-Identifier: MIT */
/*
 * The TP locks' uncontended paths, inline: what the pthread drop-in
 * (shim/mutex.c, shim/rwlock.c) runs without a call, and what it asks of
 * a word (is it held, is it free, the reset after fork, who writes).  The thread id they
 * write into the lock word is tp_tid.h's.  Every slow path, the spin
 * policy and the tunables stay in tp_internal.h and the lock files
 * (tp_mutex.c, tp_rwlock.c), which build their own fast paths from these
 * same functions; the serial lock is tp_serial.h.  Not installed.
 */
#ifndef QLOCK_LOCK_TP_FAST_H
#define QLOCK_LOCK_TP_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"
#include "core/testhook.h"
#include "lock/tp_tid.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

/* ---- the TP mutex's uncontended paths ---------------------------------------
 * One cmpxchg each.  Inline here so that the pthread drop-in's entry points
 * (shim/mutex.c) run them without a call; every slow path stays in
 * tp_mutex.c.
 */
static inline bool tp_mutex_lock_fast(qlock_tp_mutex_t *m, uint32_t tid)
{
	/* Acquire: pairs with the release of the previous owner's unlock. */
	return qa_cmpxchg_acquire(&m->val, 0u, tid) == 0;
}

/* Releases a mutex whose word is exactly `tid` (held by us, no WAITERS,
 * SLEEPER or SERIAL) and returns `tid`; else changes nothing and returns
 * the word, for the slow unlock. */
static inline uint32_t tp_mutex_unlock_fast(qlock_tp_mutex_t *m, uint32_t tid)
{
	/* Release: pairs with the next owner's acquire. */
	uint32_t v = qa_cmpxchg_release(&m->val, tid, 0u);

	if (qa_likely(v == tid))
		qc_test_released(m);
	return v;
}

/*
 * The same two paths for a process that has only this thread (the pthread
 * drop-in asks glibc's __libc_single_threaded, as glibc's own mutex does):
 * nobody else can read or write the word, so a plain load and store do
 * what the cmpxchg does.  A thread created later is ordered after these
 * stores by pthread_create, and finds the word as a cmpxchg would have
 * left it; an unlock after that takes the atomic path above.
 */
static inline bool tp_mutex_lock_fast_single(qlock_tp_mutex_t *m, uint32_t tid)
{
	if (qa_read(&m->val) != 0)
		return false;
	qa_write(&m->val, tid);
	return true;
}

static inline bool tp_mutex_unlock_fast_single(qlock_tp_mutex_t *m,
					       uint32_t tid)
{
	if (qa_read(&m->val) != tid)
		return false;
	qa_write(&m->val, 0u);
	qc_test_released(m);
	return true;
}

/* A thread holds the mutex: an owner tid, or the bits only an owner sets
 * (SLEEPER, SERIAL); WAITERS alone is a hand-over in progress. */
static inline bool tp_mutex_is_held(qlock_tp_mutex_t *m)
{
	return (qa_read(&m->val) & ~QLOCK_TP_WAITERS) != 0;
}

/* Nobody holds, takes over or waits for it: the word is 0.  Acquire: a
 * free word is read after the last owner's release, so its memory may
 * go. */
static inline bool tp_mutex_is_free(qlock_tp_mutex_t *m)
{
	return qa_read_acquire(&m->val) == 0;
}

/* In a fork child, whose only thread is the forking one: the waiters the
 * mutex records are the parent's other threads, gone.  The owner stays;
 * WAITERS, SLEEPER and SERIAL go (the serial lock, the hand-over request
 * and the serial lock's own hand-over word are the waiters'). */
static inline void tp_mutex_fork_reset(qlock_tp_mutex_t *m)
{
	uint32_t v = qa_read(&m->val), n;

	do
		n = v & ~(QLOCK_TP_WAITERS | QLOCK_TP_SLEEPER | QLOCK_TP_SERIAL);
	while (!qa_try_cmpxchg(&m->val, &v, n));
	qa_write(&m->serial, 0);
	qa_write(&m->handoff, 0);
	qa_write(&m->nval, 0);
}

/* ---- the TP rwlock's uncontended paths (word layout: tp_rwlock.c) ------ */

/* The word, and the two questions an unlock asks of it: held by readers
 * (SHARED; non-zero), and the writer it names (0: none; meaningless when
 * shared).  Macros: the drop-in's unlock path is the same instructions as
 * with the word's bits written out. */
#define TP_RW_WORD(rw)      qa_read(&(rw)->val)
#define TP_RW_SHARED(v)     ((v) & QLOCK_TP_RW_SHARED)
#define TP_RW_WRITER(v)     ((v) & QLOCK_TP_RW_TID_MASK)

/* The calling thread holds the write lock: the word names it (its tid,
 * or in a fork child the tid the forking thread had before the fork). */
static inline bool tp_rwlock_write_held_by_self(qlock_tp_rwlock_t *rw)
{
	uint32_t v = TP_RW_WORD(rw), w = TP_RW_WRITER(v);

	return !TP_RW_SHARED(v) && w != 0 &&
	       (w == tp_self_tid() || tp_tid_forked_self(w));
}

/* Can a new reader join word v?  (No writer, no WAITERS, SLEEPER or
 * SHARED_UNLOCK.) */
static inline bool tp_rw_reader_may_join(uint32_t v)
{
	return v == 0 ||
	       ((v & (QLOCK_TP_RW_SHARED | QLOCK_TP_RW_SHARED_UNLOCK |
		      QLOCK_TP_RW_WAITERS | QLOCK_TP_RW_SLEEPER)) ==
			QLOCK_TP_RW_SHARED &&
		(v & QLOCK_TP_RW_COUNT_MASK) < QLOCK_TP_RWLOCK_MAX_READERS);
}

/*
 * The read paths guess the word instead of reading it first: a load then
 * a cmpxchg moves the cache line twice when another CPU's reader has it
 * (shared, then exclusive), the cmpxchg alone once, and a wrong guess
 * costs nothing more than the load would have (the failed cmpxchg returns
 * the word).  Two readers on two CPUs (lockbench map, 2 threads, 99 %
 * reads): see docs/performance.md.
 */

/* Read lock while no writer owns or waits: 0 -> SH+1, SH+n -> SH+n+1;
 * retried while only the reader count changes under us. */
static inline bool tp_rwlock_rdlock_fast(qlock_tp_rwlock_t *rw)
{
	uint32_t v = 0; /* guess: free */

	do {
		if (!tp_rw_reader_may_join(v))
			return false;
		/* Acquire: pairs with the release of the last unlock. */
	} while (!qa_try_cmpxchg_acquire(&rw->val, &v,
					 v ? v + 1 : QLOCK_TP_RW_SHARED + 1));
	return true;
}

/* A read unlock while nobody waits (no WAITERS, SLEEPER, SHARED_UNLOCK):
 * SH+n -> SH+n-1, the last reader SH+1 -> 0.  False (nothing changed) when
 * the word is anything else: the caller takes qlock_tp_rwlock_rdunlock(). */
static inline bool tp_rwlock_rdunlock_fast(qlock_tp_rwlock_t *rw)
{
	uint32_t v = QLOCK_TP_RW_SHARED + 1; /* guess: the only reader */

	do {
		if ((v & ~QLOCK_TP_RW_COUNT_MASK) != QLOCK_TP_RW_SHARED ||
		    (v & QLOCK_TP_RW_COUNT_MASK) == 0)
			return false;
		/* Release: our critical section before the count drop;
		 * pairs with the acquire of the next writer. */
	} while (!qa_try_cmpxchg_release(&rw->val, &v,
					 v == QLOCK_TP_RW_SHARED + 1 ? 0u
								     : v - 1));
	qc_test_released(rw);
	return true;
}

/* Writer: 0 -> tid. */
static inline bool tp_rwlock_wrlock_fast(qlock_tp_rwlock_t *rw, uint32_t tid)
{
	/* Acquire: pairs with the release of the last unlock. */
	return qa_cmpxchg_acquire(&rw->val, 0u, tid) == 0;
}

/* Writer unlock of a word that is exactly `tid`: tid -> 0, returns tid;
 * else changes nothing and returns the word, for the slow unlock. */
static inline uint32_t tp_rwlock_wrunlock_fast(qlock_tp_rwlock_t *rw,
					       uint32_t tid)
{
	/* Release: pairs with the next owner's acquire. */
	uint32_t v = qa_cmpxchg_release(&rw->val, tid, 0u);

	if (qa_likely(v == tid))
		qc_test_released(rw);
	return v;
}

#endif /* QLOCK_LOCK_TP_FAST_H */
