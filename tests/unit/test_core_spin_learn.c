/* SPDX-License-Identifier: MIT */
/*
 * The learned spin budget (core/spin.h): a wait whose spin ran out halves
 * the thread's budget down to spin_limit/32, a wait that ended while
 * spinning doubles it back up to spin_limit, QLOCK_SPIN_ADAPT=0 keeps the
 * fixed bound, and the budget is per thread.  The owner-spin budget
 * (nanoseconds) halves after a spin that ended in a sleep, down to 1/16,
 * and doubles after one that took the lock.  Counted in spins and budget
 * values, never in time.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>

#include "core/spin.h"
#include "qlock/qlock.h"

/* One wait of a spinner with nothing to wait for: spins it took. */
static uint32_t spins_of_a_round(void)
{
	struct qc_spinner s;

	qc_spinner_init(&s);
	while (qc_spin_continue(&s))
		;
	qc_spin_learn(true);
	return s.spent;
}

static void *fresh_thread(void *arg)
{
	(void)arg;
	assert(qc_spin_budget() == 512); /* other threads' waits do not count */
	return NULL;
}

int main(void)
{
	pthread_t t;

	assert(qlock_tune_get(QLOCK_TUNE_SPIN_ADAPT) == 1);
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_ADAPT, 2) == EINVAL);
	assert(qlock_tune_get(QLOCK_TUNE_SPIN_LIMIT) == 512);
	assert(qc_spin_budget() == 512);

	/* Waits that run out: 512 -> 256 -> ... -> 16, and no lower. */
	assert(spins_of_a_round() == 512);
	assert(qc_spin_budget() == 256);
	for (int i = 0; i < 10; i++)
		(void)spins_of_a_round();
	assert(qc_spin_budget() == 16);
	assert(spins_of_a_round() == 16);

	assert(!pthread_create(&t, NULL, fresh_thread, NULL));
	assert(!pthread_join(t, NULL));

	/* A wait that ends while spinning doubles it back. */
	qc_spin_learn(false);
	assert(qc_spin_budget() == 32);
	for (int i = 0; i < 10; i++)
		qc_spin_learn(false);
	assert(qc_spin_budget() == 512);

	/* Learning off: the fixed bound, whatever was learned. */
	for (int i = 0; i < 3; i++)
		(void)spins_of_a_round();
	assert(qc_spin_budget() == 64);
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_ADAPT, 0) == 0);
	assert(qc_spin_budget() == 512);
	qc_spin_learn(true);
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_ADAPT, 1) == 0);
	assert(qc_spin_budget() == 64);

	/* The owner-spin budget: 20 us, halved down to 1/16, doubled back;
	 * off with learning off. */
	assert(qc_owner_spin_budget() == 20000);
	for (int i = 0; i < 6; i++)
		qc_owner_spin_learn(false);
	assert(qc_owner_spin_budget() == 20000 >> 4);
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_ADAPT, 0) == 0);
	assert(qc_owner_spin_budget() == 20000);
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_ADAPT, 1) == 0);
	qc_owner_spin_learn(true);
	assert(qc_owner_spin_budget() == 20000 >> 3);
	for (int i = 0; i < 6; i++)
		qc_owner_spin_learn(true);
	assert(qc_owner_spin_budget() == 20000);

	/* A lower limit caps what was learned. */
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 32) == 0);
	assert(qc_spin_budget() == 32);
	return 0;
}
