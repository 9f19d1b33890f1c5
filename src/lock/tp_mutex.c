/* SPDX-License-Identifier: MIT */
/*
 * TP (throughput-optimised) futex mutex: seed 004's FUTEX_LOCK/FUTEX_UNLOCK
 * with the kernel side done in user space over FUTEX_WAIT/FUTEX_WAKE.
 *
 * Word encoding (m->val, the futex word, as in the series):
 *	bits 0-28  owner thread id (gettid()), 0 = no owner
 *	bit 29     SERIAL: the owner holds the serial lock below, which
 *	           it kept from its turn as top waiter, or which the top
 *	           waiter gave it (requeue_for()); its unlock releases it
 *	           (slow path)
 *	bit 30     SLEEPER: the top waiter sleeps on the word (or is about
 *	           to); the unlock that clears it makes a FUTEX_WAKE (the
 *	           series kept FUTEX_OWNER_DIED here, which we do not use)
 *	bit 31     WAITERS: the unlock must take the slow path (the top
 *	           waiter sleeps, or wants a hand-off)
 *
 * What the kernel kept in its futex_state lives beside the word:
 *	serial   the serialisation lock (tp_serial.h): its holder is the
 *	         top waiter, the only waiter that spins on the owner and the
 *	         only thread that ever sleeps on m->val (condvar broadcasts
 *	         requeue onto serial, not onto m->val); or, while the word
 *	         has SERIAL, the owner, and then there is no top waiter
 *	handoff  tid of the top waiter when it asked for a hand-off, else 0
 *	nval     bits 8-31: tid of a serial waiter asking for the serial
 *	         lock (its hand-off, tp_serial.h); bits 0-2: the
 *	         serial lock's spin shift (tp_serial_spin_learn())
 *
 * Transitions of m->val:
 *	0            -> tid            fast lock (cmpxchg, acquire)
 *	tid          -> 0              fast unlock (cmpxchg, release)
 *	0 <-> tid                      the same two with a plain load and
 *	                               store, in the pthread drop-in while
 *	                               the process has one thread (no other
 *	                               thread to order against;
 *	                               tp_fast.h)
 *	0            -> tid            slow-path lock (steal or top waiter)
 *	0            -> tid|SERIAL     top waiter that keeps the serial lock:
 *	                               it found serial == 2 (others may sleep
 *	                               on it) and had seen the owner off the
 *	                               CPU (keep_serial())
 *	owner        -> owner|SERIAL   top waiter that gives the serial lock
 *	                               to an owner off the CPU and queues on
 *	                               it again instead of sleeping on the
 *	                               word (a bare owner word only;
 *	                               requeue_for())
 *	owner        -> owner|W        top waiter before sleeping or asking for
 *	                               hand-off (W is only ever the top
 *	                               waiter's, so its acquisition drops it)
 *	owner|W      -> owner|W|S      top waiter about to sleep (cmpxchg)
 *	owner|W|S    -> owner|W        top waiter spinning again
 *	owner|W(|S)  -> 0              slow unlock (cmpxchg, release), then
 *	                               FUTEX_WAKE(1) if it returned S
 *	owner|W(|S)  -> top            slow unlock with hand-off (handoff word
 *	                               claimed by xchg first), then
 *	                               FUTEX_WAKE(1) if it returned S
 *	owner|SERIAL -> 0              slow unlock: the serial lock released
 *	                               first (tp_serial_release(); a new top
 *	                               waiter may then add W|S, or ask for the
 *	                               hand-off, before the word's release),
 *	                               then the word as above, then the
 *	                               serial lock's FUTEX_WAKE, if any
 *	After the releasing cmpxchg the unlock makes no access to the mutex
 *	(the next owner may free it): only FUTEX_WAKEs on its addresses.
 *	0            -> 0              unlock of a free mutex: misuse, reported
 *	other(|W|S)  -> 0 | top        unlock by a thread that is not the
 *	                               owner: misuse, reported, then released
 *	                               as the owner's slow unlock does
 *
 * Policies (docs/tp-locks.md):
 *   - an arrival that misses the fast path makes one steal attempt (free
 *     word, no hand-off pending), then queues on the serial lock (bounded
 *     spin, then sleep);
 *   - the top waiter spins on the owner for qc_owner_spin_ns() (20 us;
 *     per thread, halved after a spin that ended in a sleep, down to
 *     1/16, and doubled back after one that got the lock),
 *     renewed when the owner changes, at most TP_MAX_OWNER_CHANGES times
 *     (user space cannot see whether the owner runs: a changing owner is
 *     our evidence that the lock is moving); then it sets WAITERS and
 *     sleeps on the word;
 *   - once the top waiter has waited qc_handoff_ns() (4 ms) or slept
 *     TP_HANDOFF_SLEEPS times it writes its tid to `handoff` and sets
 *     WAITERS: stealing stops, and the owner's unlock writes the top
 *     waiter's tid into the word instead of freeing it;
 *   - a top waiter that takes the mutex while others may sleep on the
 *     serial lock (serial == 2), having seen the owner off the CPU while
 *     it waited, keeps that lock until its unlock (SERIAL), instead of
 *     releasing it at once (keep_serial()).  Released at once, it
 *     wakes the next waiter to be top waiter while the lock is held:
 *     where holders leave the CPU (sysbench threads: lock,
 *     sched_yield(), unlock), that waiter only went back to sleep on
 *     the word, and each hand-over of the lock cost two futex waits and
 *     two wakes (glibc's mutex: one and one).  Kept, the serial lock's
 *     wake-up comes from the unlock, after the word's release, and the
 *     woken waiter finds the mutex free.  Arrivals meanwhile spin on
 *     the serial lock (while the owner runs, tp_serial_lock_watch()),
 *     then sleep on it; steals are as before;
 *   - a top waiter that would sleep on the word for an owner off the CPU
 *     gives that owner the serial lock (SERIAL) and queues on it again
 *     (requeue_for()): the unlocks then wake the serial lock's sleepers
 *     in turn, not one fixed top waiter, whose wake-ups crossed CPUs
 *     whenever it had last run on another one.
 */
#ifndef QLOCK_MODEL
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/misuse.h"
#include "lock/tp_internal.h"
#include "qlock/tp_mutex.h"

#define W        QLOCK_TP_WAITERS
#define SER      QLOCK_TP_SERIAL
#define TID_MASK QLOCK_TP_TID_MASK
#define CLS      QC_CLASS_tp_mutex

QLOCK_API uint32_t qlock_tp_self_tid(void)
{
	return tp_self_tid();
}

/* One steal attempt on a free word, not while a hand-off is pending. */
static inline bool steal(qlock_tp_mutex_t *m, uint32_t tid)
{
	uint32_t v = qa_read(&m->val);

	if ((v & TID_MASK) || qa_read(&m->handoff))
		return false;
	/* Acquire: pairs with the release of the last unlock. */
#ifndef QLOCK_MUTATE_TP_MUTEX
	return qa_cmpxchg_acquire(&m->val, v, tid) == v;
#else /* model-check mutation (tests/model): must be caught */
	return qa_cmpxchg_relaxed(&m->val, v, tid) == v;
#endif
}

/*
 * The owner-spin budget adapts per thread (qc_owner_spin_budget(),
 * core/spin.h).  A fixed 20 us spin lost to glibc's no-spin mutex
 * wherever holders are often preempted (CPython's interpreter lock with 8
 * threads on 2 CPUs: 0.6-0.9x); a short holder keeps the whole budget.
 * Per thread, not per lock: the mutex has no spare bytes (16, the
 * drop-in's room).
 */

/*
 * Keep the serial lock (SERIAL) on taking the word?  Only if others may
 * sleep on it (serial == 2; a 1 that turns 2 after this read is released
 * at once, as it would be without SERIAL), and only where this waiter saw
 * the owner off the CPU (`off_cpu`: while it queued or as top waiter).
 * Without that evidence the next waiter is better promoted at once: it
 * spins on a running owner, and if the owner was preempted or yields
 * without the hint it sleeps with SLEEPER set, which tells later
 * arrivals to sleep too; under SERIAL nothing tells them, and each spins
 * its whole serial-lock spin.  The models check the
 * protocol wherever it may run: they keep the lock whenever serial == 2.
 */
static inline bool keep_serial(qlock_tp_mutex_t *m, bool off_cpu)
{
#ifdef QLOCK_MODEL
	(void)off_cpu;
	return qa_read(&m->serial) == 2u;
#else
	return off_cpu && qa_read(&m->serial) == 2u;
#endif
}

/*
 * Requeue rather than sleep on the word?  A top waiter that would sleep
 * for an owner off the CPU gives the serial lock to that owner instead
 * (the word goes from a bare `owner` to `owner|SERIAL`, so its unlock
 * takes the slow path, releases the serial lock and wakes the serial
 * lock's longest sleeper once the word is free) and queues on the
 * serial lock again.  Where holders leave the CPU while holding
 * (sysbench threads: lock, sched_yield(), unlock, and at once lock
 * again), the woken waiter usually finds the word taken again by the
 * unlocker.  As the one top waiter sleeping on the word, it was woken by
 * every unlock until it asked for the hand-off (TP_HANDOFF_SLEEPS
 * wake-ups) wherever it was: when its last CPU was the other one, each
 * of those wake-ups sent an interrupt there and preempted whatever ran
 * there, to fail again (on 2 CPUs, 16 threads, 2 mutexes: about half
 * of such wake-ups crossed CPUs).  Queued again behind the other
 * sleepers, it lets the next unlock wake the next of them, as glibc's
 * mutex wakes the next futex waiter: a waiter woken on the unlocker's
 * CPU preempts it before it locks again and takes the mutex there, so
 * the mutex stays with the threads of one CPU (docs/tp-locks.md has
 * the application suite's figures).
 *
 * It requeues too for a running owner once an owner was seen off the
 * CPU during this wait (`off_cpu_before`: while it queued, or as top
 * waiter), rather than spin on it: such an owner is about to leave the
 * CPU again (between its lock and its sched_yield()), and a top waiter
 * on the other CPU, which sees the owner's short yields only now and
 * then, spun on it and then slept on the word with W|S (the fixed top
 * waiter again, woken by each unlock), taking the CPU from the owners.
 *
 * Only a bare owner word: W or S (ours, set before an earlier sleep)
 * tell that the owner may be in its slow unlock already, which decided
 * from the word it read whether to release the serial lock; on a bare
 * word its fast unlock's cmpxchg fails on SERIAL and it takes the slow
 * path, or it succeeded first and our cmpxchg fails.  Requeues count as
 * sleeps towards the hand-off request (TP_HANDOFF_SLEEPS) and the time
 * the waiter has waited (qc_handoff_ns()) runs on over them, so the
 * hand-off still bounds the wait.  The models have no owner off the
 * CPU (tp_owner_off_cpu()): a harness sets tp_model_requeues, the
 * number of top-waiter turns that requeue (on a bare word) in its run.
 */
#ifdef QLOCK_MODEL
static int tp_model_requeues; /* written before the threads start */
#endif
static inline bool requeue_for(uint32_t v, bool off_cpu_before)
{
#ifdef QLOCK_MODEL
	(void)off_cpu_before;
	if (v != (v & TID_MASK) || tp_model_requeues <= 0)
		return false;
	tp_model_requeues--;
	return true;
#else
	return v == (v & TID_MASK) && (off_cpu_before || tp_owner_off_cpu(v));
#endif
}

/* The serial-lock spin adapts (tp_serial_spin_learn()); the models
 * explore every interleaving: nothing to learn there. */
#ifndef QLOCK_MODEL
#define SERIAL_SPIN_ADAPTS true
#else
#define SERIAL_SPIN_ADAPTS false
#endif

/* What a waiter's turns as top waiter have in common (lock_slow()). */
struct tp_wait_hist {
	uint64_t t0;     /* the first look that found the word held */
	uint32_t nsleep; /* sleeps on the word, and requeues */
	bool started;    /* t0 is set */
	bool off_cpu;    /* the owner was seen off the CPU as top waiter */
};

/*
 * The top waiter's loop (caller holds m->serial).  Returns 0 with the
 * mutex held, ETIMEDOUT, or EAGAIN when it gave the serial lock to the
 * owner and must queue on it again (requeue_for()).  `queued_off_cpu`:
 * the owner was seen off the CPU while we queued on the serial lock.
 * *kept: the mutex was taken with SERIAL (the serial lock stays held,
 * for the unlock to release).
 */
static int top_waiter(qlock_tp_mutex_t *m, uint32_t tid,
		      const struct timespec *abs, clockid_t clk,
		      bool queued_off_cpu, bool *kept,
		      struct tp_wait_hist *hist)
{
	/* The clock is read only once the word is found held (t0, and
	 * the start of the spin budget) and, after a sleep, at the next
	 * look that finds it held (`restart`): a woken top waiter that
	 * finds the word free, the usual hand-over where holders yield,
	 * takes it without a clock read. */
	uint64_t now = 0, spin_until = 0;
	uint64_t budget = qc_owner_spin_budget();
	uint32_t last_owner = 0, changes = 0, iter = 0;
	bool restart = true, off_cpu_seen = false, slept = false;
	uint64_t spins = 0;
	struct tp_poll poll = TP_POLL_INIT;
	bool ask = false; /* hand-off requested */
	int ret = 0;

	for (;;) {
		uint32_t v = qa_read_acquire(&m->val);

		if (ask && qa_read_acquire(&m->handoff) == 0) {
			/* Claimed by the unlocker: the word becomes our tid.
			 * Acquire pairs with its release store. */
			while ((qa_read_acquire(&m->val) & TID_MASK) != tid)
				qa_cpu_relax();
			break; /* the unlocker counted the hand-off */
		}
		if (!(v & TID_MASK)) {
			/* Any W was ours: drop it. */
			uint32_t n = tid;

			if (keep_serial(m, queued_off_cpu || off_cpu_seen))
				n |= SER;
			if (qa_cmpxchg_acquire(&m->val, v, n) == v) {
				if (ask) /* never claimed: see the unlock */
					qa_write(&m->handoff, 0u);
				*kept = n & SER;
				break;
			}
			continue;
		}
		if (restart || tp_poll_clock_due(&poll, &iter) ||
		    v != last_owner) {
			bool renew = (v & TID_MASK) !=
					     (last_owner & TID_MASK) &&
				     changes++ < TP_MAX_OWNER_CHANGES;

			now = qc_now_ns();
			if (!hist->started) {
				hist->t0 = now;
				hist->started = true;
			}
			if (restart || renew)
				spin_until = now + budget;
			restart = false;
			last_owner = v;
			if (tp_timed_out(abs, clk)) {
				if (ask && qa_cmpxchg(&m->handoff, tid, 0u) != tid)
					continue; /* claimed: wait for it */
				qc_event_inc(CLS, QC_EV_timeout);
				ret = ETIMEDOUT;
				break;
			}
			if (!ask && (now - hist->t0 >= qc_handoff_ns() ||
				     hist->nsleep >= TP_HANDOFF_SLEEPS)) {
				/* Stop stealing: the owner's unlock sees W
				 * (set below) and hands the lock to us. */
				qa_write(&m->handoff, tid);
				ask = true;
			}
		}
		/* After asking for the hand-off the gap may still grow: a
		 * hand-off to us while we spin is seen up to one gap late
		 * (~16 us; ~200 hand-offs/s at 32 threads: < 0.5 % idle).
		 * Polling at the base gap then was no better in alternated
		 * A/B maps (docs/tp-locks.md). */
		if (tp_owner_off_cpu(v & TID_MASK))
			off_cpu_seen = hist->off_cpu = true;
		if (!ask && requeue_for(v, queued_off_cpu || off_cpu_seen)) {
			/* Fully ordered: the serial lock changes hands.
			 * Our serial-lock section before SERIAL on the word
			 * (pairs with the word's read that the owner's slow
			 * unlock makes before it releases the serial lock,
			 * unlock_slow()); the owner's fast unlock
			 * cmpxchg on the bare word and ours are ordered on
			 * the word itself: one of the two fails. */
			if (qa_cmpxchg(&m->val, v, v | SER) != v)
				continue;
			hist->nsleep++;
			ret = EAGAIN;
			break;
		}
		if (tp_top_wait(&m->val, v, ask,
				now < spin_until &&
				!tp_owner_off_cpu(v & TID_MASK),
				&spins, &poll, abs, clk, CLS, QC_OP_LOCK, NULL,
				0) == TP_WAIT_AGAIN)
			continue;
		hist->nsleep++;
		slept = true;
		restart = true; /* and check the deadline at once */
		changes = 0;
	}
	/* Learn from a spin only: a sleep for an owner that said it is off
	 * the CPU, or for a hand-off, says nothing of the hold times. */
	if (spins && !off_cpu_seen && !ask)
		qc_owner_spin_learn(ret == 0 && !slept);
	if (spins)
		qc_event_add(CLS, QC_EV_spin, spins);
	return ret;
}

static int lock_slow(qlock_tp_mutex_t *m, bool cond,
		     const struct timespec *abs, clockid_t clk)
{
	uint32_t tid = tp_self_tid();
	bool queued_off_cpu = false, kept = false;
	const struct tp_watch watch = { &m->val, TID_MASK, 0,
					&queued_off_cpu, SERIAL_SPIN_ADAPTS };
	int err;

	qc_event_inc(CLS, QC_EV_slowpath);
	if (!cond && steal(m, tid)) {
		qc_event_inc(CLS, QC_EV_steal);
		return 0;
	}
	struct tp_wait_hist hist = { 0, 0, false, false };

	for (;;) {
		err = tp_serial_lock_watch(&m->serial, &m->nval, abs, clk, CLS,
					   QC_OP_LOCK, NULL, 0, cond ? 2u : 1u,
					   &watch);
		if (err) {
			qc_event_inc(CLS, QC_EV_timeout);
			if (queued_off_cpu || hist.off_cpu)
				tp_count_off_cpu_wait(CLS);
			return err;
		}
		err = top_waiter(m, tid, abs, clk, queued_off_cpu, &kept,
				 &hist);
		if (err != EAGAIN)
			break;
		/* The serial lock went to the owner (SERIAL): queue again. */
	}
	if (queued_off_cpu || hist.off_cpu)
		tp_count_off_cpu_wait(CLS);
	if (!kept)
		tp_serial_unlock(&m->serial, &m->nval, CLS, QC_OP_LOCK);
	return err;
}

QLOCK_API void qlock_tp_mutex_lock(qlock_tp_mutex_t *m)
{
	if (qa_likely(tp_mutex_lock_fast(m, tp_self_tid())))
		return;
	lock_slow(m, false, NULL, CLOCK_MONOTONIC);
}

void tp_mutex_lock_cond(qlock_tp_mutex_t *m)
{
	lock_slow(m, true, NULL, CLOCK_MONOTONIC);
}

QLOCK_API bool qlock_tp_mutex_trylock(qlock_tp_mutex_t *m)
{
	uint32_t tid = tp_self_tid();

	if (qa_likely(tp_mutex_lock_fast(m, tid)))
		return true;
	return steal(m, tid);
}

QLOCK_API int qlock_tp_mutex_timedlock(qlock_tp_mutex_t *m,
				       const struct timespec *abs,
				       clockid_t clk)
{
	int err = tp_check_deadline(abs, clk);

	if (err)
		return err;
	if (qa_likely(tp_mutex_lock_fast(m, tp_self_tid())))
		return 0;
	return lock_slow(m, false, abs, clk);
}

/*
 * `v`: the word as the fast path found it: ours with flags (W, S,
 * SERIAL), or misuse.  A
 * mutex held by another thread is released once the misuse handler
 * returns (glibc's NORMAL mutex lets any thread unlock it).
 */
static void unlock_slow(qlock_tp_mutex_t *m, uint32_t v, uint32_t tid)
{
	uint32_t h, *serial_wake = NULL;

	if (qa_unlikely((v & TID_MASK) != tid)) {
		if (!(v & TID_MASK)) {
			qc_misuse("qlock_tp_mutex_unlock",
				  "the mutex is not locked", m);
			return;
		}
		/* Held across fork() by the thread that forked: ours. */
		if (!tp_tid_forked_self(v & TID_MASK))
			qc_misuse("qlock_tp_mutex_unlock",
				  "the mutex is locked by another thread", m);
	}
	/* Claim a pending hand-off request (only the owner does this): a
	 * claimed request gives ownership straight to the top waiter.  Read
	 * first: most slow unlocks find none, and a request we do not see
	 * is one made after our look (the top waiter then finds the word
	 * free, or stolen, and still holds its request: see top_waiter()). */
	h = qa_read(&m->handoff) ? qa_xchg(&m->handoff, 0u) : 0u;

	/* The serial lock we kept as top waiter, or that the top waiter
	 * gave us (requeue_for()): released before the word (no access
	 * after it), its sleeper woken after it, so that it finds the mutex
	 * free. */
	if (v & SER)
		serial_wake = tp_serial_release(&m->serial, &m->nval);

	/* Only the top waiter changes the word meanwhile (W, S).  Release
	 * pairs with the next owner's acquire; after it, the mutex may be
	 * gone: the value it returns says whether to wake. */
	while (!qa_try_cmpxchg_release(&m->val, &v, h))
		;
	qc_test_released(m);
	if (h)
		qc_event_inc(CLS, QC_EV_handoff);
	if (v & TP_SLEEPER) {
		qc_event_inc(CLS, QC_EV_wake);
#ifndef QLOCK_MUTATE_WAKE_TP_MUTEX /* the sleeping top waiter's wake */
		qc_futex_wake(&m->val, 1, CLS, QC_OP_UNLOCK);
#endif /* else: model-check mutation (tests/model): must be caught */
	}
	tp_serial_wake(serial_wake, &m->nval, CLS, QC_OP_UNLOCK);
}

QLOCK_API void qlock_tp_mutex_unlock(qlock_tp_mutex_t *m)
{
	uint32_t tid = tp_self_tid();
	uint32_t v = tp_mutex_unlock_fast(m, tid);

	if (qa_likely(v == tid))
		return;
	unlock_slow(m, v, tid);
}

QLOCK_API uint32_t qlock_tp_mutex_owner(const qlock_tp_mutex_t *m)
{
	return qa_read(&m->val) & TID_MASK;
}
