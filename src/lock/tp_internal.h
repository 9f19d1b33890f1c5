/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the TP (throughput-optimised) futex locks:
 * src/lock/tp_mutex.c, tp_rwlock.c and tp_cond.c.  Not installed.  The
 * thread ids are in tp_tid.h, the uncontended paths the pthread drop-in
 * uses too in tp_fast.h, the serialisation lock of the top waiters in
 * tp_serial.h (all included here); the rest is private to the locks.
 *
 * The kernel series did the slow path inside new FUTEX_LOCK/FUTEX_UNLOCK
 * operations, with a per-futex `futex_state` whose kernel mutex serialised
 * the waiters.  Here everything the kernel kept in futex_state lives in the
 * lock object next to the futex word, and the kernel mutex is replaced by
 * the serial lock (tp_serial.h).
 */
#ifndef QLOCK_LOCK_TP_INTERNAL_H
#define QLOCK_LOCK_TP_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"
#include "core/spin.h"
#include "core/testhook.h"
#include "lock/tp_fast.h" /* the uncontended paths */
#include "lock/tp_serial.h"
#include "lock/tp_tid.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

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
