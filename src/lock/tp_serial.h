/* SPDX-License-Identifier: MIT */
/*
 * The TP locks' serialisation lock: the lock whose holder is a TP lock's
 * *top waiter* (tp_mutex.c, tp_rwlock.c, tp_cond.c; its model test is
 * tests/model/tp_serial.c).  Not installed.
 *
 * The kernel series did the slow path inside new FUTEX_LOCK/FUTEX_UNLOCK
 * operations, with a per-futex `futex_state` whose kernel mutex serialised
 * the waiters.  Here everything the kernel kept in futex_state lives in the
 * lock object next to the futex word, and the kernel mutex is replaced by
 * the "serial" word below: a small wait-wake lock whose holder is the *top
 * waiter* (the only waiter allowed to spin on the lock owner and to sleep
 * on the lock word itself).
 *
 * serial word (one per lock):
 *	0  free: no top waiter
 *	1  held by the top waiter, nobody sleeps on it
 *	2  held, and waiters may sleep on it (the release wakes one)
 *
 *	lock:    cmpxchg 0 -> 1; else bounded spin retrying it (the
 *	         mutex's bound adapts, tp_serial_spin_learn()); else
 *	         xchg 2 until it returned 0, sleeping on 2 in between
 *	unlock:  xchg 0; FUTEX_WAKE(1) if it was 2
 *
 * The serial lock barges (like the kernel mutex's optimistic spinning), so
 * a waiter queued on it is not FIFO; what bounds the wait of the *lock* is
 * the hand-off from the lock's unlocker to the top waiter (see the lock
 * files).  A woken serial sleeper takes it with 2 (it cannot know whether
 * others sleep), costing at most one spare wake-up per sleep episode.
 * Invariant: while anybody sleeps on the serial word, it is 2 or a thread
 * that will store 2 (xchg) is awake.  The condition variable keeps it when
 * it requeues waiters onto the word (tp_cond.c).
 *
 * Hand-off of the serial lock (the seed relies on the kernel mutex being
 * starvation free, which it is through its hand-off since 4.10).  Without
 * it, running threads re-take the serial lock as they come back, and a
 * woken sleeper nearly always finds it taken again: on 2 CPUs at 16
 * threads the slowest thread got 2-11% of the mean rate.  As the
 * kernel mutex's first waiter does after one wake-up that did not get it,
 * a sleeper woken from the serial word that finds it taken asks for it:
 *	ho word:  bits 8-31 (TP_HO_SHIFT) 0 no request, else the requester's
 *	          tid; bits 0-7 are kept as they are by this protocol (the
 *	          mutex keeps its serial-lock spin there,
 *	          tp_serial_spin_learn(); the word is the lock's `nval`,
 *	          which the lock word's SLEEPER bit replaced, and the mutex
 *	          must stay 16 bytes for the pthread drop-in)
 *	request:  cmpxchg ho's request 0 -> tid, then cmpxchg serial 0 -> 2
 *	          (if that succeeds the lock is ours: request back to 0); else
 *	          futex-wait on ho until the request is no longer our tid
 *	release:  xchg serial 0, then read ho; a request found: cmpxchg serial
 *	          0 -> the old value (taking it back for the requester;
 *	          sleepers on the serial word stay counted), clear the request
 *	          (release), wake ho.  If the request is gone by then
 *	          (withdrawn, or served by another releaser while we were
 *	          preempted), release again and look once more: the lock is
 *	          never held for nobody.
 * Both sides do a fully ordered RMW and then read the other's word (a
 * Dekker pair): the releaser sees the request, or the requester sees the
 * lock free.  If both do, the two cmpxchg's on serial decide.  New arrivals
 * do not barge in while a request is pending.
 *
 * The mutex's top waiter may keep the serial lock while it owns the mutex
 * (its SERIAL bit, tp_mutex.c) and release it in its unlock: the release
 * is then split (tp_serial_release(), the lock's own release, then
 * tp_serial_wake()), so that the thread it wakes does not run before the
 * mutex is free.
 */
#ifndef QLOCK_LOCK_TP_SERIAL_H
#define QLOCK_LOCK_TP_SERIAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"
#include "lock/tp_tid.h"
#include "qlock/tp_mutex.h"

#define TP_HO_SHIFT 8
#define TP_HO_LOW   ((1u << TP_HO_SHIFT) - 1)

/*
 * The serial lock's hand-off request (see the top of this file): 0 with
 * the serial lock ours, ETIMEDOUT (request withdrawn), or EAGAIN when
 * another waiter's request is pending.
 */
static inline int tp_serial_request(uint32_t *s, uint32_t *ho,
				    const struct timespec *abs, clockid_t clk,
				    enum qc_class cls, enum qc_op op,
				    uint32_t *asleep, uint32_t asleep_bit)
{
	uint32_t tid = tp_self_tid(), w = qa_read(ho);
	int err;

	do {
		if (w >> TP_HO_SHIFT)
			return EAGAIN;
	} while (!qa_try_cmpxchg(ho, &w, w | tid << TP_HO_SHIFT));
	qc_event_inc(cls, QC_EV_tp_serial_handoff);
	/* Fully ordered, after the request: Dekker with the release. */
	if (qa_cmpxchg(s, 0u, 2u) == 0) {
		/* Ours already; nobody hands off a lock it does not hold. */
		qa_fetch_andnot(ho, ~TP_HO_LOW);
		return 0;
	}
	for (;;) {
		/* Acquire pairs with the releaser's release of ho. */
#ifndef QLOCK_MUTATE_TP_SERIAL
		w = qa_read_acquire(ho);
#else /* model-check mutation (tests/model): must be caught */
		w = qa_read(ho);
#endif
		if (w >> TP_HO_SHIFT != tid)
			return 0;
		qc_event_inc(cls, QC_EV_sleep);
		if (asleep)
			qa_fetch_or(asleep, asleep_bit);
		err = qc_futex_wait(ho, w, abs, clk, cls, op);
		if (asleep)
			qa_fetch_andnot(asleep, asleep_bit);
		if (err != ETIMEDOUT)
			continue;
		w = qa_read_acquire(ho); /* as above, if it was handed */
		while (w >> TP_HO_SHIFT == tid)
			if (qa_try_cmpxchg(ho, &w, w & TP_HO_LOW))
				return ETIMEDOUT;
		return 0; /* handed to us meanwhile */
	}
}

/* May a thread that has not slept on the word take it now? */
static inline bool tp_serial_no_request(uint32_t *ho)
{
	return !(qa_read(ho) >> TP_HO_SHIFT);
}

/*
 * Take the serial lock.  `asleep`, when not NULL, is a word whose bit
 * `asleep_bit` is set before this thread sleeps (a reader group leader
 * tells its group to disband) and cleared when it runs again.  `ho` is the
 * hand-off request word.  `take` is the value a free word is taken with (2
 * for a condition-variable waiter, whose release must wake the next
 * requeued sleeper).  Returns 0 or ETIMEDOUT.  The acquire pairs with the
 * release in tp_serial_unlock(): the next top waiter sees the previous
 * one's writes to the lock's state (its hand-off request withdrawn, ...).
 */
/*
 * The lock word a serial-lock waiter watches while it spins, so that it
 * stops spinning when the queue ahead of it cannot move soon: the top
 * waiter sleeps (SLEEPER), or the owner is off the CPU
 * (tp_owner_off_cpu(); `shared` marks a reader-owned word, whose owner
 * field is a count).  NULL val: no watch.  Read before the first spin and
 * then every TP_SERIAL_WATCH spins only, to keep the spinner off the
 * lock's cache line.  The first read is there for owners that hold the
 * lock while they yield or sleep (sysbench threads): the queue is then
 * stalled from the start, and waiting for the 32nd spin to see it was
 * nearly all of such a waiter's spinning.  `off_cpu_seen`, when not
 * NULL, is set when the watch stopped the spin for an owner off the CPU
 * (the mutex's SERIAL policy, tp_mutex.c).
 */
struct tp_watch {
	const uint32_t *val;
	uint32_t tid_mask, shared;
	bool *off_cpu_seen;
	bool adapt; /* the spin adapts (tp_serial_spin_learn()) */
};
#define TP_SERIAL_WATCH 32

static inline bool tp_watch_stalled(const struct tp_watch *w, uint32_t spent)
{
#ifdef QLOCK_MODEL
	(void)w;
	(void)spent;
	return false; /* a hint for the spin only: nothing to model */
#else
	uint32_t v;

	if (!w || spent % TP_SERIAL_WATCH != 0)
		return false;
	v = qa_read(w->val);
	/* The owner first: a sleeping top waiter must not hide it. */
	if (!(v & w->shared) && tp_owner_off_cpu(v & w->tid_mask)) {
		if (w->off_cpu_seen)
			*w->off_cpu_seen = true;
		return true;
	}
	return v & QLOCK_TP_SLEEPER;
#endif
}

/*
 * The serial-lock spin adapts per lock when the watch asks for it (the
 * mutex), as the top waiter's owner spin adapts per thread (tp_mutex.c):
 * a spin that ran out of budget halves the lock's next one, down to 1/64
 * of QLOCK_SPIN_LIMIT (8 of the default 512 pauses), and a spin that got
 * the lock doubles it back.  A spin the watch stopped teaches nothing.
 * `serial` is held for as long as its holder waits as top waiter, so where
 * that wait ends in a sleep (a preempted owner, or one that yields while
 * holding without the hint seeing it) each such spin is CPU spent for
 * nothing, which glibc's mutex never spends.
 *
 * Per lock, not per thread: a per-thread budget let the threads whose
 * spins succeeded keep spinning and winning the barging serial lock over
 * those whose spins had failed, which then slept sooner and failed more
 * (the drop-in map's 32-thread cells: docs/tp-locks.md).  The shift is
 * kept in the low bits of the hand-off request word (TP_HO_LOW, otherwise
 * unused), changed by a single relaxed cmpxchg that may lose a race (the
 * shift is a hint; an RMW keeps the request's release sequence intact),
 * and only when it changes.
 * A requester asleep on that word sees a changed value as a spurious
 * wake-up and sleeps again.
 */
#define TP_SERIAL_SHIFT_MASK 7u
#define TP_SERIAL_SHIFT_MAX 6u
_Static_assert(TP_SERIAL_SHIFT_MASK <= TP_HO_LOW, "shift in the low bits");

static inline uint32_t tp_serial_spin_shift(const struct tp_watch *w,
					    uint32_t *ho)
{
	return w && w->adapt ? qa_read(ho) & TP_SERIAL_SHIFT_MASK : 0;
}

static inline void tp_serial_spin_learn(const struct tp_watch *w,
					uint32_t *ho, bool got)
{
	uint32_t v, sh;

	if (!w || !w->adapt)
		return;
	v = qa_read(ho);
	sh = v & TP_SERIAL_SHIFT_MASK;
	if (got ? sh == 0 : sh >= TP_SERIAL_SHIFT_MAX)
		return;
	qa_cmpxchg_relaxed(ho, v, got ? v - 1 : v + 1);
}

static inline int tp_serial_lock_watch(uint32_t *s, uint32_t *ho,
				       const struct timespec *abs,
				       clockid_t clk, enum qc_class cls,
				       enum qc_op op, uint32_t *asleep,
				       uint32_t asleep_bit, uint32_t take,
				       const struct tp_watch *watch)
{
	struct qc_spinner sp;
	bool woken = false;
	int err;

	if (take == 1 && qa_read(s) == 0 && tp_serial_no_request(ho) &&
	    qa_cmpxchg_acquire(s, 0u, 1u) == 0)
		return 0;
	qc_spinner_init(&sp);
	sp.left >>= tp_serial_spin_shift(watch, ho);
	while (!tp_watch_stalled(watch, sp.spent)) {
		if (!qc_spin_continue(&sp)) {
			tp_serial_spin_learn(watch, ho, false);
			break;
		}
		if (qa_read(s) == 0 && tp_serial_no_request(ho) &&
		    qa_cmpxchg_acquire(s, 0u, take) == 0) {
			tp_serial_spin_learn(watch, ho, true);
			goto out;
		}
	}
	for (;;) {
		if (qa_xchg_acquire(s, 2u) == 0)
			goto out;
		if (woken) {
			/* Woken and beaten to it: ask for a hand-off. */
			err = tp_serial_request(s, ho, abs, clk, cls, op,
						asleep, asleep_bit);
			if (err != EAGAIN) {
				qc_spin_account(&sp, cls);
				return err;
			}
		}
		if (asleep)
			qa_fetch_or(asleep, asleep_bit);
		qc_event_inc(cls, QC_EV_sleep);
		err = qc_futex_wait(s, 2u, abs, clk, cls, op);
		if (asleep)
			qa_fetch_andnot(asleep, asleep_bit);
		if (err) {
			/* Our xchg may have left 2 behind: the holder's release
			 * then makes one spare wake-up, harmless. */
			qc_spin_account(&sp, cls);
			return err;
		}
		woken = true;
	}
out:
	qc_spin_account(&sp, cls);
	return 0;
}

static inline int tp_serial_lock(uint32_t *s, uint32_t *ho,
				 const struct timespec *abs, clockid_t clk,
				 enum qc_class cls, enum qc_op op,
				 uint32_t *asleep, uint32_t asleep_bit,
				 uint32_t take)
{
	return tp_serial_lock_watch(s, ho, abs, clk, cls, op, asleep,
				    asleep_bit, take, NULL);
}

/*
 * Release the serial lock, all but its wake-up: returns the word whose
 * sleeper must be woken (the requester's ho, when the lock was handed to
 * it; s, when sleepers may wait for it), or NULL; tp_serial_wake() makes
 * that wake-up, which only takes the word's address, so the caller may
 * release another word of the lock (after which the lock may be gone) in
 * between.  The invariant above holds meanwhile: the caller, awake, owes
 * the sleepers the wake-up.
 */
static inline uint32_t *tp_serial_release(uint32_t *s, uint32_t *ho)
{
	/* Release: pairs with the acquire of the next tp_serial_lock(); fully
	 * ordered, as the read of ho below is (Dekker with the request). */
	uint32_t old = qa_xchg(s, 0u);

	while ((qa_fetch_add(ho, 0u) >> TP_HO_SHIFT) &&
	       qa_cmpxchg(s, 0u, old) == 0) {
		/* Ours again, for whoever asks now. */
		uint32_t w = qa_read(ho);

		while (w >> TP_HO_SHIFT) {
			/* Release pairs with the requester's acquire.  The
			 * fully ordered RMW of ho above already heads a
			 * release sequence that this RMW continues (so the
			 * checker cannot tell it from relaxed); kept so as
			 * not to lean on that. */
			if (qa_try_cmpxchg_release(ho, &w, w & TP_HO_LOW))
				return ho; /* handed to the requester */
		}
		old = qa_xchg(s, 0u); /* the request went away */
	}
	return old == 2u ? s : NULL;
}

/* The wake-up tp_serial_release() returned (`w`, NULL: none; `ho`: the
 * same lock's request word, compared as an address only). */
static inline void tp_serial_wake(uint32_t *w, const uint32_t *ho,
				  enum qc_class cls, enum qc_op op)
{
	if (!w)
		return;
	qc_event_inc(cls, QC_EV_wake);
#ifdef QLOCK_MUTATE_WAKE_TP_SERIAL /* the sleeping requester's wake */
	if (w == ho)
		return; /* model-check mutation (tests/model): must be caught */
#else
	(void)ho;
#endif
	qc_futex_wake(w, 1, cls, op);
}

static inline void tp_serial_unlock(uint32_t *s, uint32_t *ho,
				    enum qc_class cls, enum qc_op op)
{
	tp_serial_wake(tp_serial_release(s, ho), ho, cls, op);
}

#endif /* QLOCK_LOCK_TP_SERIAL_H */
