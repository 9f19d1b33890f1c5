/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the WW futex rwlock baseline
 * (src/baseline/ww_rwlock.c), both preferences: plain data x == y kept by
 * writers and checked by readers (a reader never sees a writer inside, a
 * writer is alone: any overlap is an assertion or a data race), assert, no
 * I/O.  Model build (model_core.h): a futex sleeper returns only when a
 * wake reaches it.  One iteration per thread; each variant is one check:
 *   0  reader-preferring, a writer and a reader: either may find the
 *      other inside, sleep on its event count and be woken by the unlock
 *   1  writer-preferring, the same (a waiting writer counted in wwait;
 *      the last reader's unlock wakes it)
 *   2  writer-preferring, two writers: the second sleeps on write_ec and,
 *      woken, takes the lock keeping CONTEND
 *   3  reader-preferring batch: main holds the write lock while two
 *      readers sleep (it starts the second once the first sleeps and
 *      releases once both do: model_await_asleep prunes every other
 *      order, which the two-thread variants cover); the one release
 *      wakes both, which then share the lock
 *   4  writer-preferring, ordered as 3: a reader then a writer sleep; the
 *      release wakes both, the writer goes first, the reader (held back
 *      by the waiting writer) sleeps again until the writer's unlock
 *   5  writer-preferring, a reader and a timed writer: the writer may
 *      time out asleep anywhere, then leaves wwait and clears CONTEND
 *      (waking), unless the reader's unlock woke it first
 *   6  reader-preferring, a writer and a timed reader: the reader may
 *      time out asleep anywhere (CONTEND left for the writer's unlock to
 *      clear), unless the unlock woke it first
 * Not reached: a reader held back by a waiting writer in the two-thread
 * variants (their one reader is what the writer waits for; variant 4
 * reaches it), a timed-out writer handing its wake-up on to another
 * writer (three writers).
 * Mutation: the write unlock's RMW (its release) made relaxed.  Wake
 * mutation: the wake of the sleeping readers dropped (the variants where
 * a reader sleeps untimed: a timed one wakes itself).
 * GenMC options: the futex is kept out of line (QC_MODEL_FUTEX_OUT_OF_LINE,
 * core/futex.c) and instruction caching is off, as for the rwsem:
 * variant 0 took 139 s user CPU (GenMC's static pass) before, 0.1 s
 * after.  -unroll=4 (each variant's executions are the same at 6);
 * variant 4 -unroll=6: its reader goes three times round its wait loop
 * (sleeps, is held back, sleeps again) and may retry up to three times;
 * at -unroll=4 5382 of its 6878 executions completed (RC11; 6878 at 6
 * and at 8).
 * Verification runs go without the lost-wake count (docs/testing.md);
 * with it every variant verifies too, under both models.
 *
 * modelcheck: -unroll=4 --disable-instruction-caching variants=0,1,2,3,4,5,6 variant-unroll=4:6 wake-mutants=0,1,3,4,5
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
#include "model_core.h"

#include "baseline/ww_rwlock.c"

#include "model_rwdata.h"

static struct ww_rwlock l;
static int timeouts;   /* plain: one timed thread per variant */
static int variant;

static void *writer(void *arg)
{
	(void)arg;
	ww_rwlock_wrlock(&l);
	write_section();
	ww_rwlock_wrunlock(&l);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	ww_rwlock_rdlock(&l);
	read_section();
	ww_rwlock_rdunlock(&l);
	return NULL;
}

/* A deadline only a futex wait's time-out reaches under the checker. */
static const struct timespec later = { 1, 0 };

static void *timed_writer(void *arg)
{
	(void)arg;
	if (ww_rwlock_timedwrlock(&l, &later) == ETIMEDOUT) {
		timeouts++;
		return NULL;
	}
	write_section();
	ww_rwlock_wrunlock(&l);
	return NULL;
}

static void *timed_reader(void *arg)
{
	(void)arg;
	if (ww_rwlock_timedrdlock(&l, &later) == ETIMEDOUT) {
		timeouts++;
		return NULL;
	}
	read_section();
	ww_rwlock_rdunlock(&l);
	return NULL;
}

/* Variants 3 and 4: main holds the write lock while the others sleep. */
static void behind_main(void *(*a)(void *), void *(*b)(void *))
{
	ww_rwlock_wrlock(&l);
	model_spawn(a, NULL);
	model_await_asleep(1);
	model_spawn(b, NULL);
	model_await_asleep(2);
	write_section();
	ww_rwlock_wrunlock(&l);
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
		model_spawn(writer, NULL);
		model_spawn(writer, NULL);
		break;
	case 3:
		behind_main(reader, reader);
		break;
	case 4:
		behind_main(reader, writer);
		break;
	case 5:
		model_spawn(reader, NULL);
		model_spawn(timed_writer, NULL);
		break;
	case 6:
		model_spawn(writer, NULL);
		model_spawn(timed_reader, NULL);
		break;
	}
	model_join_all();
}

static const bool want_wpref[] = { false, true, true, false, true, true, false };
static const int want_writes[] = { 1, 1, 2, 1, 2, 1, 1 };
static const int want_reads[] = { 1, 1, 0, 2, 1, 1, 1 };

int main(void)
{
	for_each_variant(variant, 7) {
		ww_rwlock_init(&l, want_wpref[variant]);
		x = y = writes = timeouts = 0;
		qa_write(&reads, 0);
		run_variant();
		assert(writes + (variant == 5 ? timeouts : 0) ==
		       want_writes[variant]);
		assert((int)qa_read(&reads) + (variant == 6 ? timeouts : 0) ==
		       want_reads[variant]);
		assert(x == writes && y == writes);
		assert(l.lock == 0 && l.wwait == 0);
	}
	return 0;
}
