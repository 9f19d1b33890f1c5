/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the queued rwlock: one writer and two readers
 * (one of them also tries read_trylock), two iterations each (one under
 * GenMC), plain data protected by the lock, assert, no I/O.  Model build
 * (model_core.h): the writer-byte cmpxchg and stores become whole-word
 * cmpxchg loops.  A spin limit of 1 sends
 * the queue head to sleep almost at once, so the parking marks (SLOW,
 * W_SLEEP) and the wake-up checks of the unlocks are exercised too.
 * Every variant runs: the current layout and the two 2015 ones.
 * Mutation: the write unlock's release made relaxed.  Wake mutation:
 * every wake of a sleeping waiter dropped.
 *
 * modelcheck: -unroll=2 variants=0,1,2 wake-mutants=0,1,2
 */
#include "model_core.h"

#include "lock/qspinlock.c"
#include "lock/qrwlock.c"

#include "lock/qrwlock_variants.h"
#include "qlock/qlock.h"
#include "qlock/qrwlock.h"

enum { ITERS = MODEL_ITERS(1, 2) };

static qlock_rwlock_t lock = QLOCK_RWLOCK_INIT;
static int x, y;      /* plain data: the writer keeps x == y */
static int writes;
static int variant;

static void rd(void)
{
	switch (variant) {
	case 0: qlock_read_lock(&lock); break;
	case 1: qrw_2015_loop_read_lock(&lock); break;
	default: qrw_2015_byte_read_lock(&lock); break;
	}
}

static bool tryrd(void)
{
	switch (variant) {
	case 0: return qlock_read_trylock(&lock);
	case 1: return qrw_2015_loop_read_trylock(&lock);
	default: return qrw_2015_byte_read_trylock(&lock);
	}
}

static void rdun(void)
{
	switch (variant) {
	case 0: qlock_read_unlock(&lock); break;
	case 1: qrw_2015_loop_read_unlock(&lock); break;
	default: qrw_2015_byte_read_unlock(&lock); break;
	}
}

static void wr(void)
{
	switch (variant) {
	case 0: qlock_write_lock(&lock); break;
	case 1: qrw_2015_loop_write_lock(&lock); break;
	default: qrw_2015_byte_write_lock(&lock); break;
	}
}

static void wrun(void)
{
	switch (variant) {
	case 0: qlock_write_unlock(&lock); break;
	case 1: qrw_2015_loop_write_unlock(&lock); break;
	default: qrw_2015_byte_write_unlock(&lock); break;
	}
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		wr();
		x++;
		assert(x == y + 1);
		y++;
		writes++;
		wrun();
	}
	return NULL;
}

static void *reader(void *arg)
{
	bool try = arg != NULL;

	for (int i = 0; i < ITERS; i++) {
		if (try && i == 0) {
			if (!tryrd())
				continue;
		} else {
			rd();
		}
		assert(x == y);
		rdun();
	}
	return NULL;
}

int main(void)
{

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	for_each_variant(variant, 3) {
		x = y = writes = 0;
		model_spawn(writer, NULL);
		model_spawn(reader, NULL);
		model_spawn(reader, &lock);
		model_join_all();
		assert(writes == ITERS && x == ITERS && y == ITERS);
		assert(lock.cnts == 0);
		assert(!qlock_rwlock_is_contended(&lock));
	}
	return 0;
}
