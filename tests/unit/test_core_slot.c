/* SPDX-License-Identifier: MIT */
/*
 * Thread slots: with qc_slot_set_limit(2), threads beyond the limit get
 * -1 (and may retry later); a slot given back at thread exit is reused.
 * Locks rely on this to fall back cleanly when slots run out.
 */
#include <assert.h>
#include <pthread.h>

#include "core/slot.h"

static pthread_barrier_t holding; /* slot holders + main */
static pthread_barrier_t release;

/* Take a slot and keep it (stay alive) until main says so. */
static void *hold_slot(void *arg)
{
	int *slot = arg;

	*slot = qc_slot_self();
	assert(qc_slot_self() == *slot); /* stable while the thread lives */
	pthread_barrier_wait(&holding);
	pthread_barrier_wait(&release);
	return NULL;
}

static void *probe_slot(void *arg)
{
	int *slot = arg;

	*slot = qc_slot_self();
	return NULL;
}

int main(void)
{
	int a = -2, b = -2, c = -2, d = -2;
	pthread_t ta, tb, tc;

	assert(qc_slot_set_limit(2) == 2 && qc_slot_limit() == 2);
	assert(qc_slots_in_use() == 0);

	pthread_barrier_init(&holding, NULL, 3);
	pthread_barrier_init(&release, NULL, 3);
	pthread_create(&ta, NULL, hold_slot, &a);
	pthread_create(&tb, NULL, hold_slot, &b);
	pthread_barrier_wait(&holding);
	assert(a >= 0 && a < 2 && b >= 0 && b < 2 && a != b);
	assert(qc_slots_in_use() == 2);

	/* Both slots are held: a third thread (and main) get none. */
	pthread_create(&tc, NULL, probe_slot, &c);
	pthread_join(tc, NULL);
	assert(c == -1);
	assert(qc_slot_self() == -1);

	pthread_barrier_wait(&release);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	/* Slots are given back at thread exit, before join returns. */
	assert(qc_slots_in_use() == 0);

	pthread_create(&tc, NULL, probe_slot, &d);
	pthread_join(tc, NULL);
	assert(d == a || d == b);
	/* Main retries on its next call and now gets one. */
	assert(qc_slot_self() >= 0);

	/* Restoring the limit caps it at QLOCK_MAX_THREADS. */
	assert(qc_slot_set_limit(1 << 30) == QLOCK_MAX_THREADS);
	pthread_barrier_destroy(&holding);
	pthread_barrier_destroy(&release);
	return 0;
}
