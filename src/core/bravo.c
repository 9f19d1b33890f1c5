/* SPDX-License-Identifier: MIT */
/*
 * The visible-readers table of the read bias, its writer's revocation and
 * its fork handling; the protocol is described in core/bravo.h.
 */
#define _GNU_SOURCE
#include "bravo.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "futex.h" /* qc_now_ns() */

const void *qc_bravo_table[QC_BRAVO_SLOTS] __attribute__((aligned(64)));
#ifdef QLOCK_UNDER_GENMC
struct qc_bravo_self qc_bravo_model_me[QC_MODEL_THREADS];
#else
__thread __attribute__((tls_model("initial-exec")))
	struct qc_bravo_self qc_bravo_me;
#endif

static uint32_t bravo_threads;

uint32_t qc_bravo_seq_assign(void)
{
#ifdef QLOCK_MODEL
	uint32_t seq = (uint32_t)qc_model_self() + 1u;
	(void)bravo_threads;
#else
	uint32_t seq = qa_add_return_relaxed(&bravo_threads, 1u);

	if (seq == 0) /* after 2^32 threads: 0 means "none yet" */
		seq = qa_add_return_relaxed(&bravo_threads, 1u);
#endif
	qc_bravo_me.seq = seq;
	return seq;
}

static uint32_t bravo_time(uint64_t ns)
{
	return (uint32_t)(ns >> 10) & QC_BRAVO_TMASK;
}

/* Has the inhibit time of word b passed at `now`?  Inhibit windows are at
 * most QC_BRAVO_INHIBIT_MAX_NS long, so a remainder above that is a time
 * in the past (modulo the 2^29 units of the word). */
static bool bravo_inhibit_passed(uint32_t b, uint64_t now)
{
	uint32_t left = ((b >> QC_BRAVO_TSHIFT) - bravo_time(now)) &
			QC_BRAVO_TMASK;

	return left == 0 || left > bravo_time(QC_BRAVO_INHIBIT_MAX_NS) + 1u;
}

void qc_bravo_enable_slow(uint32_t *bias, uint32_t b)
{
	if ((b & ~QC_BRAVO_CAPABLE) != 0 &&
	    !bravo_inhibit_passed(b, qc_now_ns()))
		return;
	/* B4: release, so that a biased reader that sees ON sees the
	 * critical sections that came before ours.  A failed cmpxchg: a
	 * concurrent reader did it. */
	(void)qa_try_cmpxchg_release(bias, &b, b | QC_BRAVO_ON);
}

static uint32_t bravo_word(uint32_t b, uint32_t flags, uint64_t until)
{
	return (b & QC_BRAVO_CAPABLE) | flags |
	       (bravo_time(until) << QC_BRAVO_TSHIFT);
}

/* A polite wait for a reader to leave its slot: spin, then yield, then
 * nap (readers do not wake writers: they only store NULL). */
static void bravo_pause(uint32_t round)
{
#ifdef QLOCK_MODEL
	(void)round;
	qc_model_relax();
#else
	if (round < 64) {
		qa_cpu_relax();
	} else if (round < 96) {
		sched_yield();
	} else {
		struct timespec ts = { 0, 20000L << (round < 104 ? (round - 96) / 2 : 4) };

		nanosleep(&ts, NULL); /* 20 us, growing to 320 us */
	}
#endif
}

#ifndef QLOCK_MODEL
static pid_t bravo_pid;
static void bravo_check_fork(void);
#endif

bool qc_bravo_revoke(const void *lock, uint32_t *bias, uint64_t budget_ns)
{
	uint64_t t0 = qc_now_ns(), now, rev, inhibit;
	uint64_t end = budget_ns == UINT64_MAX ? UINT64_MAX : t0 + budget_ns;
	uint32_t b = qa_read(bias);

	/* Off, and HOLD until the table is seen drained. */
#ifdef __SANITIZE_THREAD__
	qa_write_mb(bias, (b & ~QC_BRAVO_ON) | QC_BRAVO_HOLD); /* F1 (bravo.h) */
#elif !defined(QLOCK_MUTATE_BRAVO_REVOKE)
	qa_write(bias, (b & ~QC_BRAVO_ON) | QC_BRAVO_HOLD);
	qa_smp_mb(); /* F1: bias off, then read the slots (pairs with B1) */
#else
	qa_write(bias, (b & ~QC_BRAVO_ON) | QC_BRAVO_HOLD);
#endif
	for (uint32_t i = 0; i < QC_BRAVO_SLOTS; i++) {
		uint32_t round = 0;

		while (qc_bravo_read_slot(&qc_bravo_table[i]) == lock) { /* B3 */
			if (budget_ns == 0 ||
			    (round >= 64 && end != UINT64_MAX &&
			     qc_now_ns() >= end)) {
				now = qc_now_ns();
				inhibit = QC_BRAVO_N * (now - t0);
				if (inhibit > QC_BRAVO_INHIBIT_MAX_NS)
					inhibit = QC_BRAVO_INHIBIT_MAX_NS;
				qa_write(bias, bravo_word(b, QC_BRAVO_HOLD,
							  now + inhibit));
				return false;
			}
#ifndef QLOCK_MODEL
			if (round == 64)
				bravo_check_fork();
#endif
			bravo_pause(round);
			if (round < 200)
				round++;
		}
	}
	now = qc_now_ns();
	rev = now - t0;
	inhibit = rev > QC_BRAVO_INHIBIT_MAX_NS / QC_BRAVO_N
			  ? QC_BRAVO_INHIBIT_MAX_NS : QC_BRAVO_N * rev;
	qa_write(bias, bravo_word(b, 0, now + inhibit));
	return true;
}

bool qc_bravo_release_foreign(const void *lock)
{
	for (uint32_t i = 0; i < QC_BRAVO_SLOTS; i++) {
		const void *cur = lock;

		if (qa_read(&qc_bravo_table[i]) == lock &&
		    qa_try_cmpxchg_release(&qc_bravo_table[i], &cur, NULL))
			return true; /* B2 */
	}
	return false;
}

uint32_t qc_bravo_readers(const void *lock)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < QC_BRAVO_SLOTS; i++)
		n += qa_read(&qc_bravo_table[i]) == lock;
	return n;
}

void qc_bravo_fork_child(void)
{
	const struct qc_bravo_self *me = &qc_bravo_me;

	for (uint32_t i = 0; i < QC_BRAVO_SLOTS; i++) {
		bool mine = false;

		for (uint32_t j = 0; j < me->n; j++)
			mine |= me->held[j].slot == i;
		if (!mine)
			qa_write(&qc_bravo_table[i], NULL);
	}
}

#ifndef QLOCK_MODEL
/*
 * fork(): the atfork child handler frees the slots of the parent's other
 * threads.  A handler of another library may run before it and write a
 * lock in the child: a writer that has waited a while looks at the pid
 * too, and does the same if the process changed (the child still has
 * one thread then).
 */
static void bravo_atfork_child(void)
{
	bravo_pid = getpid();
	qc_bravo_fork_child();
}

static void bravo_check_fork(void)
{
	if (qa_read(&bravo_pid) != getpid())
		bravo_atfork_child();
}

__attribute__((constructor)) static void bravo_setup(void)
{
	bravo_pid = getpid();
	(void)pthread_atfork(NULL, NULL, bravo_atfork_child);
}
#endif
