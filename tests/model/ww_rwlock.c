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
 * Not reached: a reader held back by a waiting writer alone in variant 1
 * (its only reader is what the writer waits for; variant 4 reaches it),
 * timed waits (a writer passing its wake-up on).
 * Mutation: the write unlock's RMW (its release) made relaxed.  Wake
 * mutation: the wake of the sleeping readers dropped (the variants where
 * a reader sleeps).
 * GenMC options: the futex is kept out of line (QC_MODEL_FUTEX_OUT_OF_LINE,
 * core/futex.c) and instruction caching is off, as for the rwsem:
 * variant 0 took 139 s user CPU (GenMC's static pass) before, 0.1 s
 * after.  -unroll=4: variant 4's reader goes three times round its wait
 * loop (sleeps, is held back, sleeps again) and may retry once; more
 * unrolling only adds executions where it retries again.
 *
 * modelcheck: -unroll=4 --disable-instruction-caching variants=0,1,2,3,4 wake-mutants=0,1,3,4
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
#include "model_core.h"

#include "baseline/ww_rwlock.c"

static struct ww_rwlock l;
static int x, y;       /* plain data: writers keep x == y */
static int writes;     /* plain: completed write sections */
static uint32_t reads; /* atomic: readers share their section */
static int variant;

static void write_section(void)
{
	x++;
	assert(x == y + 1);
	y++;
	writes++;
}

static void read_section(void)
{
	assert(x == y);
	qa_fetch_add_relaxed(&reads, 1);
}

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
	}
	model_join_all();
}

static const bool want_wpref[] = { false, true, true, false, true };
static const int want_writes[] = { 1, 1, 2, 1, 2 };
static const int want_reads[] = { 1, 1, 0, 2, 1 };

int main(void)
{
	for_each_variant(variant, 5) {
		ww_rwlock_init(&l, want_wpref[variant]);
		x = y = writes = 0;
		qa_write(&reads, 0);
		run_variant();
		assert(writes == want_writes[variant]);
		assert((int)qa_read(&reads) == want_reads[variant]);
		assert(x == writes && y == writes);
		assert(l.lock == 0 && l.wwait == 0);
	}
	return 0;
}
