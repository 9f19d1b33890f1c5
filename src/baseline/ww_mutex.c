/* SPDX-License-Identifier: MIT */
/*
 * The seed 004 "WW" wait-wake futex mutex (Drepper's "Futexes Are
 * Tricky" mutex 2, glibc's lowlevellock): the WW baseline of perf bench
 * futex.
 *
 * Word layout (one uint32_t, also the futex word):
 *   0  free
 *   1  locked, no waiters
 *   2  locked, maybe waiters (an unlock must FUTEX_WAKE)
 *
 * Transitions:
 *   lock:    cmpxchg 0 -> 1; else loop { xchg(2) == 0 -> taken (as 2,
 *            since others may still sleep); FUTEX_WAIT(word, 2) }
 *   unlock:  xchg 0; if the old value was 2, FUTEX_WAKE one waiter
 *   trylock: cmpxchg 0 -> 1
 *   timed:   the lock loop with a deadline on FUTEX_WAIT; a timeout
 *            leaves 2 behind, which costs at most one spurious wake.
 * Futex calls count under class ww-mutex, ops LOCK / UNLOCK.
 */
#include "baseline.h"

#include <errno.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"

enum { WW_FREE = 0, WW_LOCKED = 1, WW_CONTENDED = 2 };

void ww_mutex_init(struct ww_mutex *m)
{
	qa_write(&m->word, WW_FREE);
}

bool ww_mutex_trylock(struct ww_mutex *m)
{
	/* Acquire: pairs with the release xchg in ww_mutex_unlock(). */
#ifndef QLOCK_MUTATE_WW_MUTEX
	return qa_cmpxchg_acquire(&m->word, WW_FREE, WW_LOCKED) == WW_FREE;
#else /* model-check mutation (tests/model): must be caught */
	return qa_cmpxchg_relaxed(&m->word, WW_FREE, WW_LOCKED) == WW_FREE;
#endif
}

/* Sleep-and-retry loop shared by lock and timed lock (abs may be NULL). */
static int ww_mutex_lock_slow(struct ww_mutex *m, const struct timespec *abs)
{
	qc_event_inc(QC_CLASS_ww_mutex, QC_EV_slowpath);
	/* Acquire: pairs with the release xchg in ww_mutex_unlock().  We
	 * store 2, not 1: other waiters may still be asleep. */
	while (qa_xchg_acquire(&m->word, WW_CONTENDED) != WW_FREE) {
		int err = qc_futex_wait(&m->word, WW_CONTENDED, abs,
					CLOCK_MONOTONIC, QC_CLASS_ww_mutex,
					QC_OP_LOCK);

		qc_event_inc(QC_CLASS_ww_mutex, QC_EV_sleep);
		if (err) {
			qc_event_inc(QC_CLASS_ww_mutex, QC_EV_timeout);
			return err;
		}
	}
	return 0;
}

void ww_mutex_lock(struct ww_mutex *m)
{
	if (qa_likely(ww_mutex_trylock(m)))
		return;
	(void)ww_mutex_lock_slow(m, NULL);
}

int ww_mutex_timedlock(struct ww_mutex *m, const struct timespec *abs)
{
	if (qa_likely(ww_mutex_trylock(m)))
		return 0;
	if (!qc_timespec_valid(abs))
		return EINVAL;
	return ww_mutex_lock_slow(m, abs);
}

void ww_mutex_unlock(struct ww_mutex *m)
{
	/* Release: the critical section happens before the next locker's
	 * acquire cmpxchg/xchg. */
	if (qa_xchg_release(&m->word, WW_FREE) == WW_CONTENDED) {
		qc_event_inc(QC_CLASS_ww_mutex, QC_EV_wake);
		(void)qc_futex_wake(&m->word, 1, QC_CLASS_ww_mutex,
				    QC_OP_UNLOCK);
	}
}
