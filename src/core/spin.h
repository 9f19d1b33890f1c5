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
 * The budget is learned per thread: a wait whose spin ran out (it parked,
 * or gave up stealing) halves the thread's budget, down to spin_limit/32;
 * a wait that ended while spinning doubles it, up to spin_limit.  Spinning
 * pays only while the holder runs and leaves soon; when the holders are
 * preempted (more runnable threads than CPUs: other programs, or ours
 * oversubscribed) spins run out, and after a few such waits the thread
 * parks within ~1/32 of the bound, so a waiter does not take the CPU time
 * a preempted holder needs.  One wait that ends while spinning (the lock
 * is passed quickly again) brings the budget back.  The model build keeps
 * the fixed bound: the learning is per thread and orders nothing.
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
	uint32_t spin_adapt;
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
	bool ran_out;   /* a round's budget ran out (the wait parked) */
};

#ifndef QLOCK_MODEL
/* This thread's learned budget; 0 = none learned yet (spin_limit). */
extern __thread uint32_t qc_spin_learned __attribute__((tls_model("initial-exec")));
#endif

/* Spins a round may take: the thread's learned budget within spin_limit. */
static inline uint32_t qc_spin_budget(void)
{
	uint32_t limit = qc_spin_limit();
#ifndef QLOCK_MODEL
	uint32_t b = qc_spin_learned;

	if (b && b < limit && qa_read(&qc_tune.spin_adapt))
		return b;
#endif
	return limit;
}

static inline void qc_spin_begin(struct qc_spinner *s)
{
	s->left = qc_spin_budget();
}

static inline void qc_spinner_init(struct qc_spinner *s)
{
	s->spent = 0;
	s->ran_out = false;
	qc_spin_begin(s);
}

/* One more spin if the budget allows it (true), else time to park (false). */
static inline bool qc_spin_continue(struct qc_spinner *s)
{
	if (s->left == 0) {
		s->ran_out = true;
		return false;
	}
	s->left--;
	s->spent++;
	qa_cpu_relax();
	return true;
}

/*
 * The owner-spin budget (QLOCK_OWNER_SPIN_NS: a time-bounded spin on a
 * holder that may be running, TP mutex and rwsem writers) is learned per
 * thread the same way, as glibc's adaptive mutex adapts its spin count:
 * a spin that ended in a sleep (the owner held the lock longer than the
 * budget, or was preempted) halves this thread's next budget, down to
 * 1/16; a spin that got the lock doubles it back.
 */
#define QC_OWNER_SPIN_SHIFT_MAX 4
#ifndef QLOCK_MODEL
extern __thread uint8_t qc_owner_spin_shift __attribute__((tls_model("initial-exec")));

static inline uint64_t qc_owner_spin_budget(void)
{
	return qa_read(&qc_tune.spin_adapt) ?
	       qc_owner_spin_ns() >> qc_owner_spin_shift : qc_owner_spin_ns();
}

static inline void qc_owner_spin_learn(bool got_by_spinning)
{
	if (got_by_spinning) {
		if (qc_owner_spin_shift > 0)
			qc_owner_spin_shift--;
	} else if (qc_owner_spin_shift < QC_OWNER_SPIN_SHIFT_MAX) {
		qc_owner_spin_shift++;
	}
}
#else /* the models explore every interleaving: nothing to learn */
static inline uint64_t qc_owner_spin_budget(void)
{
	return qc_owner_spin_ns();
}

static inline void qc_owner_spin_learn(bool got_by_spinning)
{
	(void)got_by_spinning;
}
#endif

/* Learn from a finished wait (see the top of this file). */
void qc_spin_learn(bool ran_out);

/* The wait is over: count its spins and learn from it.  Once per wait. */
static inline void qc_spin_account(const struct qc_spinner *s, enum qc_class c)
{
	if (s->spent)
		qc_event_add(c, QC_EV_spin, s->spent);
#ifndef QLOCK_MODEL
	if (s->ran_out || s->spent)
		qc_spin_learn(s->ran_out);
#endif
}

/* Read the environment (QLOCK_SPIN_LIMIT, ...) once; idempotent. */
void qc_tune_init_from_env(void);

#endif /* QLOCK_CORE_SPIN_H */
