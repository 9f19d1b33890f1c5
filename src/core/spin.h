/* SPDX-License-Identifier: MIT */
/*
 * The spin-then-park policy shared by every sleeping path.
 *
 * A waiter spins (cpu_relax) at most `spin_limit` times, then sleeps on a
 * futex.  In user space any thread can be preempted, so an unbounded spin
 * (the kernel's native spinlock) can burn a whole time slice waiting for a
 * thread that is not running; the bound is the user-space version of the
 * paravirt qspinlock's SPIN_THRESHOLD.
 *
 *	struct qc_spinner s;
 *	qc_spin_begin(&s);
 *	while (!condition) {
 *		if (qc_spin_continue(&s))
 *			continue;
 *		... announce the sleep, qc_futex_wait(...), qc_spin_begin(&s);
 *	}
 *	qc_spin_account(&s, class);
 */
#ifndef QLOCK_CORE_SPIN_H
#define QLOCK_CORE_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#include "atomic.h"
#include "lockevent.h"

/* Tunables (see qlock/qlock.h for names, defaults and variables). */
struct qc_tunables {
	uint32_t spin_limit;
	uint64_t handoff_ns;
	uint64_t owner_spin_ns;
	uint32_t poll_max;
};

extern struct qc_tunables qc_tune;

static inline uint32_t qc_spin_limit(void)
{
	return qa_read(&qc_tune.spin_limit);
}

static inline uint64_t qc_handoff_ns(void)
{
	return qa_read(&qc_tune.handoff_ns);
}

static inline uint64_t qc_owner_spin_ns(void)
{
	return qa_read(&qc_tune.owner_spin_ns);
}

static inline uint32_t qc_poll_max(void)
{
	return qa_read(&qc_tune.poll_max);
}

struct qc_spinner {
	uint32_t left;  /* spins left before parking */
	uint32_t spent; /* spins done in all rounds, for the spin event */
};

static inline void qc_spin_begin(struct qc_spinner *s)
{
	s->left = qc_spin_limit();
}

static inline void qc_spinner_init(struct qc_spinner *s)
{
	s->spent = 0;
	qc_spin_begin(s);
}

/* One more spin if the budget allows it (true), else time to park (false). */
static inline bool qc_spin_continue(struct qc_spinner *s)
{
	if (s->left == 0)
		return false;
	s->left--;
	s->spent++;
	qa_cpu_relax();
	return true;
}

static inline void qc_spin_account(const struct qc_spinner *s, enum qc_class c)
{
	if (s->spent)
		qc_event_add(c, QC_EV_spin, s->spent);
}

/* Read the environment (QLOCK_SPIN_LIMIT, ...) once; idempotent. */
void qc_tune_init_from_env(void);

#endif /* QLOCK_CORE_SPIN_H */
