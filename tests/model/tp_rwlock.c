/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the TP futex rwlock (docs/testing.md): plain
 * data the writer keeps equal, assert.  Built in the model build
 * (model_core.h).  Spin limit 1, no owner spin (but in variants 5 and 8).
 * Each variant is one check reaching one path (two threads, one iteration
 * each; a third thread multiplies GenMC's work past any budget, unless
 * main orders the threads, as in variants 5 to 9):
 *   0  hand-off, writer and reader: the waiter (either one) asks for a
 *      hand-off at once, sets W|S and sleeps on the word; the writer's
 *      unlock grants it, or the last reader's SHARED_UNLOCK release does
 *   1  slow release and steal: as 0 with no hand-off: the release frees
 *      the word and wakes the top waiter, which takes it or finds it taken
 *   2  writer hand-off: two writers, hand-off at once
 *   3  timeout withdrawal: a writer and a timed reader whose futex waits
 *      may time out anywhere (withdrawing its hand-off request unless the
 *      writer's unlock claimed it)
 *   4  reader grouping and writer preference: one writer, two readers
 *      (group leader and OSQ spinner) in any order -- test runs only, too
 *      big for the checker (over 150 s under RC11); variants 5 to 9 fix
 *      parts of its interleavings
 *   5  reader grouping, ordered: main holds the write lock, starts a
 *      reader, waits until it holds the serial lock (the group leader,
 *      spinning as top waiter: an owner-spin budget that never runs out
 *      under the checker, no hand-off), starts a second, waits until it
 *      spins in the group's OSQ, then unlocks (model_await prunes every
 *      other order): the spinner takes the read lock through the group
 *      (before or after the leader), or leads in turn once the leader
 *      is done
 *   6  writer preference, ordered: main holds a read lock, starts a
 *      writer, waits until it sets W (the top waiter asks for the
 *      hand-off at once and spins on the readers: their spin budget never
 *      runs out under the checker), starts a reader, waits until it
 *      sleeps on the serial lock (refused by W, it leads a group of one),
 *      then read-unlocks: the last reader's SHARED_UNLOCK release grants
 *      the writer (or frees the word for it, its request not yet seen),
 *      and the late reader gets the lock only after the writer's section
 *      (it sees writes == 1), by its own hand-off or on a free word
 *   7  reader grouping, the leader asleep: as 5 with no owner spin: the
 *      leader, top waiter, sets W|S and sleeps on the word at once,
 *      marking itself asleep in rw->leader (the group disbands); main
 *      unlocks once it sleeps, while the second reader, started once the
 *      leader held the serial lock, runs free: it sees the leader asleep
 *      at once, or while spinning in the group's OSQ, and queues alone on
 *      the serial lock (or takes the read lock once the leader has it)
 *   8  reader grouping, a hand-off pending: as 5 with the hand-off asked
 *      at once: main starts the second reader once the leader has asked
 *      (rw->handoff, then W) and unlocks once it spins in the OSQ, where
 *      its read_try is refused while the request is pending; the unlock
 *      grants the leader SH+1, and the spinner then joins it
 *   9  a late writer against a sleeping top waiter: main holds the write
 *      lock until a reader sleeps on the word (no owner spin, no
 *      hand-off), then starts a writer and unlocks at once: the writer
 *      steals the freed word before the woken reader takes it (which
 *      sleeps again), or queues on the serial lock behind it
 * Mutation: the reader fast path's acquire made relaxed (checked on the
 * variants where a reader takes the lock through it: not 2, nor 6 and 9,
 * whose readers take it only as top waiter).  Wake mutation: the
 * release's wake of the sleeping top waiter dropped (variants 0, 6, 7 and
 * 9; nobody sleeps on the word in variants 5 and 8).
 *
 * GenMC options: the futex out of line (QC_MODEL_FUTEX_OUT_OF_LINE,
 * core/futex.c says why) and instruction caching off, as rwsem.c:
 * variant 0 then checks in 0.2 s instead of 10 s, and its wake mutant is
 * caught in 0.6 s instead of 73 s.
 *
 * modelcheck: -unroll=2 --disable-instruction-caching variants=0,1,2,3,5,6,7,8,9 mutants=0,1,3,5,7,8 wake-mutants=0,6,7,9 full-only=7:imm
 */
/* The futex out of line for GenMC's inliner (core/futex.c says why). */
#define QC_MODEL_FUTEX_OUT_OF_LINE 1
#include "model_core.h"

#include "core/osq.c"
/* tp_mutex.c defines the thread ids; its file-local names must not meet
 * tp_rwlock.c's in this one translation unit. */
#define top_waiter tp_mutex_top_waiter
#include "lock/tp_mutex.c"
#include "lock/tp_tid.c"
#undef top_waiter
#undef W
#undef CLS
#include "lock/tp_rwlock.c"

#include "qlock/qlock.h"
#include "qlock/tp_rwlock.h"

#define ITERS MODEL_ITERS(1, 2)

static qlock_tp_rwlock_t rw = QLOCK_TP_RWLOCK_INIT;
static int a, b;       /* plain: the writer keeps a == b */
static int writing;    /* plain: 1 inside the write section */
static int writes;     /* plain: write sections that ran */
static int variant;

static void write_section(void)
{
	assert(!writing);
	writing = 1;
	a++;
	b++;
	writes++;
	writing = 0;
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		qlock_tp_rwlock_wrlock(&rw);
		write_section();
		qlock_tp_rwlock_wrunlock(&rw);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		qlock_tp_rwlock_rdlock(&rw);
		assert(!writing && a == b);
		qlock_tp_rwlock_rdunlock(&rw);
	}
	return NULL;
}

/* A deadline only a futex wait's time-out reaches under the checker. */
static void *timed_reader(void *arg)
{
	struct timespec later = { 1, 0 };

	(void)arg;
	if (qlock_tp_rwlock_timedrdlock(&rw, &later, CLOCK_MONOTONIC) == 0) {
		assert(!writing && a == b);
		qlock_tp_rwlock_rdunlock(&rw);
	}
	return NULL;
}

/* Variant 6: the reader that arrives while the writer waits; what it saw
 * of the writer's sections (plain, read by main after the join). */
static int seen = -1;

static void *late_reader(void *arg)
{
	(void)arg;
	qlock_tp_rwlock_rdlock(&rw);
	assert(!writing && a == b);
	seen = writes;
	qlock_tp_rwlock_rdunlock(&rw);
	return NULL;
}

/*
 * Variant 6 (see the top): writer preference.  The writer, top waiter of
 * a read-locked word, asks for the hand-off at once and sets W, then
 * spins (its spin on readers never runs out under the checker); a reader
 * that comes now must queue behind it.  As a test, the order holds only
 * if main saw W before it started the reader (the awaits are bounded).
 */
static void preferred(void)
{
	bool ordered;

	qlock_tp_rwlock_rdlock(&rw);
	model_spawn(writer, NULL);
	/* Only the top waiter sets W, and only a writer waits here. */
	model_await(qa_read(&rw.val) & W);
	ordered = qa_read(&rw.val) & W;
	model_spawn(late_reader, NULL);
	/* Refused by W, it leads a group of one and sleeps on the serial
	 * lock the writer holds. */
	model_await_asleep(2);
	assert(!writing && a == b);
	qlock_tp_rwlock_rdunlock(&rw);
	model_join_all();
	assert(writes == ITERS && a == ITERS && b == ITERS);
	/* The writer's section ran before the late reader's. */
	assert(!ordered || seen >= 1);
	assert(rw.val == 0 && rw.serial == 0 && rw.handoff == 0 &&
	       rw.nval == 0 && rw.leader == 0 && rw.rosq == 0);
}

/*
 * Variant 5 (see the top): main orders the readers, since in any order
 * (variant 4) the checker runs past its budget.  The leader must not
 * sleep, or the group disbands before the second reader joins it.
 */
static void grouped(void)
{
	qlock_tp_rwlock_wrlock(&rw);
	model_spawn(reader, NULL);
	/* Only a group leader takes the serial lock while nobody else waits. */
	model_await(qa_read(&rw.serial) != 0);
	model_spawn(reader, NULL);
	/* The second reader found the leader awake and spins behind it. */
	model_await(qa_read(&rw.rosq) != 0);
	write_section();
	qlock_tp_rwlock_wrunlock(&rw);
}

/*
 * Variant 7 (see the top): the group leader sleeps.  With no owner spin
 * the leader, top waiter, sets W|S and sleeps on the word at once,
 * marking itself asleep in rw->leader: the group disbands.  The second
 * reader, started once the leader holds the serial lock, runs free: it
 * spins in the group's OSQ until it sees the leader asleep, or finds it
 * asleep at once, and queues alone on the serial lock; main unlocks once
 * the leader sleeps.
 */
static void leader_sleeps(void)
{
	qlock_tp_rwlock_wrlock(&rw);
	model_spawn(reader, NULL);
	model_await(qa_read(&rw.serial) != 0);
	model_spawn(reader, NULL);
	model_await_asleep(1);
	write_section();
	qlock_tp_rwlock_wrunlock(&rw);
}

/*
 * Variant 8 (see the top): a hand-off request pending in the group.  The
 * leader, spinning as top waiter, asks for the hand-off at once (rw->
 * handoff, then W); the second reader spins in the group's OSQ, refused
 * while the request is pending; the unlock grants the leader SH+1 and the
 * spinner then joins it.
 */
static void group_handoff(void)
{
	qlock_tp_rwlock_wrlock(&rw);
	model_spawn(reader, NULL);
	model_await(qa_read(&rw.val) & W);
	model_spawn(reader, NULL);
	model_await(qa_read(&rw.rosq) != 0);
	write_section();
	qlock_tp_rwlock_wrunlock(&rw);
}

/*
 * Variant 9 (see the top): a writer against a sleeping top waiter.  Main
 * holds the write lock until a reader sleeps on the word (top waiter,
 * no owner spin, no hand-off), then starts a writer and unlocks at once:
 * the writer races with the release and the reader's wake-up.
 */
static void late_writer(void)
{
	qlock_tp_rwlock_wrlock(&rw);
	model_spawn(reader, NULL);
	model_await_asleep(1);
	model_spawn(writer, NULL);
	write_section();
	qlock_tp_rwlock_wrunlock(&rw);
}

int main(void)
{
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 1);
	for_each_variant(variant, 10) {
		int writers = variant == 2 ? 2 : 1;

		qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS,
			       variant == 5 || variant == 8 ? 1000000000 : 0);
		qlock_tune_set(QLOCK_TUNE_HANDOFF_NS,
			       variant == 1 || variant == 5 || variant == 7 ||
					       variant == 9
				       ? 1000000000 : 0);
		a = b = writes = 0;
		if (variant == 5 || variant >= 7) {
			int w = 1 + (variant == 9 ? ITERS : 0);

			if (variant == 5)
				grouped();
			else if (variant == 7)
				leader_sleeps();
			else if (variant == 8)
				group_handoff();
			else
				late_writer();
			model_join_all();
			assert(writes == w && a == w && b == w);
			assert(rw.val == 0 && rw.serial == 0 &&
			       rw.handoff == 0 && rw.nval == 0 &&
			       rw.leader == 0 && rw.rosq == 0);
			continue;
		}
		if (variant == 6) {
			preferred();
			continue;
		}
		model_spawn(writer, NULL);
		model_spawn(variant == 2 ? writer :
			    variant == 3 ? timed_reader : reader, NULL);
		if (variant == 4)
			model_spawn(reader, NULL);
		model_join_all();
		assert(writes == writers * ITERS && a == writes && b == writes);
		assert(rw.val == 0 && rw.serial == 0 && rw.handoff == 0 &&
		       rw.nval == 0 && rw.leader == 0);
	}
	return 0;
}
