/* SPDX-License-Identifier: MIT */
/*
 * Condition variable for the TP mutex.
 *
 * Words:
 *	c->seq      the futex word waiters sleep on; every signal/broadcast
 *	            adds 1, so a waiter that read it before releasing the
 *	            mutex cannot miss a later signal (its wait returns EAGAIN
 *	            when the word moved)
 *	c->waiters  bits 0-30: threads between registering and their last
 *	            access to c; lets signal and broadcast skip the system
 *	            call when nobody waits.  Bit 31 DESTROYING: destroy
 *	            waits for the count to reach 0
 *	c->mutex    the waiters' mutex (broadcast requeues onto its queue)
 *
 * wait:      waiters++, s = seq, unlock m, FUTEX_WAIT(seq, s), waiters--
 *            (the waiter's last access to c), relock m: through its
 *            waiter queue (tp_mutex_lock_cond) when woken, since it may
 *            have been requeued; with the plain lock after a timeout
 *            (the cond path takes the serial lock with 2 and so always
 *            makes a FUTEX_WAKE on release: an uncontended timed wait
 *            must make none)
 * destroy:   waiters |= DESTROYING; if waiters remain, wake every one
 *            still asleep (on seq, or requeued onto m->serial: spurious
 *            wake-ups, which waits allow) and sleep on `waiters` until
 *            the last one's waiters-- (it wakes us when it sees
 *            DESTROYING|1).  After a broadcast or signal the woken
 *            waiters may still be on their way out of c: this is how a
 *            condition variable can be destroyed and its memory reused
 *            as soon as every waiter has been woken (POSIX, C++)
 * signal:    seq++, FUTEX_WAKE(seq, 1) if waiters
 * broadcast: seq++; if waiters: FUTEX_CMP_REQUEUE(seq, wake 1, requeue the
 *            rest onto m->serial, the mutex's waiter queue), then make the
 *            serial word 2 (or take it with 2 and release it at once), so
 *            the requeued waiters are woken one at a time, each when the
 *            previous one became top waiter and got the mutex: no
 *            thundering herd.  Requeueing onto m->val instead would put
 *            sleepers beside the top waiter on the word; a wake-up could
 *            then reach one of them, which queues behind the sleeping top
 *            waiter's serial lock: deadlock.  A relocking waiter takes the
 *            serial lock with 2 and never steals, so its release passes
 *            the wake-up on (tp_serial.h's invariant).
 *
 * Lost wake-ups: seq++ then an SC read of `waiters` (fetch_add 0) in the
 * waker pairs with waiters++ then an SC read of seq in the waiter
 * (store-buffering, all four seq_cst): either the waker sees the waiter, or the
 * waiter reads the new seq and does not sleep on the old one.  A waiter
 * whose wait ends in ETIMEDOUT after seq moved may have swallowed a
 * FUTEX_WAKE meant for another waiter: it passes one on.
 */
#define _GNU_SOURCE
#include <limits.h>

#include "core/misuse.h"
#include "lock/tp_internal.h"
#include "qlock/tp_cond.h"

#define CLS QC_CLASS_tp_cond

#define DESTROYING 0x80000000u /* c->waiters: destroy waits */

/*
 * A waiter's last access to c: from here, destroy may return and the
 * memory be reused.  Release: our reads of c happen-before destroy's
 * return (its acquire load of waiters); the FUTEX_WAKE names the address
 * only.
 */
static void cond_leave(qlock_tp_cond_t *c)
{
#ifndef QLOCK_MUTATE_TP_COND
	if (qa_fetch_sub_release(&c->waiters, 1u) == (DESTROYING | 1u))
#else /* model-check mutation (tests/model): must be caught */
	if (qa_fetch_sub_relaxed(&c->waiters, 1u) == (DESTROYING | 1u))
#endif
		qc_futex_wake(&c->waiters, 1, CLS, QC_OP_OTHER);
}

static int cond_wait(qlock_tp_cond_t *c, qlock_tp_mutex_t *m,
		     const struct timespec *abs, clockid_t clk, const char *fn)
{
	uint32_t seq, owner;
	int err = tp_check_deadline(abs, clk);

	if (err)
		return err;
	owner = qlock_tp_mutex_owner(m);
	if (qa_unlikely(owner != tp_self_tid()) && !tp_tid_forked_self(owner)) {
		/* Never wait or take the mutex for a caller without it. */
		qc_misuse(fn, "the mutex is not held by the caller", m);
		return EPERM;
	}
	qa_write(&c->mutex, m);
	if (qa_unlikely(qa_fetch_add(&c->waiters, 1u) & DESTROYING)) {
		cond_leave(c);
		qc_misuse(fn, "the condition variable was destroyed", c);
		return EINVAL;
	}
	/* SC read (an RMW: TSan rejects fences), see above. */
	seq = qa_fetch_add(&c->seq, 0u);
	qlock_tp_mutex_unlock(m);

	qc_event_inc(CLS, QC_EV_sleep);
	err = qc_futex_wait(&c->seq, seq, abs, clk, CLS, QC_OP_OTHER);
	if (err == ETIMEDOUT) {
		qc_event_inc(CLS, QC_EV_timeout);
		/* Still counted in waiters, so c is still there. */
		if (qa_read(&c->seq) != seq) {
			qc_event_inc(CLS, QC_EV_wake);
			qc_futex_wake(&c->seq, 1, CLS, QC_OP_OTHER);
		}
	}
	cond_leave(c);

	if (err == 0)
		tp_mutex_lock_cond(m); /* woken: maybe requeued */
	else /* timed out: not requeued, nobody to pass a wake-up to */
		qlock_tp_mutex_lock(m);
	return err == ETIMEDOUT ? ETIMEDOUT : 0;
}

QLOCK_API void qlock_tp_cond_wait(qlock_tp_cond_t *c, qlock_tp_mutex_t *m)
{
	cond_wait(c, m, NULL, CLOCK_MONOTONIC, "qlock_tp_cond_wait");
}

QLOCK_API int qlock_tp_cond_timedwait(qlock_tp_cond_t *c, qlock_tp_mutex_t *m,
				      const struct timespec *abs,
				      clockid_t clk)
{
	return cond_wait(c, m, abs, clk, "qlock_tp_cond_timedwait");
}

/* seq++ and tell whether anybody may be waiting (see the top). */
static bool bump(qlock_tp_cond_t *c)
{
	qa_fetch_add(&c->seq, 1u);
	return qa_fetch_add(&c->waiters, 0u) != 0; /* SC read */
}

QLOCK_API void qlock_tp_cond_signal(qlock_tp_cond_t *c)
{
	if (!bump(c))
		return;
	qc_event_inc(CLS, QC_EV_wake);
#ifndef QLOCK_MUTATE_WAKE_TP_COND /* the signal's wake */
	qc_futex_wake(&c->seq, 1, CLS, QC_OP_OTHER);
#endif /* else: model-check mutation (tests/model): must be caught */
}

QLOCK_API void qlock_tp_cond_broadcast(qlock_tp_cond_t *c)
{
	qlock_tp_mutex_t *m;

	if (!bump(c))
		return;
	qc_event_inc(CLS, QC_EV_wake);
	m = qa_read(&c->mutex);
	if (!m) { /* cannot happen while waiters != 0; be safe */
		qc_futex_wake(&c->seq, INT_MAX, CLS, QC_OP_OTHER);
		return;
	}
	for (;;) {
		uint32_t s = qa_read(&c->seq);

#ifndef QLOCK_MUTATE_WAKE_TP_COND /* the requeue of the other sleepers */
		if (qc_futex_cmp_requeue(&c->seq, s, 1, &m->serial, INT_MAX,
					 CLS, QC_OP_OTHER) >= 0)
#else /* model-check mutation (tests/model): must be caught */
		if (qc_futex_cmp_requeue(&c->seq, s, 1, &m->serial, 0,
					 CLS, QC_OP_OTHER) >= 0)
#endif
			break;
	}
	/* Requeued sleepers need serial == 2 with a holder that will
	 * release it: mark a held word, or take it (2) and release it,
	 * which wakes the first of them. */
	for (;;) {
		uint32_t s = qa_read(&m->serial);

		if (s == 2)
			break;
		if (s == 1 && qa_cmpxchg(&m->serial, 1u, 2u) == 1)
			break;
		if (s == 0 && qa_cmpxchg_acquire(&m->serial, 0u, 2u) == 0) {
			tp_serial_unlock(&m->serial, &m->nval,
					 QC_CLASS_tp_mutex, QC_OP_OTHER);
			break;
		}
	}
}

QLOCK_API void qlock_tp_cond_destroy(qlock_tp_cond_t *c)
{
	uint32_t w = qa_fetch_or(&c->waiters, DESTROYING) | DESTROYING;
	qlock_tp_mutex_t *m;

	if (qa_likely(w == DESTROYING))
		return;
	/* Woken waiters leave by themselves; make sure nobody still
	 * sleeps, here or requeued onto the mutex's serial word (with
	 * the mutex held by our caller, they would wait for it forever). */
	qa_fetch_add(&c->seq, 1u);
	qc_event_inc(CLS, QC_EV_wake);
	qc_futex_wake(&c->seq, INT_MAX, CLS, QC_OP_OTHER);
	m = qa_read(&c->mutex);
	if (m)
		qc_futex_wake(&m->serial, INT_MAX, CLS, QC_OP_OTHER);
	/* Acquire pairs with cond_leave()'s release. */
	while ((w = qa_read_acquire(&c->waiters)) != DESTROYING)
		qc_futex_wait(&c->waiters, w, NULL, CLOCK_MONOTONIC, CLS,
			      QC_OP_OTHER);
}
