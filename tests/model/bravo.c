/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the read bias (core/bravo.h) on the qrwlock's
 * biased variant: a writer against two readers of a lock that starts
 * biased, plain data protected by the lock, assert, no I/O.  The reader's
 * publish of its slot and its second look at the bias race the writer's
 * revoke and its scan of the table: the store-load pair B1/F1.  Each
 * reader reads twice: a read while the bias is on goes through its slot,
 * one after the writer's revoke through the count word.  Variant 1 also
 * has a reader take the lock with the trylock and the writer with the
 * write trylock, which must fail (and give the count word back) while a
 * biased reader holds the lock.  The model's table has 16 slots (2 lines
 * of 8).  Mutation: the reader's fence B1 dropped (the store buffering
 * shape: the reader sees the bias still on, the writer misses its slot).
 *
 * modelcheck: skip the checker does not finish it within its time bound (three threads through the qrwlock, its queue and 16 slots); it runs as an ordinary test (model_bravo, model_bravo_mutant is built)
 */
#include "model_core.h"

#include "lock/qspinlock.c"
#include "lock/qrwlock.c"

#include "qlock/qlock.h"
#include "qlock/qrwlock.h"

enum { ITERS = MODEL_ITERS(1, 2) };

static qlock_rwlock_biased_t lock = QLOCK_RWLOCK_BIASED_INIT;
static int x, y;      /* plain data: the writer keeps x == y */
static int writes, tries;
static int variant;

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		if (variant == 1 && i == 0) {
			if (!qlock_biased_write_trylock(&lock))
				continue;
			tries++;
		} else {
			qlock_biased_write_lock(&lock);
		}
		x++;
		assert(x == y + 1);
		y++;
		writes++;
		qlock_biased_write_unlock(&lock);
	}
	return NULL;
}

static void *reader(void *arg)
{
	bool try = arg != NULL && variant == 1;

	for (int i = 0; i < 2; i++) {
		if (try && i == 0) {
			if (!qlock_biased_read_trylock(&lock))
				continue;
		} else {
			qlock_biased_read_lock(&lock);
		}
		assert(x == y);
		qlock_biased_read_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	for_each_variant(variant, 2) {
		x = y = writes = tries = 0;
		lock.bias = QC_BRAVO_CAPABLE | QC_BRAVO_ON;
		model_spawn(writer, NULL);
		model_spawn(reader, NULL);
		model_spawn(reader, &lock);
		model_join_all();
		assert(writes == x && x == y);
		assert(writes == ITERS - (variant == 1 && tries == 0));
		assert(lock.rw.cnts == 0);
		assert(qc_bravo_readers(&lock) == 0);
	}
	return 0;
}
