/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the WW futex mutex (see docs/testing.md for the
 * convention): two lockers and one trylocker, a few iterations each, plain
 * shared data, assert.  Model build (model_core.h); also runs as an
 * ordinary test.  Mutation: the trylock/fast-path acquire made relaxed.
 *
 * modelcheck:
 */
#include "model_core.h"

#include "baseline/ww_mutex.c"

#define ITERS MODEL_ITERS(1, 2)

static struct ww_mutex m;
static int counter; /* plain: protected by m */
static int inside;  /* plain: 1 while someone is in the critical section */

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
		ww_mutex_lock(&m);
		critical_section();
		ww_mutex_unlock(&m);
	}
	return NULL;
}

static void *trylocker(void *arg)
{
	int *taken = arg;

	if (ww_mutex_trylock(&m)) {
		critical_section();
		ww_mutex_unlock(&m);
		*taken = 1;
	}
	return NULL;
}

int main(void)
{
	int taken = 0;

	ww_mutex_init(&m);
	model_spawn(locker, NULL);
	model_spawn(locker, NULL);
	model_spawn(trylocker, &taken);
	model_join_all();
	assert(counter == 2 * ITERS + taken);
	assert(m.word == 0); /* every unlock left the lock free */
	return 0;
}
