/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the TP futex mutex (docs/testing.md): two
 * lockers and one trylocker, a few iterations, plain data, assert.  Built
 * in the model build (model_core.h).  A spin limit of 1,
 * no owner spinning and an immediate hand-off threshold send the waiters
 * through the serial-lock sleep, the top waiter's sleep on the word and
 * the unlocker's hand-off.  Mutation: the fast-path acquire made relaxed.
 *
 * modelcheck: skip GenMC 0.10.3 does not finish it within 300 s yet (unroll 2)
 */
#include "model_core.h"

#include "core/osq.c"
#include "lock/tp_mutex.c"

#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

#define ITERS MODEL_ITERS(1, 2)

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static int counter; /* plain: protected by m */
static int inside;

static void critical_section(void)
{
	assert(!inside);
	inside = 1;
	counter++;
	inside = 0;
}

static void *locker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		qlock_tp_mutex_lock(&m);
		assert(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
		critical_section();
		qlock_tp_mutex_unlock(&m);
	}
	return NULL;
}

static void *trylocker(void *arg)
{
	int *taken = arg;

	if (qlock_tp_mutex_trylock(&m)) {
		critical_section();
		qlock_tp_mutex_unlock(&m);
		*taken = 1;
	}
	return NULL;
}

int main(void)
{
	int taken = 0;

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, 0);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0);
	model_spawn(locker, NULL);
	model_spawn(locker, NULL);
	model_spawn(trylocker, &taken);
	model_join_all();
	assert(counter == 2 * ITERS + taken);
	assert(m.val == 0 && m.serial == 0 && m.handoff == 0 && m.nval == 0);
	return 0;
}
