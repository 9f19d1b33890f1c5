/* SPDX-License-Identifier: MIT */
/*
 * OSQ and signal handlers: a thread's per-slot OSQ node is claimed for as
 * long as the thread uses it, so a signal handler that spins on another
 * OSQ while its thread is entering or leaving one gets `false` (it must
 * not spin) instead of the same node.  The hook (QLOCK_TEST_HOOKS) raises
 * the signal at the two windows, deterministically: right after
 * qc_osq_lock() initialised the node (before it queues), and in
 * qc_osq_unlock() right before it passes the queue on.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <signal.h>
#include <stdio.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/osq.h"
#include "core/testhook.h"

static struct qc_osq osq1 = QC_OSQ_INIT, osq2 = QC_OSQ_INIT;
static volatile sig_atomic_t armed = -1; /* the point to interrupt */
static volatile sig_atomic_t handler_runs, handler_got_osq;

static void on_signal(int sig)
{
	(void)sig;
	handler_runs++;
	/* No deadline (both OSQs are free when asked): the answer must not
	 * depend on how long the thread is off the CPU. */
	if (qc_osq_lock(&osq2, UINT64_MAX)) {
		handler_got_osq++;
		qc_osq_unlock(&osq2);
	}
}

static void hook(enum qc_test_point p, const void *obj)
{
	if ((int)p != armed || obj != &osq1)
		return;
	armed = -1;
	raise(SIGUSR1); /* delivered to this thread before raise returns */
}

static void interrupt_at(enum qc_test_point p, const char *what)
{
	int runs = handler_runs, got = handler_got_osq;

	armed = p;
	if (p == QC_TP_OSQ_NODE)
		assert(qc_osq_lock(&osq1, UINT64_MAX));
	else
		qc_osq_unlock(&osq1);
	assert(armed == -1 && handler_runs == runs + 1);
	printf("osq: handler spinning on another OSQ %s: %s\n", what,
	       handler_got_osq == got ? "refused (own node in use)"
				      : "GOT THE SAME NODE");
	fflush(stdout);
	assert(handler_got_osq == got);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	assert(sigaction(SIGUSR1, &sa, NULL) == 0);
	qa_write_release(&qc_test_hook, hook);

	/* Outside any window the handler may use its node. */
	raise(SIGUSR1);
	assert(handler_runs == 1 && handler_got_osq == 1);

	interrupt_at(QC_TP_OSQ_NODE, "while its thread enters one");
	interrupt_at(QC_TP_OSQ_UNLOCK, "while its thread leaves one");
	assert(!qc_osq_is_locked(&osq1) && !qc_osq_is_locked(&osq2));
	return 0;
}
