/* SPDX-License-Identifier: MIT */
/*
 * A waiter does not spin on an owner that said it is off the CPU
 * (qlock_tp_off_cpu_begin(), which the pthread drop-in calls around
 * sched_yield() and the sleeps).  With the default budgets (a 20 us owner
 * spin, a 512-spin serial lock) the top waiter of a held mutex polls many
 * times before it sleeps; with its owner off the CPU it must sleep before
 * its first poll.  Counted in polls (QC_EV_spin), never in time.  And it
 * sleeps on the serial lock, handed to the owner (SERIAL), not on the
 * mutex word (tp_mutex.c, top_waiter()).  A timed lock that runs out
 * there, asleep on the serial lock, still counts its wait as one that
 * found the owner off the CPU (event owner_off_cpu).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "core/lockevent.h"
#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

#ifdef QLOCK_NO_LOCK_EVENTS
int main(void)
{
	puts("SKIP: lock event counters compiled out");
	return 77;
}
#else
static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;

static void *waiter(void *arg)
{
	(void)arg;
	qlock_tp_mutex_lock(&m);
	qlock_tp_mutex_unlock(&m);
	return NULL;
}

static uint64_t event(int c, int ev)
{
	struct qc_class_stats st;

	qc_stats_read((enum qc_class)c, &st);
	return st.ev[ev];
}

/* The mutex word while the waiter slept (polls_of_one_waiter()). */
static uint32_t word_asleep;

/* Hold the mutex, let one waiter block on it, release; the polls it made. */
static uint64_t polls_of_one_waiter(int c, int off_cpu)
{
	pthread_t t;
	time_t give_up = time(NULL) + 60;

	qc_stats_reset();
	qlock_tp_mutex_lock(&m);
	if (off_cpu)
		qlock_tp_off_cpu_begin();
	assert(pthread_create(&t, NULL, waiter, NULL) == 0);
	/* A hang guard, not a timing check. */
	while (event(c, QC_EV_sleep) == 0) {
		if (time(NULL) > give_up) {
			puts("FAIL: the waiter never slept on a held mutex");
			assert(0);
		}
		sched_yield();
	}
	word_asleep = __atomic_load_n(&m.val, __ATOMIC_RELAXED);
	if (off_cpu)
		qlock_tp_off_cpu_end();
	qlock_tp_mutex_unlock(&m);
	assert(pthread_join(t, NULL) == 0);
	return event(c, QC_EV_spin);
}

static int timed_err;

static void *timed_waiter(void *arg)
{
	struct timespec abs;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_nsec += 50 * 1000000L;
	if (abs.tv_nsec >= 1000000000L) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000L;
	}
	timed_err = qlock_tp_mutex_timedlock(&m, &abs, CLOCK_MONOTONIC);
	return NULL;
}

/* Hold the mutex off the CPU until a timed waiter gives up; the waits it
 * counted as finding the owner off the CPU. */
static uint64_t off_cpu_waits_of_a_timeout(int c)
{
	pthread_t t;

	qc_stats_reset();
	qlock_tp_mutex_lock(&m);
	qlock_tp_off_cpu_begin();
	assert(pthread_create(&t, NULL, timed_waiter, NULL) == 0);
	assert(pthread_join(t, NULL) == 0);
	qlock_tp_off_cpu_end();
	qlock_tp_mutex_unlock(&m);
	assert(timed_err == ETIMEDOUT);
	return event(c, QC_EV_owner_off_cpu);
}

int main(void)
{
	int c = qc_class_lookup("tp-mutex");
	uint64_t on, off;

	assert(c >= 0);
	/* No hand-off request while we hold it (that path sleeps at once). */
	assert(qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 60L * 1000000000L) == 0);
	on = polls_of_one_waiter(c, 0);
	off = polls_of_one_waiter(c, 1);
	printf("waiter polls before sleeping: owner running %llu, owner off the CPU %llu\n",
	       (unsigned long long)on, (unsigned long long)off);
	fflush(stdout);
	assert(on > 0);   /* the spin this test is about exists */
	assert(off == 0); /* and is skipped for an owner off the CPU */
	/* It sleeps on the serial lock, which it gave to the owner (SERIAL),
	 * not on the word (WAITERS|SLEEPER): the unlock's wake-up goes to
	 * the serial lock's longest sleeper, not to one fixed top waiter. */
	printf("word while the waiter slept for an owner off the CPU: %#x\n",
	       (unsigned)word_asleep);
	assert(word_asleep ==
	       (qlock_tp_self_tid() | QLOCK_TP_SERIAL));
	off = off_cpu_waits_of_a_timeout(c);
	printf("timed lock that ran out on the serial lock, owner off the CPU: "
	       "%llu off-CPU waits counted\n", (unsigned long long)off);
	assert(off == 1);
	return 0;
}
#endif /* QLOCK_NO_LOCK_EVENTS */
