/* SPDX-License-Identifier: MIT */
/*
 * fork() in the child: repairing queued mutexes a parent's thread waited on.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "shim.h"

/*
 * fork(): the child has only the forking thread, but a queued lock may
 * still record waiters of the parent's other threads (a qspinlock tail,
 * the TP mutex's serial word, a SLOW byte, a WAITERS bit); the first
 * child thread to contend would wait behind a ghost forever.  So every
 * fork bumps a generation in the child, each mutex remembers the
 * generation it was last checked in, and the first thread that finds the
 * mutex contended (or unlocks it) in a new generation repairs it: it
 * keeps "held" and drops all waiter state.  The uncontended lock path
 * does not look at it; unlock pays two loads.  Spinlocks (4 bytes) have
 * no room for a generation: re-initialise them in the child.
 */
uint32_t shim_forkgen;

void shim_atfork_child(void)
{
	uint32_t g = shim_forkgen + 1;

	qa_write(&shim_forkgen, g == GEN_BUSY ? 0 : g);
}

__attribute__((noinline)) void mutex_fork_repair(struct qm *q, uint32_t g)
{
	uint32_t cur;

	for (;;) {
		cur = qa_read_acquire(&q->gen);
		if (cur == g)
			return;
		if (cur == GEN_BUSY) {
			sched_yield();
			continue;
		}
		if (qa_try_cmpxchg_acquire(&q->gen, &cur, GEN_BUSY))
			break;
	}
	uint32_t v = qa_read(&q->word[0]), n;
	switch (shim_malg) {
#ifdef SHIM_WITH_TP
	case MALG_TP: /* keep the owner, drop WAITERS and the waiter words */
		do
			n = v & ~QLOCK_TP_WAITERS;
		while (!qa_try_cmpxchg(&q->word[0], &v, n));
		qa_write(&q->word[1], 0); /* serial */
		qa_write(&q->word[2], 0); /* handoff */
		qa_write(&q->word[3], 0); /* nval */
		break;
#endif
	default: /* qspinlock: held (1, or 3 = SLOW) stays held; no tail or pending */
		do
			n = (v & 0xff) ? 1 : 0;
		while (!qa_try_cmpxchg(&q->word[0], &v, n));
		break;
	}
	qa_write_release(&q->gen, g);
}

