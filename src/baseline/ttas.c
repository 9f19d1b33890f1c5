/* SPDX-License-Identifier: MIT */
/*
 * Test-and-test-and-set spinlock: waiters never sleep (a pure-spinner
 * baseline); unfair, no queue.
 *
 * Word layout (one uint32_t): 0 free, 1 locked.
 *
 * Transitions:
 *   lock:    xchg(word, 1) until it returns 0, spinning on plain reads
 *            while the word is 1 (the "test" before the test-and-set keeps
 *            the cache line shared while the lock is held)
 *   unlock:  store 0
 */
#include "baseline.h"

#include <errno.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"

void ttas_init(struct ttas_lock *l)
{
	qa_write(&l->word, 0);
}

bool ttas_trylock(struct ttas_lock *l)
{
	/* Acquire: pairs with the release store in ttas_unlock(). */
	return qa_read(&l->word) == 0 && qa_xchg_acquire(&l->word, 1) == 0;
}

void ttas_lock(struct ttas_lock *l)
{
	uint32_t spins = 0;

	while (!ttas_trylock(l)) {
		/* Relaxed: only a hint; ttas_trylock() orders. */
		while (qa_read(&l->word)) {
			qa_cpu_relax();
			spins++;
		}
	}
	if (spins)
		qc_event_add(QC_CLASS_ttas, QC_EV_spin, spins);
}

int ttas_timedlock(struct ttas_lock *l, const struct timespec *abs)
{
	if (!qc_timespec_valid(abs))
		return EINVAL;
	while (!ttas_trylock(l)) {
		if (qc_deadline_passed(abs, CLOCK_MONOTONIC))
			return ETIMEDOUT;
		qa_cpu_relax();
	}
	return 0;
}

void ttas_unlock(struct ttas_lock *l)
{
	/* Release: pairs with the acquire xchg in ttas_trylock(). */
	qa_write_release(&l->word, 0);
}
