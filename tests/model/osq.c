/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the OSQ (src/core/osq.c): three threads, two
 * patient (no deadline: they must always get the OSQ, so a lost hand-off
 * hangs) and one that gives up at its first deadline check whenever it has
 * to queue (deadline 0), which drives the unqueue steps A, B and C against
 * the others' lock and unlock.  Holders update plain data and check they
 * are alone; the totals are checked after the joins.  Mutation: the tail
 * exchange made relaxed.
 *
 * modelcheck: -unroll=3
 */
#include "model_core.h"

#include "core/osq.c"


enum { ITERS = MODEL_ITERS(1, 2) };

static struct qc_osq osq = QC_OSQ_INIT;
static int inside, held;

static void *spinner(void *arg)
{
	bool patient = arg != NULL;

	for (int i = 0; i < ITERS; i++) {
		if (!qc_osq_lock(&osq, patient ? UINT64_MAX : 0)) {
			assert(!patient);
			continue;
		}
		assert(inside == 0);
		inside = 1;
		held++;
		inside = 0;
		qc_osq_unlock(&osq);
	}
	return NULL;
}

int main(void)
{

	model_spawn(spinner, &osq);
	model_spawn(spinner, &osq);
	model_spawn(spinner, NULL);
	model_join_all();
	assert(held >= 2 * ITERS && held <= 3 * ITERS);
	assert(osq.tail == 0);
	return 0;
}
