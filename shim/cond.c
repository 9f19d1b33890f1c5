/* SPDX-License-Identifier: MIT */
/*
 * pthread_cond_*: condition variables.
 *
 * A sequence word, a count of pending waiters and a waiter count: a
 * waiter registers as pending and reads the sequence, unlocks the mutex,
 * then sleeps while the sequence is unchanged; signal consumes one
 * pending waiter and bumps the sequence, broadcast consumes them all, and
 * each then wakes one/all sleepers.  The mutex is released and
 * re-acquired through the shim's own unlock/lock, so every mutex kind and
 * algorithm works (and glibc-owned mutexes too).  Spurious wake-ups are
 * possible, as POSIX allows.
 *
 * Pending: a waiter no signal has consumed yet.  Signal and broadcast make
 * a system call only when one is pending, so a signal sent after the
 * waiters have all been signalled costs no FUTEX_WAKE, although they still
 * count in `waiters` until they run again and leave.  (Testing `waiters`
 * instead, a producer that keeps pushing while the consumer it woke is
 * still on its way to a CPU makes one FUTEX_WAKE per item inside its
 * critical section, waking nobody: more system calls per item than
 * glibc's condvar, whose signal also consumes a waiter, and a longer hold
 * for the woken consumer to collide with on the mutex.)
 *
 *   sw (64 bits): seq in the low half (the futex word), pending above;
 *                 both change in one RMW
 *   wait:     sw += pending 1 (its seq: the old low half), unlock, sleep
 *             on seq; back from a timeout or EINTR with seq unchanged
 *             (checked in the same CAS): pending-1, nobody consumed it;
 *             cap pending at the other registered waiters; leave; lock
 *   signal:   pending == 0: nothing; else CAS seq+1, pending-1, then
 *             FUTEX_WAKE 1
 *   broadcast: pending == 0: nothing; else CAS seq+1, pending 0, then
 *             FUTEX_WAKE all
 *
 * Why no wake-up is lost: a sleeper that no FUTEX_WAKE has yet reached
 * is either pending or covered by a wake in flight.  It registered
 * pending; only a signal or broadcast takes that unit away, and that one
 * bumped seq (a waiter not yet asleep then does not sleep) and then wakes
 * a sleeper (whoever it reaches, its unit was taken by that call, so the
 * units left cover the others).  A waiter gives its own unit back only
 * when no signal came after it registered (seq unchanged, in one CAS);
 * the cap cannot drop a sleeper's unit because every sleeper still counts
 * in `waiters`.  An over-count (two waiters out on one signal: one woken,
 * one that saw seq move before it slept) costs one later signal a
 * FUTEX_WAKE that finds nobody, and the cap keeps it bounded.
 *
 * The woken waiter re-takes the mutex as any locker does.  Woken by a
 * signal sent under the mutex, it may take the signaller's CPU at once
 * (wakeup preemption) and find the mutex held by a thread that is not
 * running: the TP mutex's top waiter would spin on it for its budget
 * (about 1.7x glibc's CPU per item with one producer and one consumer),
 * a glibc waiter sleeps at once.  So signal and broadcast say they are off
 * the CPU around their FUTEX_WAKE (qlock_tp_off_cpu_begin(), as
 * offcpu.c does around sched_yield()): a waiter that finds us holding the
 * mutex meanwhile sleeps on it at once.  The hint orders nothing; a
 * waiter on another CPU that tries the mutex during the call sleeps too,
 * which is what glibc's waiter does anyway.
 *
 * Lifetime: a condvar may be destroyed, and its memory reused, as soon as
 * every waiter has been woken (POSIX's pthread_cond_destroy example;
 * C++'s condition_variable), while woken waiters are still on their way
 * out.  So the waiter count is also a reference count, and destroy waits
 * for it (glibc's approach): a waiter's last access to the object is the
 * RMW that counts it out; if that RMW returns DESTROYING with a count of
 * one, it wakes the destroyer with FUTEX_WAKE, which names the address
 * but does not touch the memory.
 *
 *   waiters word: bits 0..30 count of waiters that may still touch the
 *                 condvar, bit 31 DESTROYING (destroy waits on the word)
 *   wait:     count+1, unlock, sleep on seq, count-1 (the last access),
 *             lock
 *   fork:     the first wait or destroy in a child zeroes the count and
 *             pending (the parent's waiters do not exist there; see
 *             fork.c)
 *   destroy:  *,DESTROYING; bump seq, pending 0, wake all (waiters left
 *             blocked would be a bug in the caller: they wake spuriously
 *             instead of hanging destroy); sleep until count == 0
 *
 * Process-shared condvars (condattr pshared; __wrefs bit 0) run the same
 * algorithm with shared futex calls, so any mutex works with them: a
 * process-shared one (glibc's, across processes) or a private one (the
 * shim's, within a process).  Their waiter count is not repaired after
 * fork: waiters in other processes that share the memory are real, and
 * count themselves out (a shared condvar in private memory, copied by a
 * fork while a thread waited on it, is then left as glibc leaves it: a
 * destroy in the child waits for the parent's waiter).
 *
 * Cancellation: a waiter cancelled after a signal or broadcast arrived
 * may have been the thread that signal woke; it passes the wake on (a
 * signal: one more pending waiter consumed, if any) before it counts
 * itself out, so no other waiter stays blocked for a signal nobody
 * consumed (POSIX).  It does not give its own pending unit back (it may
 * have taken a wake in flight meant for another sleeper); the cap does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/lockevent.h"
#include "contention.h"
#include "lockdep.h"
#include "shim.h"
#include "symbolize.h"

static inline struct qcv *QCV(pthread_cond_t *c) { return (struct qcv *)(void *)c; }

/* Process-shared (shared futex calls, no fork repair); set at init. */
static inline bool cond_shared(const struct qcv *q)
{
	return (qa_read(&q->wrefs) & QCV_PSHARED) != 0;
}

/* The sw word: seq in its low half (the futex word), pending above. */
#define SW_PEND1 (UINT64_C(1) << 32)
static inline uint32_t sw_seq(uint64_t v) { return (uint32_t)v; }
static inline uint32_t sw_pend(uint64_t v) { return (uint32_t)(v >> 32); }
static inline uint64_t sw_make(uint32_t seq, uint32_t pend)
{
	return (uint64_t)pend << 32 | seq;
}

/* The futex word: sw's low half, wherever the byte order puts it. */
static inline uint32_t *cond_seq(struct qcv *q)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t *)(void *)&q->sw;
#else
	return (uint32_t *)(void *)&q->sw + 1;
#endif
}

static void sys_futex_wake(uint32_t *w, int nr, bool shared)
{
	qc_fx_add(QC_CLASS_other, QC_OP_OTHER, QC_FX_WAKE, 1);
	shim_futex_wake(w, nr, shared);
}

/*
 * The asynchronous-cancellation window (the system call alone), in a frame
 * of its own.  The cancel may land on any instruction in it; the unwinder
 * passes a frame without cleanups with its CFI alone, and the caller's
 * cleanup then starts from a call site, whose register state its landing
 * pad expects.  Inline, a cancel landing between the calls entered the
 * landing pad with registers it did not expect (a crash in
 * _Unwind_Resume, about once in 10^5 cond_cancel rounds).
 * Returns 0 (woken by a FUTEX_WAKE, or spuriously), EAGAIN (seq had
 * moved), ETIMEDOUT or EINTR.
 */
static __attribute__((noinline)) int
cond_sleep(uint32_t *w, uint32_t val, bool shared, clockid_t clk,
	   const struct timespec *abs)
{
	int flags = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);
	int oldtype, r;

	if (abs && clk == CLOCK_REALTIME)
		flags |= FUTEX_CLOCK_REALTIME;
	(void)pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
	r = (int)syscall(SYS_futex, w, flags, val, abs, NULL,
			 FUTEX_BITSET_MATCH_ANY);
	if (r != 0)
		r = errno;
	(void)pthread_setcanceltype(oldtype, NULL);
	return r == EAGAIN || r == ETIMEDOUT || r == EINTR ? r : 0;
}

#define QCV_DESTROYING 0x80000000u
#define QCV_COUNT (QCV_DESTROYING - 1)

/* Signal (nr 1) or broadcast (nr INT_MAX): nothing when no waiter is
 * pending; else consume one pending waiter (all), bump seq and wake. */
static void cond_wake_pending(struct qcv *q, int nr, bool shared)
{
	/* Acquire: pairs with a waiter's registering RMW (fully ordered),
	 * which comes before its mutex unlock: a signaller that changed
	 * the predicate under the mutex after that unlock sees the waiter
	 * pending.  The CAS below is fully ordered too (the seq bump before
	 * the FUTEX_WAKE, against the waiter's sleep on seq). */
	uint64_t v = qa_read_acquire(&q->sw), n;

	do {
		uint32_t p = sw_pend(v);

		if (p == 0)
			return;
		n = sw_make(sw_seq(v) + 1, nr == 1 ? p - 1 : 0);
	} while (!qa_try_cmpxchg(&q->sw, &v, n));
	/* Off the CPU while the woken waiter may take it (see the top). */
	qlock_tp_off_cpu_begin();
	sys_futex_wake(cond_seq(q), nr, shared);
	qlock_tp_off_cpu_end();
}

/*
 * A waiter on its way out, before it counts itself out of `waiters`:
 * take its own pending unit back when no signal can have consumed it
 * (`mine`: it left the sleep by timeout or EINTR, and seq is still the
 * one it registered with, checked in the same CAS), and in any case cap
 * `pending` at the other registered waiters (an over-count is harmless,
 * it only costs a signal a FUTEX_WAKE; the cap keeps it bounded).  Every
 * pending waiter still counts in `waiters`, so the cap never drops one.
 */
static void cond_unpend(struct qcv *q, uint32_t seq, bool mine)
{
	uint64_t v = qa_read(&q->sw);

	for (;;) {
		uint32_t p = sw_pend(v), cap;
		uint32_t others = (qa_read(&q->waiters) & QCV_COUNT) - 1;

		cap = p;
		if (mine && sw_seq(v) == seq && cap > 0)
			cap--;
		if (cap > others)
			cap = others;
		if (cap == p ||
		    qa_try_cmpxchg(&q->sw, &v, sw_make(sw_seq(v), cap)))
			return;
	}
}

/* The waiter's last access to the condvar: count itself out (release:
 * its earlier accesses happen before a destroyer that sees the count
 * drop).  After this the memory may belong to someone else. */
static void cond_leave(struct qcv *q, bool shared)
{
	uint32_t old = qa_fetch_sub_release(&q->waiters, 1);

	if (qa_unlikely(old == (QCV_DESTROYING | 1)))
		sys_futex_wake(&q->waiters, 1, shared); /* address only, no access */
}

/* In a fork child the counts still hold the parent's waiters, which
 * will never count themselves out: drop them at the first wait or
 * destroy in the new generation.  Not for a process-shared condvar
 * (see the top). */
static void cond_fork_check(struct qcv *q, bool shared)
{
	if (shared)
		return;
	uint32_t g = shim_fork_check();

	if (qa_unlikely(qa_read_acquire(&q->gen) != g) &&
	    shim_fork_claim(&q->gen, g)) {
		qa_write(&q->waiters, 0);
		qa_write(&q->sw, sw_make(sw_seq(qa_read(&q->sw)), 0));
		shim_fork_repaired(&q->gen, g);
	}
}

struct cond_wait_ctx {
	struct qcv *c;
	pthread_mutex_t *m;
	uint32_t seq;
	bool shared;
	uintptr_t pc;
};

/* Re-take the mutex after the wait: with lockdep on, an acquisition at
 * the wait's call site like any other (lockdep.h). */
static int cond_relock(pthread_mutex_t *m, uintptr_t pc)
{
	if (qa_unlikely(qa_read(&shim_lockdep_on))) {
		struct ld_acq a;
		int err;

		lockdep_cond_reacquire_pre(&a, m, pc);
		err = mutex_acquire(m, 0, CLOCK_REALTIME, NULL);
		lockdep_acquire_post(&a, err);
		return err;
	}
	return mutex_acquire(m, 0, CLOCK_REALTIME, NULL);
}

/* Cancelled in the wait: pass on a signal we may have consumed (one
 * that came after we registered: it found us pending), leave, and take
 * the mutex back before the caller's cleanup handlers run (as POSIX
 * requires). */
static void cond_cancel_cleanup(void *arg)
{
	struct cond_wait_ctx *x = arg;

	if (sw_seq(qa_read(&x->c->sw)) != x->seq)
		cond_wake_pending(x->c, 1, x->shared);
	cond_unpend(x->c, x->seq, false);
	cond_leave(x->c, x->shared);
	(void)cond_relock(x->m, x->pc);
}

static int cond_wait_common(pthread_cond_t *c, pthread_mutex_t *m,
			    clockid_t clk, const struct timespec *abs, uintptr_t pc)
{
	struct qcv *q = QCV(c);
	bool shared = cond_shared(q);
	int err, r;

	if (abs && (!clock_ok(clk) || !nsec_ok(abs)))
		return EINVAL;
	qc_fx_add(QC_CLASS_other, QC_OP_OTHER, QC_FX_WAIT, 0); /* attach stats now */
	cond_fork_check(q, shared);
	qa_fetch_add(&q->waiters, 1);
	/* Pending, and the seq to sleep on, in one RMW (see the top). */
	uint32_t seq = sw_seq(qa_fetch_add(&q->sw, SW_PEND1));
	if (qa_unlikely(qa_read(&shim_lockdep_on)))
		lockdep_cond_release(m, pc);
	err = mutex_release(m);
	if (err) {
		cond_unpend(q, seq, true);
		cond_leave(q, shared);
		return err;
	}
	if (abs && abs->tv_sec < 0) {
		r = ETIMEDOUT;
	} else {
		struct cond_wait_ctx x = { q, m, seq, shared, pc };

		qc_fx_add(QC_CLASS_other, QC_OP_OTHER, QC_FX_WAIT, 1);
		/* A cancellation point, as glibc's: cancellation is acted on
		 * only while asleep (cond_sleep), and the cleanup re-takes
		 * the mutex. */
		pthread_cleanup_push(cond_cancel_cleanup, &x);
		r = cond_sleep(cond_seq(q), seq, shared, clk, abs);
		pthread_cleanup_pop(0);
	}
	cond_unpend(q, seq, r == ETIMEDOUT || r == EINTR);
	cond_leave(q, shared);
	err = cond_relock(m, pc);
	if (err)
		return err; /* e.g. EOWNERDEAD from a glibc robust mutex */
	return r == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* Wait until every waiter has counted itself out (see the top). */
static void cond_wait_for_waiters(struct qcv *q, bool shared)
{
	uint32_t v = qa_read_acquire(&q->waiters);

	if (v == 0)
		return;
	v = qa_fetch_or(&q->waiters, QCV_DESTROYING) | QCV_DESTROYING;
	if (v & QCV_COUNT) {
		/* Bump seq whatever `pending` says: wake every sleeper. */
		uint64_t s = qa_read(&q->sw);

		while (!qa_try_cmpxchg(&q->sw, &s, sw_make(sw_seq(s) + 1, 0)))
			;
		sys_futex_wake(cond_seq(q), INT_MAX, shared);
	}
	while (v & QCV_COUNT) {
		(void)shim_futex_wait(&q->waiters, v, shared, CLOCK_REALTIME, NULL);
		v = qa_read_acquire(&q->waiters); /* pairs with cond_leave */
	}
	qa_write(&q->waiters, 0);
}

EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clk = CLOCK_REALTIME;

	ready();
	if (a) {
		(void)pthread_condattr_getpshared(a, &pshared);
		(void)pthread_condattr_getclock(a, &clk);
	}
	memset(c, 0, sizeof(*c));
	QCV(c)->wrefs = (clk == CLOCK_MONOTONIC ? QCV_MONOTONIC : 0) |
			(pshared != PTHREAD_PROCESS_PRIVATE ? QCV_PSHARED : 0);
	return 0;
}

EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	struct qcv *q = QCV(c);
	bool shared = cond_shared(q);

	ready();
	cond_fork_check(q, shared);
	cond_wait_for_waiters(q, shared);
	return 0;
}

/* A wait, reported by the profile when it is on (call sites: entry.h). */
#define COND_WAIT(c, m, clk, abs) (qa_unlikely(shim_profile_on)                 \
	? LOCKSTAT_COND_WAIT((c), (m), SHIM_CALLER(),                        \
			     cond_wait_common((c), (m), (clk), (abs),        \
					      (uintptr_t)SHIM_CALLER()))     \
	: cond_wait_common((c), (m), (clk), (abs), (uintptr_t)SHIM_CALLER()))

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	ready();
	return COND_WAIT(c, m, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abs)
{
	ready();
	clockid_t clk = (QCV(c)->wrefs & QCV_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	return COND_WAIT(c, m, clk, abs);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clk, const struct timespec *abs)
{
	ready();
	return COND_WAIT(c, m, clk, abs);
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	ready();
	if (qa_unlikely(shim_profile_on))
		lockstat_cond_wake(c, false, SHIM_CALLER());
	cond_wake_pending(QCV(c), 1, cond_shared(QCV(c)));
	return 0;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	ready();
	if (qa_unlikely(shim_profile_on))
		lockstat_cond_wake(c, true, SHIM_CALLER());
	cond_wake_pending(QCV(c), INT_MAX, cond_shared(QCV(c)));
	return 0;
}
