/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the rwsem (src/lock/rwsem.c and rwsem_wait.c):
 * plain data x == y kept by writers, checked by readers, assert, no I/O.
 * Model build (model_core.h): a futex sleeper returns only when a wake
 * reaches it.
 * Spin limit 1 (wait-lock and queue waiters park almost at once), no owner
 * spinning and a hand-off time of 0 unless a variant says otherwise.  Each
 * variant is one check reaching one path, two threads, one iteration each
 * (a third lock user multiplies GenMC's work past any budget, unless main
 * orders them as in 7 to 9):
 *   0  reader wake-up: a writer and a reader; a reader queued behind the
 *      writer is granted by the unlock's wake-up (a batch of one: the
 *      count pre-added, the grant's release, the futex wake)
 *   1  wake-front: as 0 on rwsem-wake-front (seed 002's "before")
 *   2  writer hand-off: two writers; the first waiter finds the lock
 *      held, sets HANDOFF at once and is handed the lock at the unlock
 *   3  OSQ spinning: two writers with an owner-spin budget that does not
 *      run out under the checker (its clock stands still): the second
 *      spins in the OSQ on the owner and takes the lock unqueued
 *   4  timed-out reader: as 0 with a reader whose futex wait may time out
 *      anywhere: it leaves the queue (clearing WAITERS) unless the
 *      writer's wake-up granted it first
 *   5  timed-out writer: a reader and a timed writer, likewise
 *   6  downgrade: a writer downgrades to a read lock while a reader
 *      queues: the downgrade wakes it to share
 *   7  batch of two: main holds the write lock while two readers queue
 *      (main starts the second once the first sleeps, and releases once
 *      both sleep: model_await_asleep prunes every other order, which
 *      the two-thread variants cover); one wake-up grants both
 *   8  wake-front stopping at a writer: main holds it while a reader
 *      and a writer queue, ordered as 7 (rwsem-wake-front): the wake-up
 *      grants the reader and stops at the writer, which the reader's
 *      unlock wakes
 *   9  past a writer: main holds it while a reader, a writer and a
 *      reader queue, ordered as 7: the wake-up grants both readers,
 *      skipping the writer; the second reader unlocks only once the
 *      first has returned (the other order is the same path, the roles
 *      swapped), and the last one out wakes the writer
 *   8 and 9 end with a late reader: main, if the queued writer has
 *   returned by then (a relaxed flag, no happens-before), read-locks on
 *   the fast path after the writer's release, which alone orders the
 *   writer's section before main's reads (the executions where it has not
 *   returned yet run on to the join, so that a lost wake-up is still an
 *   error, not an await blocked for ever)
 *   8 and 9 await each sleeper synchronised with its sleep
 *   (model_await_asleep_synced): unsynchronised, a later thread may read
 *   the sleeper's older stores, views that multiply with three waiters.
 *   Variant 9 under RC11 ran over 210 s without that, over 290 s without
 *   the readers' order, 2 s with both.  7 to 9 need a third loop
 *   iteration (-unroll=3 for them: the readers' wait; in 9 also the
 *   wake-up's walk over three waiters)
 * Mutation: down_read's acquire made relaxed (the variants where a reader
 * may take the fast path after a writer's release: in 7 every reader
 * queues; in 8 and 9 main's late read).  Wake mutation: the wake of the waiters a wake-up granted
 * dropped (the variants where one sleeps untimed and is granted; 7 left
 * out).
 * GenMC options: the futex is kept out of line (QC_MODEL_FUTEX_OUT_OF_LINE,
 * core/futex.c), and so are the slow paths that call it; with functions
 * out of line GenMC 0.10.3's instruction caching replays a stale stack
 * address (variant 5: "access to freed memory" on a new frame's first
 * store), so it is off (--disable-instruction-caching).
 *
 * modelcheck: -unroll=2 --disable-instruction-caching variants=0,1,2,3,4,5,6,7,8,9 variant-unroll=7:3,8:3,9:3 mutants=0,1,4,6,8,9 wake-mutants=0,1,2,6,8,9
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
#include "model_core.h"

#include "core/osq.c"
#include "lock/rwsem.c"
#include "lock/rwsem_wait.c"

#include "lock/rwsem_variants.h"
#include "qlock/qlock.h"
#include "qlock/rwsem.h"

#include "model_rwdata.h"

static qlock_rwsem_t sem = QLOCK_RWSEM_INIT;
static int timeouts;  /* plain: one timed thread per variant */
static int variant;

static bool front(void)
{
	return variant == 1 || variant == 8;
}

static void down_write(void)
{
	front() ? qrwsem_front_down_write(&sem) : qlock_down_write(&sem);
}

static void up_write(void)
{
	front() ? qrwsem_front_up_write(&sem) : qlock_up_write(&sem);
}

static void *writer(void *arg)
{
	(void)arg;
	down_write();
	write_section();
	up_write();
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	front() ? qrwsem_front_down_read(&sem) : qlock_down_read(&sem);
	read_section();
	front() ? qrwsem_front_up_read(&sem) : qlock_up_read(&sem);
	return NULL;
}

/*
 * Variant 9: the second reader unlocks only once the first has returned,
 * the way model_await_asleep() orders main (an assume under GenMC, a
 * bounded poll as a test).  The flag's release pairs with the second
 * reader's acquire, so that its unlock sees all of the first's (relaxed,
 * 27540 executions under RC11 against 918).
 */
static uint32_t first_out; /* atomic */

static void *first_reader(void *arg)
{
	reader(arg);
	qa_write_release(&first_out, 1);
	return NULL;
}

static void *second_reader(void *arg)
{
	(void)arg;
	qlock_down_read(&sem);
	read_section();
#ifdef QLOCK_UNDER_GENMC
	__VERIFIER_assume(qa_read_acquire(&first_out) != 0);
#else
	model_poll(qa_read_acquire(&first_out));
#endif
	qlock_up_read(&sem);
	return NULL;
}

/*
 * Variants 8 and 9: the queued writer says it has returned (relaxed:
 * no happens-before from it; only the late reader's down_read may order
 * the writer's section before its own).
 */
static uint32_t writer_out; /* atomic */
static int late_skipped;    /* plain: main's */

static void *flagging_writer(void *arg)
{
	writer(arg);
	qa_write(&writer_out, 1);
	return NULL;
}

/* A deadline only a futex wait's time-out reaches under the checker. */
static const struct timespec later = { 1, 0 };

static void *timed_reader(void *arg)
{
	(void)arg;
	if (qlock_down_read_timed(&sem, &later, CLOCK_MONOTONIC) == ETIMEDOUT) {
		timeouts++;
		return NULL;
	}
	read_section();
	qlock_up_read(&sem);
	return NULL;
}

static void *timed_writer(void *arg)
{
	(void)arg;
	if (qlock_down_write_timed(&sem, &later, CLOCK_MONOTONIC) == ETIMEDOUT) {
		timeouts++;
		return NULL;
	}
	write_section();
	qlock_up_write(&sem);
	return NULL;
}

static void *downgrader(void *arg)
{
	(void)arg;
	qlock_down_write(&sem);
	write_section();
	qlock_downgrade_write(&sem);
	read_section();
	qlock_up_read(&sem);
	return NULL;
}

/*
 * Variants 7 to 9: main holds the write lock while the others queue, each
 * started once the one before sleeps (c may be NULL).
 */
static void behind_main(void *(*a)(void *), void *(*b)(void *),
			void *(*c)(void *))
{
	void (*await)(int) = variant == 7 ? model_await_asleep :
					    model_await_asleep_synced;

	down_write();
	model_spawn(a, NULL);
	await(1);
	model_spawn(b, NULL);
	await(2);
	if (c) {
		model_spawn(c, NULL);
		await(3);
	}
	write_section();
	up_write();
}

static void run_variant(void)
{
	switch (variant) {
	case 0:
	case 1:
		model_spawn(writer, NULL);
		model_spawn(reader, NULL);
		break;
	case 2:
	case 3:
		model_spawn(writer, NULL);
		model_spawn(writer, NULL);
		break;
	case 4:
		model_spawn(writer, NULL);
		model_spawn(timed_reader, NULL);
		break;
	case 5:
		model_spawn(reader, NULL);
		model_spawn(timed_writer, NULL);
		break;
	case 6:
		model_spawn(downgrader, NULL);
		model_spawn(reader, NULL);
		break;
	case 7:
		behind_main(reader, reader, NULL);
		break;
	case 8:
		behind_main(reader, flagging_writer, NULL);
		break;
	case 9:
		behind_main(first_reader, flagging_writer, second_reader);
		break;
	}
	if (variant == 8 || variant == 9) {
		/* The late reader: main, if the queued writer has returned
		 * (no await: a wake mutant would leave main blocked on it,
		 * not stopped for the lost-wake check). */
		if (qa_read(&writer_out))
			reader(NULL);
		else
			late_skipped = 1;
	}
	model_join_all();
}

/* Writes and reads each variant completes, timed-out ones excepted. */
static const int want_writes[] = { 1, 1, 2, 2, 1, 1, 1, 1, 2, 2 };
static const int want_reads[] = { 1, 1, 0, 0, 1, 1, 2, 2, 2, 3 };

int main(void)
{
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0);
	for_each_variant(variant, 10) {
		/* Variant 3 spins; under the checker the budget never ends. */
		qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS,
			       variant == 3 ? 1000000000L : 0);
		x = y = writes = timeouts = late_skipped = 0;
		qa_write(&reads, 0);
		qa_write(&first_out, 0);
		qa_write(&writer_out, 0);
		run_variant();
		assert(writes + (variant == 5 ? timeouts : 0) ==
		       want_writes[variant]);
		assert((int)qa_read(&reads) + (variant == 4 ? timeouts : 0) +
		       late_skipped == want_reads[variant]);
		assert(x == writes && y == writes);
		assert(sem.count == 0 && sem.wait_lock == 0);
		assert(sem.wait_list == NULL && sem.osq == 0);
	}
	return 0;
}
