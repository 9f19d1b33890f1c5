/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the TP (throughput-optimised) futex locks of seed 004:
 * src/lock/tp_mutex.c, tp_rwlock.c and tp_cond.c.  Not installed.  The
 * thread ids and the uncontended paths, which the pthread drop-in uses
 * too, are in tp_fast.h (included here); the rest is private to the locks.
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
#ifndef QLOCK_LOCK_TP_INTERNAL_H
#define QLOCK_LOCK_TP_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/spin.h"
#include "core/lockevent.h"
#include "core/testhook.h"
#include "lock/tp_fast.h" /* thread ids, the uncontended paths */
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

/*
 * Owners that are off the CPU by their own doing.  User space cannot see
 * whether a lock's owner runs (the kernel's mutex spinner reads
 * owner->on_cpu), but a thread about to yield or sleep can say so
 * (qlock_tp_off_cpu_begin(); the pthread drop-in says it in sched_yield(),
 * nanosleep(), usleep(), ...).  A top waiter whose owner is listed here
 * stops spinning and sleeps at once: spinning on a thread that is not
 * running burns the CPU that thread needs, and a holder that calls
 * sched_yield() would even hand its CPU to the spinner.
 *
 * One word per tid modulo TP_OFF_CPU_SLOTS, holding that tid while the
 * thread is off.  Two threads off at once in one slot lose a hint (the
 * waiter spins its normal budget, as without the hint), never a wake-up:
 * the hint only decides between spinning and sleeping, and sleeping is
 * always correct (the SLEEPER protocol wakes the sleeper).  Relaxed
 * accesses: the hint orders nothing; read late, it costs one poll gap of
 * spinning.
 *
 * The slot of a tid is spread (tp_off_cpu_slot()): consecutive tids, the
 * threads a program starts together, fall in different cache lines (64
 * of them before two share one).  Slot tid % 1024 put 16 such threads in
 * one line, which every sched_yield() of any of them wrote twice: under
 * sysbench threads (16 threads yielding while holding) the line moved
 * between the CPUs at nearly every yield.  The map is a permutation of
 * tid % 1024, so which tids share a slot is unchanged.
 */
#define TP_OFF_CPU_SLOTS 1024u
#define TP_OFF_CPU_LINES 64u /* 16 slots of 4 bytes a cache line */
extern uint32_t tp_off_cpu_tids[TP_OFF_CPU_SLOTS];

static inline uint32_t *tp_off_cpu_slot(uint32_t tid)
{
	uint32_t per_line = TP_OFF_CPU_SLOTS / TP_OFF_CPU_LINES;

	return &tp_off_cpu_tids[tid % TP_OFF_CPU_LINES * per_line +
				tid / TP_OFF_CPU_LINES % per_line];
}

/* A lock call whose wait found its owner off the CPU (at most once a
 * call): the event, and the thread's count (core/lockevent.h). */
static inline void tp_count_off_cpu_wait(enum qc_class cls)
{
	qc_event_inc(cls, QC_EV_owner_off_cpu);
#ifndef QLOCK_MODEL
	qc_off_cpu_waits++;
#endif
}

static inline bool tp_owner_off_cpu(uint32_t tid)
{
#ifdef QLOCK_MODEL
	(void)tid; /* the models have no yield or sleep */
	return false;
#else
	return tid != 0 && qa_read(tp_off_cpu_slot(tid)) == tid;
#endif
}

/* Spin bounds of the top waiter (see docs/tp-locks.md). */
#define TP_MAX_OWNER_CHANGES 8      /* owner changes that renew the spin */
#define TP_READER_SPIN_NS    50000u /* spin on a reader-owned lock (kernel: 50 us) */
#define TP_HANDOFF_SLEEPS    16     /* sleeps before the top waiter asks hand-off */
#define TP_CLOCK_EVERY       16     /* spin iterations between clock reads */
#define TP_POLL_RELAX        8      /* cpu_relax()es between two polls */

/*
 * The top waiter's pause between two reads of the lock word.  Every read
 * pulls the word's cache line away from the running owner, which then
 * misses on its next unlock or re-lock; polling every few pauses lets it
 * keep the line for a run of operations (throughput first, the series'
 * aim).  Measured with `lockbench -w futex -t 8,16` (docs/tp-locks.md):
 * +10-18% for every 8 pauses against polling after every pause, per-thread
 * minimum unchanged.
 *
 * The mutex's top waiter (p != NULL) backs off further: while the word
 * reads the same (the same owner, still holding it, or re-taking it
 * between our reads: a running owner with short critical sections and no
 * gap), the gap doubles up to qc_poll_max(): at 8 pauses such an owner
 * still misses on about one operation in one to three
 * (docs/performance.md).  Any change of the word starts again at
 * TP_POLL_RELAX, so a lock that moves between threads is watched closely.
 * The rwlock (p == NULL) keeps the fixed gap its seed-004 figures were
 * measured with: the back-off lost read-heavy cells of the map there
 * (docs/tp-locks.md, "Polling the word"), and no loss is known to fix.
 */
struct tp_poll {
	uint32_t last;  /* the word at the previous read */
	uint32_t relax; /* pauses before the next read; 0 = not started */
};

#define TP_POLL_INIT { 0, 0 }

static inline void tp_poll_relax(struct tp_poll *p, uint32_t v)
{
#ifdef QLOCK_UNDER_GENMC
	/* No pause to count: GenMC's -unroll cuts a counted loop after its
	 * bound (2), so every spin of the top waiter ended its execution
	 * unexplored (blocked) here. */
	(void)p;
	(void)v;
#else
	uint32_t max = qc_poll_max();

	if (!p) {
		for (unsigned i = 0; i < TP_POLL_RELAX; i++)
			qa_cpu_relax();
		return;
	}
	if (p->relax == 0 || v != p->last)
		p->relax = TP_POLL_RELAX;
	else if (p->relax < max)
		p->relax = p->relax * 2 < max ? p->relax * 2 : max;
	p->last = v;
	for (unsigned i = 0; i < p->relax; i++)
		qa_cpu_relax();
#endif
}

/*
 * Is it time for the top waiter to read the clock again?  Every
 * TP_CLOCK_EVERY polls at the base gap, and every poll once the gap has
 * grown: the spin budgets are in ns, and counting polls alone let 15 polls
 * at a 1024-pause gap (about 250 us at this host's 16 ns a pause) pass
 * before a 20 us owner spin was seen to be over; now it is overrun by at
 * most one gap.  A clock read (vDSO, no cache line of the lock) costs
 * little beside a gap of 16 pauses or more.
 */
static inline bool tp_poll_clock_due(const struct tp_poll *p, uint32_t *iter)
{
	return ++*iter % TP_CLOCK_EVERY == 0 || p->relax > TP_POLL_RELAX;
}

/* The WAITERS bit of both lock words (the top waiter's to set). */
#define TP_WAITERS 0x80000000u
_Static_assert(QLOCK_TP_WAITERS == TP_WAITERS &&
	       QLOCK_TP_RW_WAITERS == TP_WAITERS, "one WAITERS bit");
/*
 * The SLEEPER bit of both lock words: the top waiter sleeps on the word,
 * or is about to (set with WAITERS, only by the top waiter).  The unlock
 * that frees or hands over the word learns from the value its releasing
 * RMW returns whether to make a FUTEX_WAKE, so it never reads the lock
 * again: the next owner may free it at once (the qspinlock's SLOW trick).
 */
#define TP_SLEEPER 0x40000000u
_Static_assert(QLOCK_TP_SLEEPER == TP_SLEEPER &&
	       QLOCK_TP_RW_SLEEPER == TP_SLEEPER, "one SLEEPER bit");

enum tp_wait { TP_WAIT_AGAIN, TP_WAIT_SLEPT };

/*
 * The top waiter's wait while the lock word `v` is owned: spin while
 * `in_budget` (before WAITERS is set only if no hand-off was asked for),
 * else set WAITERS|SLEEPER and sleep on the word until it changes.
 * TP_WAIT_AGAIN: re-read the word now (spun once, or the word changed
 * under us); TP_WAIT_SLEPT: slept, give the top waiter a fresh spin
 * budget.  `asleep`, when not NULL, gets `asleep_bit` while it sleeps (a
 * reader group leader disbands its group); `poll` spaces the reads
 * (tp_poll_relax; NULL: the fixed gap).
 */
static inline enum tp_wait tp_top_wait(uint32_t *val,
				       uint32_t v, bool ask, bool in_budget,
				       uint64_t *spins, struct tp_poll *poll,
				       const struct timespec *abs,
				       clockid_t clk, enum qc_class cls,
				       enum qc_op op, uint32_t *asleep,
				       uint32_t asleep_bit)
{
	if (!(v & TP_WAITERS)) {
		if (!ask && in_budget) {
			(*spins)++;
			tp_poll_relax(poll, v);
			return TP_WAIT_AGAIN;
		}
		if (qa_cmpxchg(val, v, v | TP_WAITERS) != v)
			return TP_WAIT_AGAIN;
		v |= TP_WAITERS;
	}
	if (in_budget) {
		/* Awake again (spurious or early wake-up): no FUTEX_WAKE
		 * for a spinning top waiter. */
		if ((v & TP_SLEEPER) &&
		    qa_cmpxchg_relaxed(val, v, v & ~TP_SLEEPER) != v)
			return TP_WAIT_AGAIN;
		(*spins)++;
		tp_poll_relax(poll, v);
		return TP_WAIT_AGAIN;
	}
	/* SLEEPER and the unlock's releasing RMW are RMWs of one word: if
	 * the release came first this cmpxchg fails and we look again; if
	 * not, the release returns SLEEPER and wakes us (and our futex
	 * wait returns at once if the word changed before it slept). */
	if (!(v & TP_SLEEPER)) {
		if (qa_cmpxchg_relaxed(val, v, v | TP_SLEEPER) != v)
			return TP_WAIT_AGAIN;
		v |= TP_SLEEPER;
	}
	if (asleep)
		qa_fetch_or(asleep, asleep_bit);
	qc_event_inc(cls, QC_EV_sleep);
	qc_futex_wait(val, v, abs, clk, cls, op);
	if (asleep)
		qa_fetch_andnot(asleep, asleep_bit);
	return TP_WAIT_SLEPT;
}

/* Did the optional deadline pass?  (abs == NULL: never.) */
static inline bool tp_timed_out(const struct timespec *abs, clockid_t clk)
{
	return abs && qc_deadline_passed(abs, clk);
}

/* Validate a deadline the way the futex layer would, before any change. */
static inline int tp_check_deadline(const struct timespec *abs, clockid_t clk)
{
	if (!abs)
		return 0;
	if (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME)
		return EINVAL;
	return qc_timespec_valid(abs) ? 0 : EINVAL;
}

/* ---- the serialisation lock (see the top of this file) ------------------- */

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
	return v & TP_SLEEPER;
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

/* ---- rwlock variants (the registry builds tp-rwlock-nogroup from these) --- */

int tp_rwlock_rdlock_common(qlock_tp_rwlock_t *rw, bool group,
			    const struct timespec *abs, clockid_t clk);

/*
 * Mutex lock for a condition-variable waiter re-taking its mutex.  It may
 * have been requeued onto m->serial by a broadcast, with other requeued
 * waiters still asleep there: it makes no steal attempt and takes the
 * serial lock with 2, so that its release wakes the next one.
 */
void tp_mutex_lock_cond(qlock_tp_mutex_t *m);

#endif /* QLOCK_LOCK_TP_INTERNAL_H */
