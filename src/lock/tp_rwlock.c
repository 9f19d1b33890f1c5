/* SPDX-License-Identifier: MIT */
/*
 * TP futex reader-writer lock (the series' "support userspace reader/writer
 * locks" and "Group readers together in wait queue"), kernel side in user
 * space over FUTEX_WAIT/FUTEX_WAKE.  Shares the serial lock and policies
 * of tp_mutex.c (read that file's header first).
 *
 * Word encoding (rw->val):
 *	bit 31     W: WAITERS, set by the top waiter before it sleeps on the
 *	           word or when it asks for a hand-off; stops new readers
 *	           (writer preference) and sends unlocks to the slow path
 *	bit 30     S: SLEEPER, the top waiter sleeps on the word (or is about
 *	           to; set after W): the release that clears it wakes it
 *	           (OWNER_DIED in the series, unused here)
 *	bit 29     SH: SHARED, reader-owned; bits 0-23 count the readers
 *	bit 28     SU: SHARED_UNLOCK, the last reader owns the release
 *	bits 0-28  the writer's tid when SH is clear
 *
 * Transitions:
 *	0            -> SH+1           reader fast path (cmpxchg, acquire)
 *	SH+n         -> SH+n+1         reader fast path while no W/SU,
 *	                               n < MAX_READERS (else: wait, or fail)
 *	SH+n|W       -> SH+n+1|W       tryrdlock_unfair (not while SU;
 *	                               n < MAX_READERS)
 *	SH+n|W(|S)   -> SH+n+1|W(|S)   tryrdlock_join, n >= 1 (not while
 *	                               SU; n < MAX_READERS): never from 0
 *	SH+n(|W|S)   -> SH+n-1(|W|S)   read unlock, n > 1 (cmpxchg, release)
 *	SH+1         -> 0              last reader, no W (cmpxchg, release)
 *	SH+1|W(|S)   -> SH|W|SU(|S)    last reader with W (same cmpxchg): it
 *	                               alone finishes the release ...
 *	SH|W|SU(|S)  -> 0 | grant      ... freeing or handing off, then wakes
 *	                               if S was set
 *	                               (no SH+0: its count would let the next
 *	                               owner in before the last reader's
 *	                               second RMW, test_lifetime)
 *	0            -> tid            writer fast path (cmpxchg, acquire)
 *	tid          -> 0              writer fast unlock (cmpxchg, release)
 *	tid|W(|S)    -> 0 | grant      writer slow unlock, then wakes if S
 *	owned        -> owned|W        top waiter (not while SU)
 *	owned|W      -> owned|W|S      top waiter about to sleep
 *	owned|W|S    -> owned|W        top waiter spinning again
 *	misuse (reported, word unchanged): rdunlock of a word with no
 *	        reader counted (free, write-locked, or SU); wrunlock of a word that
 *	        is not the caller's tid
 *	grant = the top waiter's tid (writer) or SH+1 (reader), written
 *	        after claiming rw->handoff with xchg; W is dropped since the
 *	        top waiter is the only thread that sleeps on the word.
 *	A releasing RMW (the grant/free cmpxchg, or the count drop of a
 *	reader that is not the last) is the unlock's last access to the lock: what
 *	it returned says whether to wake, and the FUTEX_WAKE only names the
 *	address (the next owner may already have freed the lock).
 *
 * Other state: rw->serial (top waiter lock, tp_serial.h); rw->handoff
 * (0, or the top waiter's tid | HO_READER for a reader); rw->nval (bits
 * 8-31: a woken serial waiter's request for the serial lock,
 * tp_serial.h; bits 0-7 unused); rw->leader (reader
 * group leader's tid | LEADER_ASLEEP while it sleeps) and rw->rosq (the
 * group's OSQ).
 *
 * Reader grouping (seed 004, v4 16/20): the first reader that has to
 * queue becomes the group leader and queues on the serial lock; later
 * readers spin in the OSQ; its head retries the read lock while the leader
 * is awake.  When the lock goes shared (the leader got it, or any reader)
 * they take it one after another, each passing the OSQ head on.  A leader
 * that sleeps disbands the group: the spinners queue alone.  Leader and
 * spinners that got the lock count as read_group, readers that queued
 * alone as read_alone (tp-rwlock-nogroup: all of them alone).
 */
#include "core/misuse.h"
#include "core/osq.h"
#include "lock/tp_internal.h"
#include "qlock/tp_rwlock.h"

#define W    QLOCK_TP_RW_WAITERS
#define SH   QLOCK_TP_RW_SHARED
#define SU   QLOCK_TP_RW_SHARED_UNLOCK
#define CNT  QLOCK_TP_RW_COUNT_MASK
#define TIDM QLOCK_TP_RW_TID_MASK
#define S    TP_SLEEPER
#define CLS  QC_CLASS_tp_rwlock

#define HO_READER     0x80000000u /* rw->handoff: request by a reader */
#define LEADER_ASLEEP 0x80000000u /* rw->leader: the leader sleeps */
#define TP_GROUP_SPIN_NS 200000u  /* longest spin of a group member */

/* Reader grouping uses the OSQ of src/core/osq.c (0: build without it,
 * tp-rwlock then behaves as tp-rwlock-nogroup). */
#define TP_HAVE_OSQ 1

/* ---- readers ---------------------------------------------------------- */

/* One read-lock attempt as a new arrival (fast path, steal, group). */
static inline bool read_try(qlock_tp_rwlock_t *rw, bool check_handoff)
{
	uint32_t v = qa_read(&rw->val);

	while (tp_rw_reader_may_join(v)) {
		uint32_t n = v ? v + 1 : SH + 1;

		if (check_handoff && qa_read(&rw->handoff))
			return false;
		/* Acquire: pairs with the release of the last unlock. */
#ifndef QLOCK_MUTATE_TP_RWLOCK
		if (qa_try_cmpxchg_acquire(&rw->val, &v, n))
#else /* model-check mutation (tests/model): must be caught */
		if (qa_try_cmpxchg_relaxed(&rw->val, &v, n))
#endif
			return true;
	}
	return false;
}

QLOCK_API bool qlock_tp_rwlock_tryrdlock(qlock_tp_rwlock_t *rw)
{
	return read_try(rw, false);
}

/* A reader that outranks every waiting writer (POSIX's realtime readers)
 * joins past the waiter bits: SH+n(|bits 30-31) -> SH+n+1(|same), 0 ->
 * SH+1.  Not while SU: the last reader owns the release then.  A last
 * reader racing with us fails its cmpxchg and sees the count we added
 * (rdunlock); the waiter bits stay for the release that wakes the top
 * waiter. */
QLOCK_API bool qlock_tp_rwlock_tryrdlock_unfair(qlock_tp_rwlock_t *rw)
{
	uint32_t v = qa_read(&rw->val);

	while (v == 0 ||
	       ((v & (SH | SU)) == SH && (v & CNT) < QLOCK_TP_RWLOCK_MAX_READERS)) {
		/* Acquire: pairs with the release of the last unlock. */
		if (qa_try_cmpxchg_acquire(&rw->val, &v, v ? v + 1 : SH + 1))
			return true;
	}
	return false;
}

/* As tryrdlock_unfair, but only while readers hold the word (SH+n, n >= 1,
 * not SU): the pthread drop-in's reader after its bounded deferral to a
 * waiting writer. */
QLOCK_API bool qlock_tp_rwlock_tryrdlock_join(qlock_tp_rwlock_t *rw)
{
	uint32_t v = qa_read(&rw->val);

	while ((v & (SH | SU)) == SH && (v & CNT) != 0 &&
	       (v & CNT) < QLOCK_TP_RWLOCK_MAX_READERS) {
		/* Acquire: pairs with the release of the last unlock. */
		if (qa_try_cmpxchg_acquire(&rw->val, &v, v + 1))
			return true;
	}
	return false;
}

/* ---- the top waiter (holds rw->serial) -------------------------------- */

/* Writer: the word is free for us (0, or only our W|S). */
static inline bool wr_free(uint32_t v)
{
	return (v & ~(W | S)) == 0;
}

static int top_waiter(qlock_tp_rwlock_t *rw, uint32_t tid, bool reader,
		      const struct timespec *abs, clockid_t clk,
		      uint32_t *asleep)
{
	enum qc_op op = reader ? QC_OP_RLOCK : QC_OP_LOCK;
	uint64_t t0 = qc_now_ns(), now = t0, spin_until = t0;
	uint32_t last = ~0u, changes = 0, nsleep = 0, iter = 0;
	uint64_t spins = 0;
	bool ask = false, off_cpu = false;

	for (;;) {
		uint32_t v = qa_read_acquire(&rw->val), n;
		bool owner_off;

		if (ask && qa_read_acquire(&rw->handoff) == 0) {
			/* Claimed: wait for the grant (acquire pairs with
			 * the unlocker's release). */
			for (;; qa_cpu_relax()) {
				v = qa_read_acquire(&rw->val);
				if (reader ? (v & SH) && !(v & SU) && (v & CNT)
					   : (v & (SH | TIDM)) == tid)
					break;
			}
			break; /* the unlocker counted the hand-off */
		}
		if (reader ? (v & ~(W | S)) == 0 ||
			     ((v & SH) && !(v & SU) &&
			      (v & CNT) < QLOCK_TP_RWLOCK_MAX_READERS)
			   : wr_free(v)) {
			/* W and S were ours (only the top waiter sets them):
			 * drop them. */
			n = !reader ? tid : (v & SH) ? (v + 1) & ~(W | S) : SH + 1;
			if (qa_cmpxchg_acquire(&rw->val, v, n) == v) {
				if (ask)
					qa_write(&rw->handoff, 0u);
				break;
			}
			continue;
		}
		if (v & SU) { /* the last reader is releasing it */
			qa_cpu_relax();
			continue;
		}
		if (++iter % TP_CLOCK_EVERY == 0 || (v & ~W) != (last & ~W)) {
			/* "Owner": the writer's tid, or the reader count. */
			bool changed = (v & ~W) != (last & ~W);

			now = qc_now_ns();
			if (changed && changes++ < TP_MAX_OWNER_CHANGES)
				spin_until = now + ((v & SH) ? TP_READER_SPIN_NS
							     : qc_owner_spin_budget());
			last = v;
			if (tp_timed_out(abs, clk)) {
				uint32_t me = tid | (reader ? HO_READER : 0);

				if (ask && qa_cmpxchg(&rw->handoff, me, 0u) != me)
					continue; /* claimed: take the grant */
				qc_event_inc(CLS, QC_EV_timeout);
				if (spins)
					qc_event_add(CLS, QC_EV_spin, spins);
				if (off_cpu)
					tp_count_off_cpu_wait(CLS);
				return ETIMEDOUT;
			}
			if (!ask && (now - t0 >= qc_handoff_ns() ||
				     nsleep >= TP_HANDOFF_SLEEPS)) {
				qa_write(&rw->handoff,
					 tid | (reader ? HO_READER : 0));
				ask = true;
			}
		}
		owner_off = !(v & SH) &&
			    tp_owner_off_cpu(v & QLOCK_TP_RW_TID_MASK);
		off_cpu |= owner_off;
		if (tp_top_wait(&rw->val, v, ask,
				now < spin_until && !owner_off, &spins, NULL,
				abs, clk, CLS, op, asleep, LEADER_ASLEEP) ==
		    TP_WAIT_AGAIN)
			continue;
		nsleep++;
		iter = TP_CLOCK_EVERY - 1;
		now = qc_now_ns();
		spin_until = now + qc_owner_spin_budget();
		changes = 0;
	}
	/* Learn from a spin only, as the TP mutex does (core/spin.h). */
	if (spins && !off_cpu && !ask)
		qc_owner_spin_learn(nsleep == 0);
	if (spins)
		qc_event_add(CLS, QC_EV_spin, spins);
	if (off_cpu)
		tp_count_off_cpu_wait(CLS);
	return 0;
}

/* ---- reader slow path ------------------------------------------------- */

/*
 * Spin as a member of the reader group (see the top).  Returns 1 with the
 * read lock, 0 to queue (*leader set when this reader leads a group).
 */
static int group_spin(qlock_tp_rwlock_t *rw, uint32_t tid,
		      const struct timespec *abs, clockid_t clk, bool *leader)
{
	struct qc_osq *osq = (struct qc_osq *)&rw->rosq;
	uint64_t until = qc_now_ns() + TP_GROUP_SPIN_NS;
	uint32_t l = qa_read(&rw->leader), iter = 0;
	int ret = 0;

	if (l == 0 && qa_cmpxchg(&rw->leader, 0u, tid) == 0) {
		*leader = true;
		return 0;
	}
#if !TP_HAVE_OSQ
	(void)osq; (void)abs; (void)clk; (void)iter; (void)ret; (void)until;
	return 0;
#else
	if ((l & LEADER_ASLEEP) || !qc_osq_lock(osq, until))
		return 0;
	for (;; qa_cpu_relax()) {
		if (read_try(rw, true)) {
			ret = 1;
			break;
		}
		l = qa_read(&rw->leader);
		if (l == 0) {
			if (qa_cmpxchg(&rw->leader, 0u, tid) == 0) {
				*leader = true;
				break;
			}
			continue;
		}
		if (l & LEADER_ASLEEP)
			break; /* disbanded: queue alone */
		if (++iter % TP_CLOCK_EVERY == 0 &&
		    (qc_now_ns() >= until || tp_timed_out(abs, clk)))
			break;
	}
	qc_osq_unlock(osq);
	return ret;
#endif
}

int tp_rwlock_rdlock_common(qlock_tp_rwlock_t *rw, bool group,
			    const struct timespec *abs, clockid_t clk)
{
	uint32_t tid = tp_self_tid();
	bool leader = false;
	uint32_t *asleep;
	int err;

	qc_event_inc(CLS, QC_EV_slowpath);
	if (read_try(rw, true)) {
		qc_event_inc(CLS, QC_EV_steal);
		return 0;
	}
	if (group && group_spin(rw, tid, abs, clk, &leader)) {
		qc_event_inc(CLS, QC_EV_read_group);
		return 0;
	}
	asleep = leader ? &rw->leader : NULL;
	err = tp_serial_lock(&rw->serial, &rw->nval, abs, clk, CLS,
			     QC_OP_RLOCK, asleep, LEADER_ASLEEP, 1u);
	if (!err) {
		err = top_waiter(rw, tid, true, abs, clk, asleep);
		/* The lock is shared now (or we gave up): the group's
		 * spinners take it, or the next of them leads. */
		if (leader)
			qa_write(&rw->leader, 0u);
		tp_serial_unlock(&rw->serial, &rw->nval, CLS, QC_OP_RLOCK);
	} else {
		qc_event_inc(CLS, QC_EV_timeout);
		if (leader)
			qa_write(&rw->leader, 0u);
	}
	if (!err)
		qc_event_inc(CLS, leader ? QC_EV_read_group : QC_EV_read_alone);
	return err;
}

QLOCK_API void qlock_tp_rwlock_rdlock(qlock_tp_rwlock_t *rw)
{
	if (qa_likely(tp_rwlock_rdlock_fast(rw)))
		return;
	tp_rwlock_rdlock_common(rw, true, NULL, CLOCK_MONOTONIC);
}

QLOCK_API int qlock_tp_rwlock_timedrdlock(qlock_tp_rwlock_t *rw,
					  const struct timespec *abs,
					  clockid_t clk)
{
	int err = tp_check_deadline(abs, clk);

	if (err)
		return err;
	if (read_try(rw, false))
		return 0;
	return tp_rwlock_rdlock_common(rw, true, abs, clk);
}

/* ---- unlocks ---------------------------------------------------------- */

/*
 * Release the word `v` that only we may change (writer's tid|W, or the
 * last reader's SH|W|SU; the top waiter may add or drop S): hand it to the
 * top waiter if it asked, else free it; then wake the top waiter if the
 * releasing cmpxchg found it asleep.  No access to the lock after it.
 */
static void release_slow(qlock_tp_rwlock_t *rw, uint32_t v, enum qc_op op)
{
	uint32_t h = qa_xchg(&rw->handoff, 0u);
	uint32_t n = 0;

	if (h)
		n = (h & HO_READER) ? SH + 1 : (h & TIDM);
	/* Release: pairs with the next owner's acquire. */
	while (!qa_try_cmpxchg_release(&rw->val, &v, n))
		;
	qc_test_released(rw);
	if (h)
		qc_event_inc(CLS, QC_EV_handoff);
	if (v & S) {
		qc_event_inc(CLS, QC_EV_wake);
#ifndef QLOCK_MUTATE_WAKE_TP_RWLOCK /* the sleeping top waiter's wake */
		qc_futex_wake(&rw->val, 1, CLS, op);
#else /* model-check mutation (tests/model): must be caught */
		(void)op;
#endif
	}
}

/* The word a read unlock of v (that counts a reader) leaves.  The last
 * reader leaves no SH+0: a zero count would let the next owner in (a
 * writer, or a new reader) and free the lock before our next access, so it
 * frees the word, or with W claims the release (SU), in the same RMW that
 * drops its count. */
static inline uint32_t rd_unlocked(uint32_t v)
{
	if ((v & CNT) != 1)
		return v - 1;
	return (v & (W | S)) ? (v - 1) | SU : 0;
}

QLOCK_API void qlock_tp_rwlock_rdunlock(qlock_tp_rwlock_t *rw)
{
	uint32_t v, n;

	if (qa_likely(tp_rwlock_rdunlock_fast(rw)))
		return;
	v = qa_read(&rw->val);

	do {
		if (qa_unlikely(!(v & SH) || (v & CNT) == 0)) {
			/* no reader counted: free, write-locked, or SU */
			qc_misuse("qlock_tp_rwlock_rdunlock",
				  "the lock is not read-locked", rw);
			return;
		}
		n = rd_unlocked(v);
		/* Release: our critical section before the count drop; a
		 * last reader's release_slow continues the sequence. */
	} while (!qa_try_cmpxchg_release(&rw->val, &v, n));
	if (n & SU) {
		release_slow(rw, n, QC_OP_RUNLOCK);
		return;
	}
	qc_test_released(rw);
}

/* ---- writers ---------------------------------------------------------- */

static int wr_slow(qlock_tp_rwlock_t *rw, const struct timespec *abs,
		   clockid_t clk)
{
	uint32_t tid = tp_self_tid();
	uint32_t v = qa_read(&rw->val);
	int err;

	qc_event_inc(CLS, QC_EV_slowpath);
	if (!qa_read(&rw->handoff) && ((v & ~W) == 0 || v == SH) &&
	    qa_cmpxchg_acquire(&rw->val, v, tid | (v & W)) == v) {
		qc_event_inc(CLS, QC_EV_steal);
		return 0;
	}
	err = tp_serial_lock(&rw->serial, &rw->nval, abs, clk, CLS,
			     QC_OP_LOCK, NULL, 0, 1u);
	if (err) {
		qc_event_inc(CLS, QC_EV_timeout);
		return err;
	}
	err = top_waiter(rw, tid, false, abs, clk, NULL);
	tp_serial_unlock(&rw->serial, &rw->nval, CLS, QC_OP_LOCK);
	return err;
}

QLOCK_API void qlock_tp_rwlock_wrlock(qlock_tp_rwlock_t *rw)
{
	if (qa_likely(tp_rwlock_wrlock_fast(rw, tp_self_tid())))
		return;
	wr_slow(rw, NULL, CLOCK_MONOTONIC);
}

QLOCK_API bool qlock_tp_rwlock_trywrlock(qlock_tp_rwlock_t *rw)
{
	uint32_t tid = tp_self_tid();
	uint32_t v = qa_read(&rw->val);

	if (v != 0 && v != SH)
		return false;
	return qa_cmpxchg_acquire(&rw->val, v, tid) == v;
}

QLOCK_API int qlock_tp_rwlock_timedwrlock(qlock_tp_rwlock_t *rw,
					  const struct timespec *abs,
					  clockid_t clk)
{
	int err = tp_check_deadline(abs, clk);

	if (err)
		return err;
	if (qa_likely(tp_rwlock_wrlock_fast(rw, tp_self_tid())))
		return 0;
	return wr_slow(rw, abs, clk);
}

QLOCK_API void qlock_tp_rwlock_wrunlock(qlock_tp_rwlock_t *rw)
{
	uint32_t tid = tp_self_tid();
	uint32_t v = tp_rwlock_wrunlock_fast(rw, tid);

	if (qa_likely(v == tid))
		return;
	if (qa_unlikely((v & (SH | TIDM)) != tid) &&
	    ((v & SH) || !tp_tid_forked_self(v & TIDM))) {
		qc_misuse("qlock_tp_rwlock_wrunlock",
			  (v & (SH | TIDM)) && !(v & SH)
				  ? "the lock is write-locked by another thread"
				  : "the lock is not write-locked",
			  rw);
		return;
	}
	release_slow(rw, v, QC_OP_UNLOCK);
}

QLOCK_API uint32_t qlock_tp_rwlock_writer(const qlock_tp_rwlock_t *rw)
{
	uint32_t v = qa_read(&rw->val);

	return (v & SH) ? 0 : v & TIDM;
}

QLOCK_API uint32_t qlock_tp_rwlock_readers(const qlock_tp_rwlock_t *rw)
{
	uint32_t v = qa_read(&rw->val);

	return (v & SH) ? v & CNT : 0;
}
