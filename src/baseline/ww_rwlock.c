/* SPDX-License-Identifier: MIT */
/*
 * WW futex rwlock: perf bench futex's wait-wake rwlock baseline, after
 * locklessinc.com's "sleeping read-write locks": one lock word, and two
 * event counts that sleepers wait on, so the lock word never has to be a
 * futex word and readers and writers sleep apart.
 *
 * Lock word (uint32_t `lock`):
 *   bit  0      WR_LOCKED  a writer holds the lock
 *   bit  1      CONTEND    someone may be asleep on an event count: the
 *                          thread that clears it must bump both counts
 *                          and wake
 *   bits 2-7    zero       (bits 0-7 are the "writer byte")
 *   bits 8-31   readers    number of readers holding the lock
 * Event counts (futex words): `read_ec` for readers, `write_ec` for
 * writers; only ever incremented.  `wwait` counts writers in their slow
 * path (writer-preferring mode only).
 *
 * Transitions:
 *   rdlock:   cmpxchg readers+1 while reader_may_enter(): no writer holds
 *             the lock and, writer-preferring, no writer waits (wwait 0)
 *   wrlock:   cmpxchg WR_LOCKED (keeping CONTEND) while no writer and no
 *             reader holds the lock
 *   wait:     snapshot the event count (acquire), then make sure CONTEND
 *             is set (a cmpxchg on the very value that blocked us, so it
 *             fails if the lock changed), then FUTEX_WAIT(ec, snapshot)
 *   wrunlock: fetch_andnot(WR_LOCKED | CONTEND); if CONTEND was set, wake
 *   rdunlock: fetch_sub(readers); the last reader out with CONTEND set
 *             clears it and wakes
 *   wake:     ++read_ec, ++write_ec, wake all readers and one writer
 *
 * No lost wake-ups: a sleeper's snapshot is read before its CONTEND
 * cmpxchg, and whoever clears CONTEND does so by an RMW that reads that
 * cmpxchg (or later) and bumps the counts after it, so FUTEX_WAIT either
 * sees a changed count or is queued before the wake.  Only one writer is
 * woken, so a writer that has slept acquires with CONTEND kept set (the
 * WW mutex's "lock as 2" rule: others may still sleep), and a writer that
 * times out after sleeping passes a wake-up on to the next writer.
 *
 * Reader-preferring (perf bench's default): readers enter whenever no
 * writer holds the lock, so a steady stream of readers starves writers,
 * by design (LR_MAY_STARVE_WRITERS).  Writer-preferring (`-W`): readers
 * also hold back while any writer waits, so a steady stream of writers
 * starves readers (LR_MAY_STARVE_READERS), and a reader must not take
 * the lock recursively.
 * Futex calls count under class ww-rwlock, ops RLOCK / RUNLOCK / LOCK /
 * UNLOCK.
 */
#include "baseline.h"

#include <errno.h>
#include <limits.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"

#define WR_LOCKED 0x1u
#define CONTEND   0x2u
#define RD_ONE    0x100u
#define RD_MASK   0xffffff00u

#define CLS QC_CLASS_ww_rwlock

void ww_rwlock_init(struct ww_rwlock *l, bool prefer_writer)
{
	qa_write(&l->lock, 0);
	qa_write(&l->read_ec, 0);
	qa_write(&l->write_ec, 0);
	qa_write(&l->wwait, 0);
	qa_write(&l->wpref, prefer_writer ? 1u : 0u);
}

static bool reader_may_enter(struct ww_rwlock *l, uint32_t v)
{
	if (v & WR_LOCKED)
		return false;
	/* Relaxed: preference is a hint; see rdlock_wait() for the one
	 * place where missing a change of wwait would matter. */
	return !qa_read(&l->wpref) || qa_read(&l->wwait) == 0;
}

static bool writer_may_enter(uint32_t v)
{
	return !(v & (WR_LOCKED | RD_MASK));
}

/* Bump both event counts and wake every reader and one writer.  Called
 * only by the thread whose RMW cleared CONTEND. */
static void wake_sleepers(struct ww_rwlock *l, enum qc_op op)
{
	qc_event_inc(CLS, QC_EV_wake);
	/* Seq-cst: ordered after the RMW that cleared CONTEND, so a sleeper
	 * whose snapshot predates that RMW sees a new count. */
	(void)qa_fetch_add(&l->read_ec, 1);
	(void)qa_fetch_add(&l->write_ec, 1);
#ifndef QLOCK_MUTATE_WAKE_WW_RWLOCK /* the sleeping readers' wake */
	(void)qc_futex_wake(&l->read_ec, INT_MAX, CLS, op);
#endif
	(void)qc_futex_wake(&l->write_ec, 1, CLS, op);
}

/* Clear CONTEND; wake if it was set (whoever clears it must wake). */
static void clear_contend_and_wake(struct ww_rwlock *l, enum qc_op op)
{
	/* Seq-cst RMW: reads every sleeper's CONTEND cmpxchg before it. */
	if (qa_fetch_andnot(&l->lock, CONTEND) & CONTEND)
		wake_sleepers(l, op);
}

/*
 * Make sure CONTEND is set in the lock word, as seen in *v.  False when
 * the word changed under us (*v is refreshed): look again.
 */
static bool announce_sleeper(struct ww_rwlock *l, uint32_t *v)
{
	if (*v & CONTEND)
		return true;
	/* Seq-cst: pairs with the RMW that will clear CONTEND (wrunlock,
	 * rdunlock, clear_contend_and_wake), which then wakes us. */
	return qa_try_cmpxchg(&l->lock, v, *v | CONTEND);
}

/* ---- readers ------------------------------------------------------------ */

bool ww_rwlock_tryrdlock(struct ww_rwlock *l)
{
	uint32_t v = qa_read(&l->lock);

	while (reader_may_enter(l, v)) {
		/* Acquire: pairs with the release part of the unlock RMWs. */
		if (qa_try_cmpxchg_acquire(&l->lock, &v, v + RD_ONE))
			return true;
	}
	return false;
}

static int rdlock_wait(struct ww_rwlock *l, const struct timespec *abs)
{
	qc_event_inc(CLS, QC_EV_slowpath);
	for (;;) {
		/* Acquire: the snapshot is taken before we look at the lock,
		 * and pairs with the count bump in wake_sleepers(). */
		uint32_t seq = qa_read_acquire(&l->read_ec);
		uint32_t v = qa_read(&l->lock);
		int err;

		if (reader_may_enter(l, v)) {
			if (qa_try_cmpxchg_acquire(&l->lock, &v, v + RD_ONE))
				return 0;
			continue;
		}
		if (!announce_sleeper(l, &v))
			continue;
		/*
		 * Blocked only by a waiting writer (writer-preferring), not
		 * by the lock: that writer may have come and gone before
		 * CONTEND was set, with nobody left to wake us.  Our seq-cst
		 * cmpxchg read the writer's unlock or timeout RMW on the
		 * word, so a re-read of wwait sees its decrement.
		 */
		if (!(v & WR_LOCKED) && qa_read(&l->wwait) == 0)
			continue;
		err = qc_futex_wait(&l->read_ec, seq, abs, CLOCK_MONOTONIC,
				    CLS, QC_OP_RLOCK);
		qc_event_inc(CLS, QC_EV_sleep);
		if (err) {
			qc_event_inc(CLS, QC_EV_timeout);
			return err;
		}
	}
}

void ww_rwlock_rdlock(struct ww_rwlock *l)
{
	if (qa_likely(ww_rwlock_tryrdlock(l)))
		return;
	(void)rdlock_wait(l, NULL);
}

int ww_rwlock_timedrdlock(struct ww_rwlock *l, const struct timespec *abs)
{
	if (qa_likely(ww_rwlock_tryrdlock(l)))
		return 0;
	if (!qc_timespec_valid(abs))
		return EINVAL;
	return rdlock_wait(l, abs);
}

void ww_rwlock_rdunlock(struct ww_rwlock *l)
{
	/* Seq-cst (release for the critical section; acquire so a wake we
	 * issue is ordered after the sleeper's CONTEND cmpxchg we read). */
	uint32_t v = qa_fetch_sub(&l->lock, RD_ONE);

	if ((v & RD_MASK) == RD_ONE && (v & CONTEND))
		clear_contend_and_wake(l, QC_OP_RUNLOCK);
}

/* ---- writers ------------------------------------------------------------ */

/* Take the lock if it is free; `keep` are bits to set besides WR_LOCKED. */
static bool wr_try_enter(struct ww_rwlock *l, uint32_t *v, uint32_t keep)
{
	while (writer_may_enter(*v)) {
		/* Acquire: pairs with the release part of the unlock RMWs. */
		if (qa_try_cmpxchg_acquire(&l->lock, v,
					   *v | WR_LOCKED | keep))
			return true;
	}
	return false;
}

bool ww_rwlock_trywrlock(struct ww_rwlock *l)
{
	uint32_t v = qa_read(&l->lock);

	return wr_try_enter(l, &v, 0);
}

/* A timed-out writer leaves: undo its wait and pass on any wake-up. */
static void wrlock_give_up(struct ww_rwlock *l, bool slept)
{
	qc_event_inc(CLS, QC_EV_timeout);
	if (qa_read(&l->wpref)) {
		/* Seq-cst, then the RMW below: a reader that held back for
		 * us and set CONTEND is woken, or sees wwait drop. */
		(void)qa_fetch_sub(&l->wwait, 1);
		clear_contend_and_wake(l, QC_OP_LOCK);
	}
	if (slept) {
		/* We may have taken the one writer wake-up: hand it on. */
		(void)qa_fetch_add(&l->write_ec, 1);
		(void)qc_futex_wake(&l->write_ec, 1, CLS, QC_OP_LOCK);
	}
}

static int wrlock_wait(struct ww_rwlock *l, const struct timespec *abs)
{
	bool slept = false;

	qc_event_inc(CLS, QC_EV_slowpath);
	if (qa_read(&l->wpref))
		(void)qa_fetch_add(&l->wwait, 1); /* seq-cst: readers see it */
	for (;;) {
		/* Acquire: snapshot before looking at the lock; pairs with
		 * the count bumps in wake_sleepers()/wrlock_give_up(). */
		uint32_t seq = qa_read_acquire(&l->write_ec);
		uint32_t v = qa_read(&l->lock);
		int err;

		if (wr_try_enter(l, &v, slept ? CONTEND : 0)) {
			if (qa_read(&l->wpref))
				(void)qa_fetch_sub(&l->wwait, 1);
			return 0;
		}
		if (!announce_sleeper(l, &v))
			continue;
		err = qc_futex_wait(&l->write_ec, seq, abs, CLOCK_MONOTONIC,
				    CLS, QC_OP_LOCK);
		qc_event_inc(CLS, QC_EV_sleep);
		slept = true;
		if (err) {
			wrlock_give_up(l, slept);
			return err;
		}
	}
}

void ww_rwlock_wrlock(struct ww_rwlock *l)
{
	if (qa_likely(ww_rwlock_trywrlock(l)))
		return;
	(void)wrlock_wait(l, NULL);
}

int ww_rwlock_timedwrlock(struct ww_rwlock *l, const struct timespec *abs)
{
	if (qa_likely(ww_rwlock_trywrlock(l)))
		return 0;
	if (!qc_timespec_valid(abs))
		return EINVAL;
	return wrlock_wait(l, abs);
}

void ww_rwlock_wrunlock(struct ww_rwlock *l)
{
	/* Seq-cst (release for the critical section; acquire so the wake is
	 * ordered after any sleeper's CONTEND cmpxchg we read). */
#ifndef QLOCK_MUTATE_WW_RWLOCK
	if (qa_fetch_andnot(&l->lock, WR_LOCKED | CONTEND) & CONTEND)
#else /* model-check mutation (tests/model): must be caught */
	if (qa_fetch_andnot_relaxed(&l->lock, WR_LOCKED | CONTEND) & CONTEND)
#endif
		wake_sleepers(l, QC_OP_UNLOCK);
}
