/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the rwsem (src/lock/rwsem.c): one writer (its
 * last acquisition downgraded to a read lock) and two readers (one of
 * them tries down_read_trylock first), two iterations each (one under
 * GenMC), plain data protected by the lock, assert, no I/O.  Model build
 * (model_core.h): a futex sleeper returns only when a wake reaches it.  A
 * spin limit of 1 parks the wait-lock waiters almost at once, owner
 * spinning is off (the OSQ has its own harness) and the hand-off time is 0,
 * so a first waiter that finds the lock taken sets the hand-off bit at
 * once.  Both wake-up variants run.  Mutation: down_read's acquire made
 * relaxed.
 *
 * modelcheck: skip GenMC 0.10.3 does not finish it within 300 s yet (unroll 2; nor writer + one reader in 240 s)
 */
#include "model_core.h"

#include "core/osq.c"
#include "lock/rwsem.c"

#include "lock/rwsem_variants.h"
#include "qlock/qlock.h"
#include "qlock/rwsem.h"

enum { ITERS = MODEL_ITERS(1, 2) };

static qlock_rwsem_t sem = QLOCK_RWSEM_INIT;
static int x, y;   /* plain data: the writer keeps x == y */
static int writes;
static bool front;

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		front ? qrwsem_front_down_write(&sem) : qlock_down_write(&sem);
		x++;
		assert(x == y + 1);
		y++;
		writes++;
		if (i == ITERS - 1) {
			front ? qrwsem_front_downgrade_write(&sem)
			      : qlock_downgrade_write(&sem);
			assert(x == y);
			front ? qrwsem_front_up_read(&sem) : qlock_up_read(&sem);
		} else {
			front ? qrwsem_front_up_write(&sem) : qlock_up_write(&sem);
		}
	}
	return NULL;
}

static void *reader(void *arg)
{
	bool try = arg != NULL;

	for (int i = 0; i < ITERS; i++) {
		if (try && i == 0) {
			if (!qlock_down_read_trylock(&sem))
				continue;
		} else {
			front ? qrwsem_front_down_read(&sem) : qlock_down_read(&sem);
		}
		assert(x == y);
		front ? qrwsem_front_up_read(&sem) : qlock_up_read(&sem);
	}
	return NULL;
}

int main(void)
{

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, 0);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0);
	int v;

	for_each_variant(v, 2) {
		front = v == 1;
		x = y = writes = 0;
		model_spawn(writer, NULL);
		model_spawn(reader, NULL);
		model_spawn(reader, &sem);
		model_join_all();
		assert(writes == ITERS && x == ITERS && y == ITERS);
		assert(sem.count == 0 && sem.wait_lock == 0);
		assert(sem.wait_list == NULL);
	}
	return 0;
}
