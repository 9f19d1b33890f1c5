/* SPDX-License-Identifier: MIT */
/*
 * The pthread shim's adapter layer: one small set of operations per lock
 * algorithm, so the pthread entry points (mutex.c, rwlock.c) do not care
 * which qlock lock sits inside the caller's pthread object.
 *
 * Mutex algorithms work on the first SHIM_MUTEX_BYTES of pthread_mutex_t,
 * rwlock algorithms on the first SHIM_RW_BYTES of pthread_rwlock_t (below);
 * every one takes all-zero storage as unlocked.
 *
 * Timed operations receive a deadline already checked for a valid clock
 * (CLOCK_REALTIME or CLOCK_MONOTONIC) and a valid tv_nsec; tv_sec may be
 * negative (= already passed).  They return 0 or ETIMEDOUT.  Algorithms
 * without a native timed path poll: trylock, back off, look at the clock.
 *
 * The shim sees the locks through their public headers (include/qlock) and,
 * for the uncontended paths its entry points inline and what it asks of a
 * lock word (is it held, is it free, a trylock that waits out a
 * hand-over, the reset after fork), the lock families' fast-path headers
 * (lock/qspinlock_fast.h, lock/tp_fast.h, lock/qrwlock_fast.h): no word
 * layout is known here.  Slow paths, spin policy and tunables stay
 * private to src/lock.
 */
#ifndef QLOCK_SHIM_ADAPT_H
#define QLOCK_SHIM_ADAPT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "lock/qspinlock_fast.h" /* the qspinlock's word, as the drop-in asks of it */
#include "qlock/qspinlock.h"
#include "lock/tp_fast.h" /* the TP locks' inline fast paths */
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"
#include "lock/qrwlock_fast.h" /* the qrwlock's inline fast paths */
#include "qlock/qrwlock.h"
#include "qlock/rwsem.h"
#include "state.h" /* the algorithm chosen for each object class */

/* Bytes of pthread_mutex_t a mutex algorithm may use (offset 0..15). */
#define SHIM_MUTEX_BYTES 16
/* Bytes of pthread_rwlock_t an rwlock algorithm may use (offset 0..23),
 * plus the TP rwlock's 8 bytes of padding (24..31, never written, so
 * they stay 0 over glibc's __cur_writer and __shared). */
#define SHIM_RW_BYTES 24

_Static_assert(sizeof(qlock_spinlock_t) <= SHIM_MUTEX_BYTES, "qspinlock size");
_Static_assert(sizeof(qlock_tp_mutex_t) <= SHIM_MUTEX_BYTES, "tp mutex size");
_Static_assert(sizeof(qlock_tp_rwlock_t) == 32 &&
	       offsetof(qlock_tp_rwlock_t, pad) == SHIM_RW_BYTES,
	       "tp rwlock: only its padding may lie past SHIM_RW_BYTES");
_Static_assert(sizeof(qlock_rwlock_t) <= SHIM_RW_BYTES, "qrwlock size");
/* The rwsem's OSQ word lies over glibc's __cur_writer (offset 24, unused
 * by the shim) and its bias word over __shared (28, never written: the
 * shim never initialises an rwsem biased, so a qlock-owned rwlock never
 * looks process-shared; the drop-in's own bias word is struct qrw's). */
_Static_assert(sizeof(qlock_rwsem_t) == 32 &&
	       offsetof(qlock_rwsem_t, osq) == SHIM_RW_BYTES &&
	       offsetof(qlock_rwsem_t, bias) == SHIM_RW_BYTES + 4,
	       "rwsem: only its OSQ word and bias word may lie past SHIM_RW_BYTES");

/* ---- polling timed lock, for algorithms without a native one --------- */

static inline bool shim_deadline_passed(clockid_t clk,
					const struct timespec *abs)
{
	return abs->tv_sec < 0 || qc_deadline_passed(abs, clk);
}

/* Back off: spin a little, then sleep for a growing slice, never past the
 * deadline.  `round` counts the caller's failed attempts. */
static inline void shim_poll_backoff(unsigned round, clockid_t clk,
				     const struct timespec *abs)
{
	if (round < 16) {
		for (unsigned i = 0; i < (8u << (round / 4)); i++)
			qa_cpu_relax();
		return;
	}
	long ns = 1000L << ((round - 16) < 10 ? (round - 16) : 10); /* <= ~1 ms */
	struct timespec now, until;

	clock_gettime(clk, &now);
	until.tv_sec = now.tv_sec;
	until.tv_nsec = now.tv_nsec + ns;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (until.tv_sec > abs->tv_sec ||
	    (until.tv_sec == abs->tv_sec && until.tv_nsec > abs->tv_nsec))
		until = *abs;
	/* Not a cancellation point issue: clock_nanosleep is one, but so are
	 * none of the lock calls we implement; glibc's timedlock is not a
	 * cancellation point either, so a pending cancel is not acted on
	 * here (only EINTR is possible, which just means "poll again"). */
	(void)clock_nanosleep(clk, TIMER_ABSTIME, &until, NULL);
}

#define SHIM_POLL_TIMED(trycall, clk, abs) __extension__({              \
	int shim__r = 0;                                                 \
	for (unsigned shim__i = 0;; shim__i++) {                         \
		if (trycall)                                             \
			break;                                           \
		if (shim_deadline_passed((clk), (abs))) {                \
			shim__r = ETIMEDOUT;                             \
			break;                                           \
		}                                                        \
		shim_poll_backoff(shim__i, (clk), (abs));                \
	}                                                                \
	shim__r;                                                         \
})

/* ---- the dispatch ------------------------------------------------------ */

/*
 * Every adapter below is one switch over the algorithm the process runs,
 * written once here: MA_SWITCH(tp, other) for the mutex, RA_SWITCH(qrwlock,
 * rwsem, tp, other) for the rwlock.  Each argument is the statement that
 * algorithm runs (it returns); `other` runs for every algorithm that has
 * no way of its own (the mutex's qspinlock; for the rwlock RALG_GLIBC,
 * which never reaches a lock call, and an algorithm the operation falls
 * back for).
 */

#define MA_SWITCH(tp, other)                                              \
	switch (shim_malg) {                                              \
	case MALG_TP: tp;                                                 \
	default: other;                                                   \
	}

#define RA_SWITCH(qrwlock, rwsem, tp, other)                              \
	switch (shim_ralg) {                                              \
	case RALG_QRWLOCK: qrwlock;                                       \
	case RALG_RWSEM: rwsem;                                           \
	case RALG_TP: tp;                                                 \
	default: other;                                                   \
	}

/* The storage as each algorithm's lock. */
#define MA_QS(w)   ((qlock_spinlock_t *)(w))
#define MA_TP(w)   ((qlock_tp_mutex_t *)(w))
#define RA_QRW(s)  ((qlock_rwlock_t *)(s))
#define RA_SEM(s)  ((qlock_rwsem_t *)(s))
#define RA_TP(s)   ((qlock_tp_rwlock_t *)(s))

/* A native timed lock: a deadline already passed is a trylock (the
 * library's timed calls would wait a futex call for it). */
#define SHIM_TIMED_NATIVE(trycall, timedcall)                             \
	(abs->tv_sec < 0 ? ((trycall) ? 0 : ETIMEDOUT) : (timedcall))

/* ---- mutex algorithms ------------------------------------------------ */

static inline void ma_lock(uint32_t *w)
{
	MA_SWITCH(qlock_tp_mutex_lock(MA_TP(w)); return,
		  qlock_spin_lock(MA_QS(w)); return)
}

static inline bool ma_trylock(uint32_t *w)
{
	MA_SWITCH(return qlock_tp_mutex_trylock(MA_TP(w)),
		  return qs_trylock_unless_held(MA_QS(w)))
}

static inline int ma_timedlock(uint32_t *w, clockid_t clk,
			       const struct timespec *abs)
{
	MA_SWITCH(return SHIM_TIMED_NATIVE(qlock_tp_mutex_trylock(MA_TP(w)),
			qlock_tp_mutex_timedlock(MA_TP(w), abs, clk)),
		  return SHIM_POLL_TIMED(qlock_spin_trylock(MA_QS(w)), clk, abs))
}

static inline void ma_unlock(uint32_t *w)
{
	MA_SWITCH(qlock_tp_mutex_unlock(MA_TP(w)); return,
		  qlock_spin_unlock(MA_QS(w)); return)
}

/* Held, taken over or waited for (pthread_mutex_destroy()'s EBUSY). */
static inline bool ma_is_locked(uint32_t *w)
{
	MA_SWITCH(return !tp_mutex_is_free(MA_TP(w)),
		  return !qs_is_free(MA_QS(w)))
}

/* Some thread holds it (not merely waiters recorded in the word). */
static inline bool ma_is_held(uint32_t *w)
{
	MA_SWITCH(return tp_mutex_is_held(MA_TP(w)),
		  return qs_is_held(MA_QS(w)))
}

/* In a fork child: the waiters the lock records are gone; held stays
 * held. */
static inline void ma_fork_reset(uint32_t *w)
{
	MA_SWITCH(tp_mutex_fork_reset(MA_TP(w)); return,
		  qs_fork_reset(MA_QS(w)); return)
}

/* ---- rwlock algorithms ----------------------------------------------- */

static inline void ra_rdlock(void *s)
{
	RA_SWITCH(qlock_read_lock(RA_QRW(s)); return,
		  qlock_down_read(RA_SEM(s)); return,
		  qlock_tp_rwlock_rdlock(RA_TP(s)); return,
		  (void)s; abort()) /* unreachable: RALG_GLIBC never gets here */
}

static inline bool ra_tryrdlock(void *s)
{
	RA_SWITCH(return qlock_read_trylock(RA_QRW(s)),
		  return qlock_down_read_trylock(RA_SEM(s)),
		  return qlock_tp_rwlock_tryrdlock(RA_TP(s)),
		  (void)s; return false)
}

/* Can the algorithm let a reader in past waiting writers (while no
 * writer holds the lock)?  Realtime readers need it (shim/rwlock.c). */
static inline bool ra_has_unfair_read(void)
{
	RA_SWITCH(return true, return false, return true, return false)
}

static inline bool ra_tryrdlock_unfair(void *s)
{
	RA_SWITCH(return qlock_read_trylock_unfair(RA_QRW(s)),
		  return ra_tryrdlock(s),
		  return qlock_tp_rwlock_tryrdlock_unfair(RA_TP(s)),
		  return ra_tryrdlock(s))
}

/* A reader that already holds the lock reads again: past waiting writers
 * (who wait for it anyway), never past one that holds the lock. */
static inline bool ra_tryrdlock_recursive(void *s)
{
	RA_SWITCH(return ra_tryrdlock_unfair(s),
		  return qlock_down_read_trylock_unfair(RA_SEM(s)),
		  return ra_tryrdlock_unfair(s),
		  return ra_tryrdlock_unfair(s))
}

/* A reader joins readers that hold the lock, past waiting writers (never
 * when no reader holds it, nor past a writer that holds it). */
static inline bool ra_tryrdlock_join(void *s)
{
	RA_SWITCH(return qlock_read_trylock_join(RA_QRW(s)),
		  return qlock_down_read_trylock_join(RA_SEM(s)),
		  return qlock_tp_rwlock_tryrdlock_join(RA_TP(s)),
		  (void)s; return false)
}

/* Does a writer that waits for readers give way to the threads queued
 * behind it after a bound (ra_wrlock_bounded)?  Then a blocked reader may
 * wait in the algorithm's own queue; else it waits in bounded rounds. */
static inline bool ra_writers_give_way(void)
{
	RA_SWITCH(return true, return false, return false, return false)
}

/* The reader count is at the algorithm's limit (a snapshot): a reader
 * that finds the lock refused gets EAGAIN, as from glibc past its own. */
static inline bool ra_readers_full(void *s)
{
	RA_SWITCH(return qlock_rwlock_readers(RA_QRW(s)) >=
			 QLOCK_RWLOCK_MAX_READERS,
		  return qlock_rwsem_readers(RA_SEM(s)) >=
			 QLOCK_RWSEM_MAX_READERS,
		  return qlock_tp_rwlock_readers(RA_TP(s)) >=
			 QLOCK_TP_RWLOCK_MAX_READERS,
		  (void)s; return false)
}

static inline int ra_timedrdlock(void *s, clockid_t clk,
				 const struct timespec *abs)
{
	RA_SWITCH(return SHIM_POLL_TIMED(ra_tryrdlock(s), clk, abs),
		  return SHIM_TIMED_NATIVE(qlock_down_read_trylock(RA_SEM(s)),
			qlock_down_read_timed(RA_SEM(s), abs, clk)),
		  return SHIM_TIMED_NATIVE(qlock_tp_rwlock_tryrdlock(RA_TP(s)),
			qlock_tp_rwlock_timedrdlock(RA_TP(s), abs, clk)),
		  return SHIM_POLL_TIMED(ra_tryrdlock(s), clk, abs))
}

static inline void ra_rdunlock(void *s)
{
	RA_SWITCH(qlock_read_unlock(RA_QRW(s)); return,
		  qlock_up_read(RA_SEM(s)); return,
		  qlock_tp_rwlock_rdunlock(RA_TP(s)); return,
		  (void)s; return)
}

static inline void ra_wrlock(void *s)
{
	RA_SWITCH(qlock_write_lock(RA_QRW(s)); return,
		  qlock_down_write(RA_SEM(s)); return,
		  qlock_tp_rwlock_wrlock(RA_TP(s)); return,
		  (void)s; abort())
}

/* A writer that lets the threads queued behind it pass once readers have
 * held the lock for defer_ns against it (ra_writers_give_way()); the
 * algorithms that cannot wait as ra_wrlock(). */
static inline void ra_wrlock_bounded(void *s, uint64_t defer_ns)
{
	RA_SWITCH(qlock_write_lock_bounded(RA_QRW(s), defer_ns); return,
		  (void)defer_ns; qlock_down_write(RA_SEM(s)); return,
		  (void)defer_ns; qlock_tp_rwlock_wrlock(RA_TP(s)); return,
		  (void)s; (void)defer_ns; abort())
}

static inline bool ra_trywrlock(void *s)
{
	RA_SWITCH(return qlock_write_trylock(RA_QRW(s)),
		  return qlock_down_write_trylock(RA_SEM(s)),
		  return qlock_tp_rwlock_trywrlock(RA_TP(s)),
		  (void)s; return false)
}

static inline int ra_timedwrlock(void *s, clockid_t clk,
				 const struct timespec *abs)
{
	RA_SWITCH(return SHIM_POLL_TIMED(ra_trywrlock(s), clk, abs),
		  return SHIM_TIMED_NATIVE(qlock_down_write_trylock(RA_SEM(s)),
			qlock_down_write_timed(RA_SEM(s), abs, clk)),
		  return SHIM_TIMED_NATIVE(qlock_tp_rwlock_trywrlock(RA_TP(s)),
			qlock_tp_rwlock_timedwrlock(RA_TP(s), abs, clk)),
		  return SHIM_POLL_TIMED(ra_trywrlock(s), clk, abs))
}

static inline void ra_wrunlock(void *s)
{
	RA_SWITCH(qlock_write_unlock(RA_QRW(s)); return,
		  qlock_up_write(RA_SEM(s)); return,
		  qlock_tp_rwlock_wrunlock(RA_TP(s)); return,
		  (void)s; return)
}

#endif /* QLOCK_SHIM_ADAPT_H */
