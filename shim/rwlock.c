/* SPDX-License-Identifier: MIT */
/*
 * pthread_rwlock_*: process-private rwlocks on the algorithm
 * QLOCK_RWLOCK chose; process-shared ones go to glibc.
 *
 * Realtime readers (POSIX, Thread Execution Scheduling): a SCHED_FIFO or
 * SCHED_RR reader gets the lock when no writer holds it and no blocked
 * writer has a higher or equal priority; every other reader keeps the
 * algorithm's writer preference.  Realtime writers that block publish
 * themselves in the rt_writers word (count in bits 8-31, the highest
 * priority among them in bits 0-7) until they get the lock or give up;
 * ordinary writers rank at 0, below every realtime reader.  The highest
 * priority is kept until the count drops to zero: a reader may wait for a
 * writer that has gone meanwhile, never pass one that ranks above it.
 * Such a reader takes the lock past the waiting writers
 * (ra_tryrdlock_unfair), polling while a writer holds it.  Only the
 * algorithms that can admit a reader past waiting writers do this (qrwlock, TP).
 * Who is realtime is asked only on the slow path.
 *
 * Recursive readers: a thread that holds the lock for reading and reads
 * again is let in past waiting writers (ra_tryrdlock_recursive), as
 * glibc does for its default kind and for PREFER_WRITER_NP: the writers
 * wait for that thread anyway, so queueing it behind them would deadlock.
 * Only PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP queues it (and may
 * deadlock, as in glibc).  Readers that hold nothing keep the algorithm's
 * writer preference.  Each thread keeps the read locks it holds in a
 * small table (rd_held, below), filled on every read lock and emptied on
 * every read unlock, fast paths included.
 *
 * Readers that wait for one another (the default kind, PREFER_READER_NP
 * and PREFER_WRITER_NP, all three glibc's reader preference): a reader
 * that finds a writer waiting defers to it, so writers are served, but
 * for RW_DEFER_NS at most (1 ms); then, while other readers still hold
 * the lock, it joins them past the writer (ra_tryrdlock_join), as
 * glibc's reader would at once.  A thread that read-locks and waits for
 * another thread's read lock therefore never deadlocks behind a writer.
 * How the bound is kept depends on where the reader waits: on the qrwlock
 * a blocked reader waits in the lock's queue, and the writer ahead of it
 * gives way (qlock_write_lock_bounded: after RW_DEFER_NS of readers that
 * do not drain it lets the queue pass and queues again, so a reader waits
 * RW_DEFER_NS for each writer queued ahead of it at most); every other
 * wait (the qrwlock's polled timed reads, the TP rwlock and the rwsem)
 * is cut into rounds of RW_DEFER_NS, each ended by a join if readers
 * hold the lock.  A try-read joins readers that hold the lock at once.
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP keeps strict writer
 * preference (and deadlocks there, as glibc).
 *
 * Reader count limit: every algorithm refuses a reader past its maximum
 * (QLOCK_RWLOCK_MAX_READERS, QLOCK_RWSEM_MAX_READERS,
 * QLOCK_TP_RWLOCK_MAX_READERS) rather than let the count wrap; the
 * drop-in answers EAGAIN, as glibc past its own limit.
 *
 * Read bias (BRAVO, core/bravo.h, which says how a biased read, its
 * unlock, the revocation and fork work): the bias word is struct qrw's
 * `bias`, turned on by a reader that takes the algorithm's lock when it is
 * due (only with QLOCK_RWLOCK_BIAS=1).  Every guarantee below holds with
 * it:
 *  - a biased read is a read: the statistics, the profile and lockdep see
 *    it through the same entry points, rd_held records it;
 *  - a thread that holds a biased read and reads again nests on its slot
 *    (the writer waits for that slot anyway);
 *  - a writer never waits without bound for biased readers while holding
 *    the algorithm's lock: after RW_BIAS_STEP_NS it releases it (readers
 *    that queued behind it get in, as glibc would let them), takes it
 *    again and waits again, the bias kept off meanwhile; a trylock writer
 *    that finds biased readers answers EBUSY, a timed one waits for them
 *    until its deadline;
 *  - the reader limit: a thread nests at most the algorithm's limit of
 *    biased reads on its slot, then counts in the lock word (EAGAIN there).
 * Process-shared rwlocks go to glibc and never take the bias (the table
 * is per process); PREFER_WRITER_NONRECURSIVE_NP rwlocks never take it
 * either (a biased reader does not see a writer that waits for the lock,
 * and that kind keeps glibc's strict writer preference).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "core/bravo.h"
#include "deadlock.h"
#include "entry.h"
#include "lockdep.h"
#include "shim.h"

static inline struct qrw *QRW(pthread_rwlock_t *r) { return (struct qrw *)(void *)r; }

static inline bool rwlock_glibc(pthread_rwlock_t *r)
{
	return shim_ralg == RALG_GLIBC || QRW(r)->shared != 0;
}

static int rwlock_init(pthread_rwlock_t *r, const pthread_rwlockattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE, kind = PTHREAD_RWLOCK_DEFAULT_NP;

	ready();
	if (a) {
		(void)pthread_rwlockattr_getpshared(a, &pshared);
		(void)pthread_rwlockattr_getkind_np(a, &kind);
	}
	if (shim_ralg == RALG_GLIBC || pshared != PTHREAD_PROCESS_PRIVATE) {
		int err = real.pthread_rwlock_init(r, a);
		/* glibc marks a shared rwlock with a non-zero __shared. */
		if (!err && pshared != PTHREAD_PROCESS_PRIVATE && QRW(r)->shared == 0)
			QRW(r)->shared = 1;
		return err;
	}
	memset(r, 0, sizeof(*r));
	QRW(r)->flags = (uint32_t)kind;
	return 0;
}

#define RTW_PRIO_MASK 0xffu
#define RTW_ONE 0x100u

/* The caller's SCHED_FIFO/SCHED_RR priority (>= 1), 0 for other policies.
 * glibc caches its own thread's policy, so this is cheap after the first
 * call (a policy set with sched_setscheduler() is not seen, as glibc's
 * pthread_getschedparam() does not see it). */
static int rt_priority(void)
{
	struct sched_param sp;
	int policy;

	if (!ra_has_unfair_read() ||
	    pthread_getschedparam(pthread_self(), &policy, &sp) != 0)
		return 0;
	return policy == SCHED_FIFO || policy == SCHED_RR ? sp.sched_priority : 0;
}

static void rt_writer_enter(struct qrw *q, int prio)
{
	uint32_t v = qa_read(&q->rt_writers), n;

	do {
		n = v + RTW_ONE;
		if ((v & RTW_PRIO_MASK) < (uint32_t)prio)
			n = (n & ~RTW_PRIO_MASK) | (uint32_t)prio;
	} while (!qa_try_cmpxchg(&q->rt_writers, &v, n));
}

static void rt_writer_leave(struct qrw *q)
{
	uint32_t v = qa_read(&q->rt_writers), n;

	do
		n = v - RTW_ONE < RTW_ONE ? 0 : v - RTW_ONE;
	while (!qa_try_cmpxchg(&q->rt_writers, &v, n));
}

/* A realtime reader's slow path: -1 when a writer at or above it waits
 * (then it queues as any reader), else 0, EBUSY or ETIMEDOUT. */
static int rt_rdlock(struct qrw *q, int prio, int mode, clockid_t clk,
		     const struct timespec *abs)
{
	static const struct timespec never = { .tv_sec = INT32_MAX };

	for (unsigned i = 0;; i++) {
		uint32_t v = qa_read(&q->rt_writers);

		if (v >= RTW_ONE && (v & RTW_PRIO_MASK) >= (uint32_t)prio)
			return -1;
		if (ra_tryrdlock_unfair(q->alg))
			return 0;
		if (mode == 1)
			return EBUSY;
		if (mode == 2 && shim_deadline_passed(clk, abs))
			return ETIMEDOUT;
		shim_poll_backoff(i, mode == 2 ? clk : CLOCK_MONOTONIC,
				  mode == 2 ? abs : &never);
	}
}

/*
 * The read locks this thread holds: up to RD_SLOTS locks by address with
 * their nesting counts, and how many more (spill) the table could not
 * name; with spill > 0 every lock counts as held, which lets a reader
 * past waiting writers too often but never queues one behind writers
 * that wait for it.  A read unlock by another thread than the reader
 * (allowed by glibc) leaves the reader's entry behind: the same, harmless.
 * A fork child inherits the forking thread's table with its locks.
 */
#define RD_SLOTS 8

struct rd_held {
	uint32_t n, spill;
	const void *lock[RD_SLOTS];
	uint32_t count[RD_SLOTS];
};

static __thread struct rd_held rd_me __attribute__((tls_model("initial-exec")));

static inline void rd_track(const void *r)
{
	struct rd_held *h = &rd_me;

	for (uint32_t i = 0; i < h->n; i++)
		if (h->lock[i] == r) {
			h->count[i]++;
			return;
		}
	if (qa_likely(h->n < RD_SLOTS)) {
		h->lock[h->n] = r;
		h->count[h->n++] = 1;
		return;
	}
	h->spill++;
}

static inline void rd_untrack(const void *r)
{
	struct rd_held *h = &rd_me;
	uint32_t n = h->n;

	/* Usually the latest read lock, held once: the table shrinks. */
	if (qa_likely(n != 0) && h->lock[n - 1] == r && h->count[n - 1] == 1) {
		h->n = n - 1;
		return;
	}
	for (uint32_t i = n; i-- > 0;)
		if (h->lock[i] == r) {
			if (--h->count[i] == 0) {
				h->n--;
				h->lock[i] = h->lock[h->n];
				h->count[i] = h->count[h->n];
			}
			return;
		}
	if (h->spill)
		h->spill--;
}

static bool rd_held_by_me(const void *r)
{
	const struct rd_held *h = &rd_me;

	for (uint32_t i = 0; i < h->n; i++)
		if (h->lock[i] == r)
			return true;
	return h->spill != 0;
}

/* Does the caller hold the write lock?  The TP word names its writer (its
 * tid, or in a fork child the tid the forking thread had before the fork);
 * the qrwlock's and the rwsem's words do not, so for those the shim
 * records the writer's pthread_self() in q->writer (rw_record_writer()). */
static inline bool rw_write_held_by_me(struct qrw *q)
{
	if (shim_ralg == RALG_TP)
		return tp_rwlock_write_held_by_self(RA_TP(q->alg));
	return qa_read(&q->writer) == self_id();
}

/* id: the new writer's self_id(), or 0 as the writer unlocks. */
static inline void rw_record_writer(struct qrw *q, uint64_t id)
{
	if (shim_ralg != RALG_TP)
		qa_write(&q->writer, id);
}

#define RW_DEFER_NS 1000000u /* a reader's longest deferral to one writer */

/* Are readers glibc's (they join readers past waiting writers, after the
 * deferral), or does the kind keep strict writer preference? */
static inline bool rw_kind_joins(const struct qrw *q)
{
	return q->flags != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/* Nanoseconds from now to the deadline abs on clk (< 0: passed). */
static int64_t rw_ns_left(clockid_t clk, const struct timespec *abs)
{
	struct timespec now;

	clock_gettime(clk, &now);
	return ((int64_t)abs->tv_sec - now.tv_sec) * 1000000000 +
	       (abs->tv_nsec - now.tv_nsec);
}

/* ---- read bias ----------------------------------------------------------- */

/* Is the read bias in use in this process?  QLOCK_RWLOCK_BIAS, read once
 * as the drop-in starts: while it is 0 no lock's bias is ever turned on
 * and no thread holds a slot, so the inline paths skip every bias check
 * on this one load. */
static inline bool rw_bias_used(void)
{
	return qa_unlikely(qa_read(&shim_rwlock_bias) != 0);
}

/*
 * A read unlock by a thread that holds no biased read of the rwlock: if
 * the lock word counts no reader and biased readers may exist, it
 * releases another thread's biased read (glibc lets any thread release a
 * read lock).  true when it did.
 */
static __attribute__((noinline)) bool rw_bias_unlock_foreign(struct qrw *q)
{
	uint32_t n;

	RA_SWITCH(n = qlock_rwlock_readers(RA_QRW(q->alg)); break,
		  n = qlock_rwsem_readers(RA_SEM(q->alg)); break,
		  n = qlock_tp_rwlock_readers(RA_TP(q->alg)); break,
		  n = 1)
	return n == 0 && qc_bravo_release_foreign(q);
}

static inline bool rw_bias_unlock(struct qrw *q)
{
	if (!rw_bias_used())
		return false;
	if (qc_bravo_read_release(q))
		return true;
	return qa_unlikely(qa_read(&q->bias) & (QC_BRAVO_ON | QC_BRAVO_HOLD)) &&
	       rw_bias_unlock_foreign(q);
}

/* Must a writer that holds the algorithm's lock revoke the bias? */
static inline bool rw_bias_must_revoke(struct qrw *q)
{
	return rw_bias_used() && qc_bravo_must_revoke(&q->bias);
}

/* A writer that waits longer than this for biased readers while holding
 * the algorithm's lock steps back (see the top of this file). */
#define RW_BIAS_STEP_NS ((uint64_t)RW_DEFER_NS) /* 1 ms, as a reader's deferral */

/* The algorithm's reader limit: most biased reads a thread nests. */
static inline uint32_t rw_bias_max(void)
{
	RA_SWITCH(return QLOCK_RWLOCK_MAX_READERS,
		  return QLOCK_RWSEM_MAX_READERS,
		  return QLOCK_TP_RWLOCK_MAX_READERS,
		  return 0)
}

/* A read through the caller's slot: the bias is on, or the caller holds
 * the lock so already (it nests). */
static inline bool rw_bias_read(struct qrw *q)
{
	if (!rw_bias_used())
		return false;
	return qc_bravo_read_try(q, &q->bias, rw_bias_max()) ||
	       (qa_unlikely(qc_bravo_me.n != 0) &&
		qc_bravo_read_nest(q, rw_bias_max()));
}

/* After a read through the algorithm's lock: turn the bias on if due.
 * Not for PREFER_WRITER_NONRECURSIVE_NP: a biased reader does not see a
 * writer that waits for the lock, and that kind keeps glibc's strict
 * writer preference. */
static inline void rw_bias_read_locked(struct qrw *q)
{
	qc_bravo_reader_locked(&q->bias,
			       qa_read(&shim_rwlock_bias) != 0 && rw_kind_joins(q));
}

/*
 * A writer that holds the algorithm's lock and must revoke the bias
 * (mode 0 block, 1 try, 2 timed): 0 with the lock held and no biased
 * reader left, else EBUSY or ETIMEDOUT with the lock released.
 */
static __attribute__((noinline)) int rw_bias_revoke(struct qrw *q, int mode,
						    clockid_t clk,
						    const struct timespec *abs)
{
	for (;;) {
		uint64_t budget = mode == 1 ? 0 : RW_BIAS_STEP_NS;

		if (mode == 2) {
			int64_t left = rw_ns_left(clk, abs);

			if (left < (int64_t)budget)
				budget = left > 0 ? (uint64_t)left : 0;
		}
		if (qc_bravo_revoke(q, &q->bias, budget))
			return 0;
		ra_wrunlock(q->alg);
		if (mode == 1)
			return EBUSY;
		if (mode == 2 && shim_deadline_passed(clk, abs))
			return ETIMEDOUT;
		sched_yield(); /* the readers queued behind us go first */
		if (mode == 0 && rw_kind_joins(q)) {
			ra_wrlock_bounded(q->alg, RW_DEFER_NS);
		} else if (mode == 0) {
			ra_wrlock(q->alg);
		} else {
			int err = ra_timedwrlock(q->alg, clk, abs);

			if (err)
				return err;
		}
		if (!qc_bravo_must_revoke(&q->bias))
			return 0; /* another writer saw them go */
	}
}

/* A reader that holds the lock already: in at once unless the count is
 * full, whatever waits (0 or EAGAIN). */
static int rw_rdlock_recursive(struct qrw *q)
{
	while (!ra_tryrdlock_recursive(q->alg)) {
		if (ra_readers_full(q->alg))
			return EAGAIN;
		qa_cpu_relax(); /* lost a race on the word; no writer holds it */
	}
	return 0;
}

/* A reader of a joining kind that must wait (mode 0 block, 2 timed):
 * rounds of RW_DEFER_NS, each ended by a join while readers hold it. */
static int rw_rdlock_deferring(struct qrw *q, int mode, clockid_t clk,
			       const struct timespec *abs)
{
	if (mode == 0 && ra_writers_give_way()) {
		ra_rdlock(q->alg);
		return 0;
	}
	for (;;) {
		bool last = mode == 2 && rw_ns_left(clk, abs) <= RW_DEFER_NS;
		struct timespec round = qc_deadline_in(RW_DEFER_NS);

		if ((last ? ra_timedrdlock(q->alg, clk, abs) :
			    ra_timedrdlock(q->alg, CLOCK_MONOTONIC, &round)) == 0)
			return 0;
		if (ra_tryrdlock_join(q->alg))
			return 0;
		if (last)
			return ETIMEDOUT;
		if (ra_readers_full(q->alg))
			return EAGAIN;
	}
}

/* mode: 0 block, 1 try, 2 timed; through the algorithm's lock */
static inline int rw_rdlock_alg(struct qrw *q, int mode, clockid_t clk,
				const struct timespec *abs)
{
	if (ra_tryrdlock(q->alg))
		return 0;
	if (rw_kind_joins(q) && rd_held_by_me(q))
		return rw_rdlock_recursive(q);
	if (ra_readers_full(q->alg))
		return EAGAIN;
	int prio = rt_priority();
	if (prio) {
		int err = rt_rdlock(q, prio, mode, clk, abs);
		if (err >= 0)
			return err;
	}
	if (rw_kind_joins(q)) {
		if (mode == 1)
			return ra_tryrdlock_join(q->alg) ? 0 : EBUSY;
		return rw_rdlock_deferring(q, mode, clk, abs);
	}
	switch (mode) {
	case 0:
		ra_rdlock(q->alg);
		return 0;
	case 1:
		return EBUSY;
	default:
		return ra_timedrdlock(q->alg, clk, abs);
	}
}

static inline int rw_rdlock_qlock(struct qrw *q, int mode, clockid_t clk,
				  const struct timespec *abs)
{
	int err;

	/* As glibc: a NULL deadline is none, and then the clock is not
	 * looked at. */
	if (mode == 2 && !abs)
		mode = 0;
	/* glibc's order: a bad deadline first, then the deadlock check. */
	if (mode == 2 && (!clock_ok(clk) || !nsec_ok(abs)))
		return EINVAL;
	if (mode != 1 && rw_write_held_by_me(q))
		return EDEADLK;
	if (rw_bias_read(q))
		return 0;
	err = rw_rdlock_alg(q, mode, clk, abs);
	if (err == 0)
		rw_bias_read_locked(q);
	return err;
}

static inline int rw_rdlock(pthread_rwlock_t *r, int mode, clockid_t clk,
			    const struct timespec *abs)
{
	int err;

	if (rwlock_glibc(r))
		return SHIM_GLIBC_ACQUIRE(r, mode, clk, abs, pthread_rwlock_rdlock,
					  pthread_rwlock_tryrdlock, pthread_rwlock_clockrdlock);
	err = rw_rdlock_qlock(QRW(r), mode, clk, abs);
	if (err == 0)
		rd_track(r);
	return err;
}

static inline int rw_wrlock(pthread_rwlock_t *r, int mode, clockid_t clk,
			    const struct timespec *abs)
{
	struct qrw *q = QRW(r);
	int err = 0;

	if (rwlock_glibc(r))
		return SHIM_GLIBC_ACQUIRE(r, mode, clk, abs, pthread_rwlock_wrlock,
					  pthread_rwlock_trywrlock, pthread_rwlock_clockwrlock);
	if (mode == 2 && !abs) /* as glibc: no deadline, no clock check */
		mode = 0;
	if (mode == 2 && (!clock_ok(clk) || !nsec_ok(abs)))
		return EINVAL;
	if (mode != 1 && rw_write_held_by_me(q))
		return EDEADLK;
	if (!ra_trywrlock(q->alg)) {
		if (mode == 1)
			return EBUSY;
		int prio = rt_priority();
		if (prio)
			rt_writer_enter(q, prio);
		if (mode == 0 && rw_kind_joins(q))
			ra_wrlock_bounded(q->alg, RW_DEFER_NS);
		else if (mode == 0)
			ra_wrlock(q->alg);
		else
			err = ra_timedwrlock(q->alg, clk, abs);
		if (prio)
			rt_writer_leave(q);
		if (err)
			return err;
	}
	if (qc_bravo_must_revoke(&q->bias)) {
		err = rw_bias_revoke(q, mode, clk, abs);
		if (err)
			return err;
	}
	rw_record_writer(q, self_id());
	return 0;
}

/* The general release, the statistics told already (out of line: the
 * inline unlock stays small). */
static __attribute__((noinline)) int rw_unlock_told(pthread_rwlock_t *r)
{
	struct qrw *q = QRW(r);

	if (rwlock_glibc(r))
		return real.pthread_rwlock_unlock(r);
	if (rw_write_held_by_me(q)) {
		rw_record_writer(q, 0);
		ra_wrunlock(q->alg);
	} else {
		rd_untrack(r);
		if (!rw_bias_unlock(q))
			ra_rdunlock(q->alg);
	}
	return 0;
}

EXPORT int pthread_rwlock_init(pthread_rwlock_t *r, const pthread_rwlockattr_t *a)
{
	int err = rwlock_init(r, a);

	if (SHIM_LOCKDEP_ON() && err == 0)
		lockdep_init(r, LD_RWLOCK_WRITE, LOCKDEP_PC());
	return err;
}

EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *r)
{
	ready();
	if (SHIM_LOCKDEP_ON())
		lockdep_destroy(r, LD_RWLOCK_WRITE, LOCKDEP_PC(), 0);
	if (rwlock_glibc(r))
		return real.pthread_rwlock_destroy(r);
	return 0; /* as glibc: nothing to do, no check */
}

/*
 * The default drop-in's hot paths: a process-private rwlock on the
 * qrwlock (the default) or the TP algorithm, taken while nobody waits,
 * runs the library's inline fast paths after two loads (shim_rwlock_fast,
 * __shared) and, for the qrwlock, q->writer on unlock.  Every other case,
 * and every miss, takes the general path: a reader that finds the word
 * write-locked (by itself: EDEADLK there) or waited on, a realtime reader
 * that must pass waiting writers (they set WAITERS, so it misses here).
 * The TP word names its writer, so an unlock tells a reader from the
 * writer by the word alone; the qrwlock's unlock asks q->writer.
 * rw_fast_ok()'s f: shim_rwlock_fast, read once per call.
 */
static inline bool rw_fast_ok(uint8_t f, const struct qrw *q)
{
	return qa_likely(f) && qa_likely(q->shared == 0);
}

/* The algorithms' inline paths, each expanded in every entry point that
 * takes it (always_inline: an unlock that calls out loses what the
 * inline path saves). */
static inline __attribute__((always_inline)) bool rw_rdlock_fast_word(struct qrw *q)
{
	if (shim_ralg == RALG_QRWLOCK)
		return qrw_cur_read_lock_fast((qlock_rwlock_t *)q->alg);
	return tp_rwlock_rdlock_fast((qlock_tp_rwlock_t *)q->alg);
}

/* Biased when the bias is on, else the algorithm's word (and then the
 * bias turned on if due). */
static inline __attribute__((always_inline)) bool rw_rdlock_fast_alg(struct qrw *q)
{
	if (!rw_bias_used())
		return rw_rdlock_fast_word(q);
	if (qa_read(&q->bias) & QC_BRAVO_ON) {
		if (qa_likely(qc_bravo_read_try(q, &q->bias, rw_bias_max())))
			return true;
	}
	if (!rw_rdlock_fast_word(q))
		return false;
	rw_bias_read_locked(q);
	return true;
}

/* The trylocks' inline paths: not with lockdep's checks, whose hooks see
 * every trylock. */
static inline bool rw_rdlock_fast(pthread_rwlock_t *r)
{
	struct qrw *q = QRW(r);

	if (!rw_fast_ok(qa_read(&shim_rwlock_fast) & SHIM_FAST_ON, q) || !rw_rdlock_fast_alg(q))
		return false;
	rd_track(r);
	return true;
}

static inline __attribute__((always_inline)) bool rw_wrlock_fast_alg(struct qrw *q)
{
	if (shim_ralg == RALG_QRWLOCK) {
		uint64_t me = self_id_cached(); /* 0: the general path fills it */

		if (qa_unlikely(me == 0) || rw_bias_must_revoke(q) ||
		    !qrw_cur_write_lock_fast((qlock_rwlock_t *)q->alg))
			return false;
		/* A reader may have turned the bias on just before its
		 * unlock let us in: the general path revokes it. */
		if (rw_bias_must_revoke(q)) {
			qlock_write_unlock((qlock_rwlock_t *)q->alg);
			return false;
		}
		qa_write(&q->writer, me); /* rw_record_writer(), qrwlock */
		return true;
	}
	uint32_t tid = tp_self_tid_cached(); /* 0: the general path fills it */

	if (qa_unlikely(tid == 0) || rw_bias_must_revoke(q) ||
	    !tp_rwlock_wrlock_fast((qlock_tp_rwlock_t *)q->alg, tid))
		return false;
	if (rw_bias_must_revoke(q)) { /* as above */
		qlock_tp_rwlock_wrunlock((qlock_tp_rwlock_t *)q->alg);
		return false;
	}
	return true;
}

static inline bool rw_wrlock_fast(pthread_rwlock_t *r)
{
	struct qrw *q = QRW(r);

	return rw_fast_ok(qa_read(&shim_rwlock_fast) & SHIM_FAST_ON, q) && rw_wrlock_fast_alg(q);
}

/* The qrwlock's word does not name its writer: q->writer does. */
static inline __attribute__((always_inline)) bool rw_unlock_fast_qrwlock(struct qrw *q)
{
	qlock_rwlock_t *l = (qlock_rwlock_t *)q->alg;
	uint64_t w = qa_read(&q->writer);

	if (w == 0) {
		rd_untrack(q);
		if (!rw_bias_unlock(q))
			qrw_cur_read_unlock(l); /* misuse is reported there */
		return true;
	}
	if (w != self_id_cached()) /* 0 if never cached: not the writer */
		return false;
	qa_write(&q->writer, 0u); /* rw_record_writer(), qrwlock */
	if (!QRW_CUR_WRITE_UNLOCK_DONE(l))
		qlock_write_unlock(l); /* a sleeping waiter, or misuse */
	return true;
}

static inline __attribute__((always_inline)) bool rw_unlock_fast_alg(struct qrw *q)
{
	if (shim_ralg == RALG_QRWLOCK)
		return rw_unlock_fast_qrwlock(q);
	qlock_tp_rwlock_t *tp = (qlock_tp_rwlock_t *)q->alg;
	uint32_t v, tid;

	if (rw_bias_unlock(q)) { /* a biased read */
		rd_untrack(q);
		return true;
	}
	/* The TP word names its writer: a shared word is a read unlock, our
	 * own tid a write unlock. */
	v = TP_RW_WORD(tp);
	if (TP_RW_SHARED(v)) {
		if (!tp_rwlock_rdunlock_fast(tp))
			return false; /* the general path untracks */
		rd_untrack(q);
		return true;
	}
	/* 0 if never cached: this thread never wrote, and a free word (tid
	 * field 0) must not match it. */
	tid = tp_self_tid_cached();
	if (qa_unlikely(tid == 0) || TP_RW_WRITER(v) != tid)
		return false;
	if (tp_rwlock_wrunlock_fast(tp, tid) != tid)
		qlock_tp_rwlock_wrunlock(tp); /* waiters: the slow unlock */
	return true;
}

/* The blocking locks' inline paths: SHIM_FAST_* (entry.h); what they
 * take while the statistics count or lockdep's checks are on is told out
 * of line (SHIM_FAST_TELL).  With both on the inline paths are off; with
 * either, the general paths below still try and release a
 * process-private rwlock on the qrwlock or the TP algorithm by the inline
 * paths' code. */
static inline __attribute__((always_inline)) int
rw_lock_fast_counted(pthread_rwlock_t *r, bool write)
{
	uint8_t f = qa_read(&shim_rwlock_fast);
	struct qrw *q = QRW(r);

	if (!rw_fast_ok(f, q))
		return SHIM_FAST_NONE;
	if (!(write ? rw_wrlock_fast_alg(q) : rw_rdlock_fast_alg(q)))
		return SHIM_FAST_MISSED;
	if (!write)
		rd_track(r);
	if (qa_unlikely(f & (SHIM_FAST_COUNT | SHIM_FAST_LOCKDEP))) /* one test */
		return SHIM_FAST_TELL(f);
	return SHIM_FAST_TAKEN;
}

/* The read's inline path leaves two things to rw_rdlock_finish(), so that
 * it calls nothing (entry.h): the qrwlock reader's back-out after an add
 * that found a writer, and every read while the bias is in use. */
#define RW_FAST_BACK_OUT SHIM_FAST_OWN
#define RW_FAST_BIASED   (SHIM_FAST_OWN - 1)

static inline int rw_rdlock_fast_counted(pthread_rwlock_t *r)
{
	uint8_t f = qa_read(&shim_rwlock_fast);
	struct qrw *q = QRW(r);

	if (!rw_fast_ok(f, q))
		return SHIM_FAST_NONE;
	if (rw_bias_used())
		return RW_FAST_BIASED;
	if (shim_ralg == RALG_QRWLOCK) {
		if (!qrw_cur_read_lock_add((qlock_rwlock_t *)q->alg))
			return RW_FAST_BACK_OUT;
	} else if (!tp_rwlock_rdlock_fast((qlock_tp_rwlock_t *)q->alg)) {
		return SHIM_FAST_MISSED;
	}
	rd_track(r);
	if (qa_unlikely(f & (SHIM_FAST_COUNT | SHIM_FAST_LOCKDEP))) /* one test */
		return SHIM_FAST_TELL(f);
	return SHIM_FAST_TAKEN;
}

static inline int rw_rdlock_finish(pthread_rwlock_t *r, int fast)
{
	if (fast == RW_FAST_BACK_OUT) {
		qrw_cur_read_back_out((qlock_rwlock_t *)QRW(r)->alg);
		return SHIM_FAST_MISSED;
	}
	return rw_lock_fast_counted(r, false); /* RW_FAST_BIASED */
}

/* The write's inline path leaves nothing undone. */
static inline int rw_wrlock_finish(pthread_rwlock_t *r, int fast)
{
	(void)r;
	return fast;
}

static inline int rw_wrlock_fast_counted(pthread_rwlock_t *r)
{
	return rw_lock_fast_counted(r, true);
}

static inline bool rw_counted_fast_ok(const struct qrw *q)
{
	return (shim_ralg == RALG_TP || shim_ralg == RALG_QRWLOCK) &&
	       qa_likely(q->shared == 0);
}

/* The inline paths' takes whatever shim_rwlock_fast says (entry.h). */
static inline bool rw_rdlock_inline(pthread_rwlock_t *r)
{
	struct qrw *q = QRW(r);

	if (!rw_counted_fast_ok(q) || !rw_rdlock_fast_alg(q))
		return false;
	rd_track(r);
	return true;
}

static inline bool rw_wrlock_inline(pthread_rwlock_t *r)
{
	return rw_counted_fast_ok(QRW(r)) && rw_wrlock_fast_alg(QRW(r));
}

/* The counted general paths' first tries (entry.h). */
static inline int rw_rdlock_try(pthread_rwlock_t *r, bool missed)
{
	if (!missed && rw_rdlock_inline(r))
		return 0;
	return rw_rdlock(r, 1, CLOCK_REALTIME, NULL);
}

static inline int rw_wrlock_try(pthread_rwlock_t *r, bool missed)
{
	if (!missed && rw_wrlock_inline(r))
		return 0;
	return rw_wrlock(r, 1, CLOCK_REALTIME, NULL);
}

SHIM_LOCK_CALLS(pthread_rwlock_t, pthread_rwlock_rdlock, pthread_rwlock_tryrdlock,
		pthread_rwlock_timedrdlock, pthread_rwlock_clockrdlock,
		rw_rdlock_fast, rw_rdlock_fast_counted, rw_rdlock_finish,
		rw_rdlock, rw_rdlock_try,
		rw_rdlock_inline, LD_RWLOCK_READ,
		LOCKSTAT_RWLOCK_READ)

SHIM_LOCK_CALLS(pthread_rwlock_t, pthread_rwlock_wrlock, pthread_rwlock_trywrlock,
		pthread_rwlock_timedwrlock, pthread_rwlock_clockwrlock,
		rw_wrlock_fast, rw_wrlock_fast_counted, rw_wrlock_finish,
		rw_wrlock, rw_wrlock_try,
		rw_wrlock_inline, LD_RWLOCK_WRITE,
		LOCKSTAT_RWLOCK_WRITE)

static __attribute__((noinline)) int rw_unlock_general(pthread_rwlock_t *r)
{
	ready();
	SHIM_RELEASED(r);
	if ((qa_unlikely(shim_stats_on) || LOCKDEP_ON()) && rw_counted_fast_ok(QRW(r)) &&
	    rw_unlock_fast_alg(QRW(r)))
		return 0;
	return rw_unlock_told(r);
}

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *r)
{
	uint8_t f = qa_read(&shim_rwlock_fast);
	struct qrw *q = QRW(r);

	if (rw_fast_ok(f, q)) {
		/* Two copies of the inline path, so that the plain one keeps
		 * nothing live across it (no stack frame). */
		if (qa_unlikely(f & (SHIM_FAST_COUNT | SHIM_FAST_LOCKDEP))) {
			if (f & SHIM_FAST_COUNT)
				lockstat_release(r);
			else
				lockdep_unlocking(r, LD_RWLOCK_WRITE, LOCKDEP_PC());
			/* Told once: a lock the inline path cannot release
			 * (a waiter, another thread's write lock) takes the
			 * general release. */
			return rw_unlock_fast_alg(q) ? 0 : rw_unlock_told(r);
		}
		if (rw_unlock_fast_alg(q))
			return 0;
	}
	return SHIM_UNLOCK(r, false, LD_RWLOCK_WRITE,
			   rw_unlock_general(r));
}

/* The profile's deadlock watchdog (contention.h): the TP word names its
 * writer (its tid), the qrwlock's writer is in q->writer (its
 * pthread_self()); the rwsem's and glibc's acquisitions are on the
 * held-lock stacks. */
bool shim_rwlock_writer(const volatile void *r, bool peek, int32_t *tid, uint64_t *self)
{
	struct qrw q;

	if (shim_ralg != RALG_TP && shim_ralg != RALG_QRWLOCK)
		return false;
	if (peek) {
		if (!shim_peek(&q, r, sizeof(q)))
			return false;
	} else { /* the lock this thread is about to wait for */
		const struct qrw *o = (const struct qrw *)r;

		q.shared = qa_read(&o->shared);
		q.writer = qa_read(&o->writer);
		q.alg[0] = qa_read(&o->alg[0]);
	}
	if (q.shared)
		return false;
	if (shim_ralg == RALG_QRWLOCK) {
		*self = q.writer;
		return q.writer != 0;
	}
	/* The TP rwlock's word (qlock_tp_rwlock_t.val): its first 32 bits. */
	_Static_assert(offsetof(qlock_tp_rwlock_t, val) == 0, "the TP word first");
	uint32_t v;

	memcpy(&v, q.alg, sizeof(v));

	*tid = TP_RW_SHARED(v) ? 0 : (int32_t)TP_RW_WRITER(v);
	return *tid != 0;
}

_Static_assert(SHIM_RD_VIEW == RD_SLOTS, "shim_rd_view holds a table");

const void *shim_rd_table(void)
{
	return &rd_me;
}

bool shim_rd_read(const void *table, bool peek, struct shim_rd_view *v)
{
	struct rd_held h;

	if (!table)
		return false;
	if (peek) {
		if (!shim_peek(&h, table, sizeof(h)))
			return false;
	} else {
		h = *(const struct rd_held *)table;
	}
	v->n = h.n < RD_SLOTS ? h.n : RD_SLOTS;
	v->spill = h.spill;
	for (uint32_t i = 0; i < v->n; i++)
		v->lock[i] = (uintptr_t)h.lock[i];
	return true;
}

SHIM_GLIBC_ALIAS(pthread_rwlock_init, (pthread_rwlock_t *a, const pthread_rwlockattr_t *b), (a, b))
SHIM_GLIBC_ALIAS(pthread_rwlock_destroy, (pthread_rwlock_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_rwlock_rdlock, (pthread_rwlock_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_rwlock_tryrdlock, (pthread_rwlock_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_rwlock_wrlock, (pthread_rwlock_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_rwlock_trywrlock, (pthread_rwlock_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_rwlock_unlock, (pthread_rwlock_t *a), (a))
