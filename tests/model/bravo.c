/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the read bias (core/bravo.h) on the qrwlock's
 * biased variant: a reader's publish of its slot and
 * its second look at the bias (B1) against a writer's revoke and its scan
 * of the table (F1), the store-load pair.  The lock starts biased; plain
 * data protected by the lock, assert, no I/O.  The model's table has 2
 * slots, one per reader (core/bravo.h).
 *   0  a writer against a reader, once each
 *   1  a writer against two readers that use the read trylock (the scan
 *      meets both slots; a trylock does not queue on the count word)
 *   2  the trylocks: the write trylock, which revokes without waiting,
 *      must fail (and give the count word back) while a biased reader
 *      holds the lock; the read trylock goes through the slot
 *   3  a writer against a reader that reads twice: a read after the
 *      revoke takes the count word and turns the bias back on (B4), and
 *      the next read is biased again, after the writer's critical section
 * Mutation: the reader's fence B1 dropped (the store buffering shape: the
 * reader sees the bias still on, the writer misses its slot, and both
 * are inside).  tests/model/bravo_revoke.c, the same program, drops
 * the writer's F1.
 *
 * modelcheck: -unroll=3 variants=0,1,2,3
 */
#include "model_core.h"

#include "lock/qspinlock.c"
#include "lock/qrwlock.c"

#include "qlock/qlock.h"
#include "qlock/qrwlock.h"

static qlock_rwlock_biased_t lock = QLOCK_RWLOCK_BIASED_INIT;
static int x, y;      /* plain data: the writer keeps x == y */
static int writes, reads;
static int variant;

static void *writer(void *arg)
{
	(void)arg;
	if (variant == 2) {
		if (!qlock_biased_write_trylock(&lock))
			return NULL;
	} else {
		qlock_biased_write_lock(&lock);
	}
	x++;
	assert(x == y + 1);
	y++;
	writes++;
	qlock_biased_write_unlock(&lock);
	return NULL;
}

static void *reader(void *arg)
{
	int n = variant == 3 ? 2 : 1;

	(void)arg;
	for (int i = 0; i < n; i++) {
		if (variant == 1 || variant == 2) {
			if (!qlock_biased_read_trylock(&lock))
				continue;
		} else {
			qlock_biased_read_lock(&lock);
		}
		assert(x == y);
		qa_fetch_add_relaxed(&reads, 1);
		qlock_biased_read_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	for_each_variant(variant, 4) {
		x = y = writes = reads = 0;
		lock.bias = QC_BRAVO_CAPABLE | QC_BRAVO_ON;
		model_spawn(writer, NULL);
		model_spawn(reader, NULL);
		if (variant == 1)
			model_spawn(reader, NULL);
		model_join_all();
		assert(writes == x && x == y);
		if (variant != 2)
			assert(writes == 1);
		if (variant == 0 || variant == 3)
			assert(reads == (variant == 3 ? 2 : 1));
		assert(lock.rw.cnts == 0);
		assert(qc_bravo_readers(&lock) == 0);
	}
	return 0;
}
