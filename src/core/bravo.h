/* SPDX-License-Identifier: MIT */
/*
 * Read bias for reader-writer locks: BRAVO (Dice and Kogan, "BRAVO:
 * Biased Locking for Reader-Writer Locks", USENIX ATC 2019), written from
 * the paper's algorithm.  Any rwlock (the "underlying" lock) gains a
 * 32-bit bias word; while the word says ON, a reader does not write the
 * lock at all: it publishes the lock's address in a slot of one
 * process-wide table of visible readers, so readers of one lock write
 * different cache lines.  A writer takes the underlying lock, turns the
 * bias off and waits until no slot names the lock; bias comes back only
 * after N times the time that revocation took (a reader that takes the
 * underlying lock turns it on again), so a phase of frequent writes pays
 * for at most one revocation in every N + 1 units of its time.
 *
 * ---- The table ------------------------------------------------------------
 *
 * QC_BRAVO_SLOTS pointers (4096: 32 KiB, 512 cache lines of 8 slots).  A
 * slot holds the address of the lock a reader holds through it, or NULL.
 * The slot of (thread, lock) is
 *	line   = (hash(lock) + thread number) mod 512
 *	column = another 3 bits of hash(lock)
 * where the thread number counts threads in the order of their first
 * biased read: up to 512 threads reading one lock each get a line of
 * their own (no false sharing between them, no collision), and one
 * thread's reads of different locks spread over the table.  A reader that
 * finds its slot taken (by another lock) takes the underlying lock.
 *
 * ---- The bias word --------------------------------------------------------
 *
 *	bit 0     ON: readers may publish (set only by a reader that holds
 *	          the underlying lock; cleared only by a writer that holds it)
 *	bit 1     HOLD: a revocation has begun and not yet seen the table
 *	          drain (a writer that gave up waiting, see qc_bravo_revoke());
 *	          the next writer must drain it
 *	bit 2     CAPABLE: the lock may be biased (library locks initialised
 *	          biased; the pthread drop-in decides by itself)
 *	bits 3-31 inhibit-until: readers may not turn ON back before this
 *	          time (monotonic clock, units of 1024 ns, modulo 2^29)
 *
 * ---- Transitions (bias word; slot s of thread t and lock L) ---------------
 *
 *   reader, ON set      s: NULL -> L (cmpxchg); full fence (B1); ON still
 *                       set: holds a read lock; else s: L -> NULL and take
 *                       the underlying lock
 *   reader, ON clear    take the underlying lock; then, if CAPABLE and the
 *                       inhibit time has passed: ON := 1 (release)
 *   read unlock         biased: s: L -> NULL (release, B2); else the
 *                       underlying unlock
 *   writer              take the underlying lock; if ON or HOLD: ON := 0,
 *                       HOLD := 1; full fence (F1); wait while any slot
 *                       is L (acquire loads, B3); HOLD := 0, inhibit-until
 *                       := now + N * (time of the revocation)
 *
 * ---- Ordering --------------------------------------------------------------
 *
 *  B1/F1  the store-load pair.  Reader: store s := L, fence, load ON.
 *      Writer: store ON := 0, fence, load every slot.  With a full fence
 *      on each side, at least one of them sees the other's store: either
 *      the reader sees ON clear and backs out, or the writer sees s == L
 *      and waits for it.  Without either fence both may miss (the store
 *      buffering shape).  GenMC checks it under RC11 and IMM:
 *      tests/model/bravo.c (its mutant drops B1) and
 *      tests/model/bravo_revoke.c (its mutant drops F1).
 *  B2/B3  the reader's release store of NULL and the writer's acquire
 *      load that sees it: the biased reader's critical section happens
 *      before the writer's.
 *  B4  a reader that turns ON back holds the underlying lock, which a
 *      writer released before (the underlying lock's release/acquire);
 *      its store of ON is a release and a biased reader's load of ON an
 *      acquire, so the writer's critical section happens before every
 *      biased reader that follows.
 *
 * ---- Who may touch what after an unlock -------------------------------------
 *
 * A biased read unlock writes only its slot (never the lock), and the
 * writer only reads the table: a lock may be freed (or unmapped) right
 * after its last unlock, and a slot never names a lock nobody holds.
 * fork(): the child keeps only the slots of the forking thread (the
 * others' readers do not exist there); see qc_bravo_fork_child().
 *
 * Costs: a biased read is one cmpxchg on a line of its own and a fence
 * (no fence on x86, where the locked cmpxchg is one); a read unlock a
 * store.  A write on a biased lock scans the table (32 KiB, about 2 us);
 * on an unbiased lock, every write and read reads the bias word (on the
 * lock's line) and a reader, once in eight underlying reads, the clock.
 */
#ifndef QLOCK_CORE_BRAVO_H
#define QLOCK_CORE_BRAVO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"

/* B1 and F1 under ThreadSanitizer, which takes no stand-alone fence (gcc
 * rejects one): the pair is made of seq_cst accesses there (the reader's
 * seq_cst cmpxchg then a seq_cst load of the bias; the writer's seq_cst
 * store of the bias then seq_cst loads of the slots), which C11 orders as
 * the fences do: of the two stores one comes first in the single total
 * order, and the other side's load sees it. */
#ifdef __SANITIZE_THREAD__
#define qc_bravo_b1()            qa_barrier()
#define qc_bravo_read_bias(p)    qa_read_mb(p)
#define qc_bravo_read_slot(p)    qa_read_mb(p)
#else
#define qc_bravo_b1()            qa_smp_mb__after_rmw()
#define qc_bravo_read_bias(p)    qa_read_acquire(p)
#define qc_bravo_read_slot(p)    qa_read_acquire(p)
#endif

#ifdef QLOCK_MODEL
/* model: 2 slots, one per line (GenMC scans them all; two readers of one
 * lock, threads numbered in turn, get one each) */
#define QC_BRAVO_LINES 2u
#define QC_BRAVO_COLS  1u
#else
#define QC_BRAVO_LINES 512u
#define QC_BRAVO_COLS  8u        /* pointers per 64-byte line */
#endif
#define QC_BRAVO_SLOTS (QC_BRAVO_LINES * QC_BRAVO_COLS)

#define QC_BRAVO_ON      1u
#define QC_BRAVO_HOLD    2u
#define QC_BRAVO_CAPABLE 4u
#define QC_BRAVO_TSHIFT  3u
#define QC_BRAVO_TMASK   ((1u << (32 - QC_BRAVO_TSHIFT)) - 1u)

/*
 * N: bias stays off for N times the revocation's time after a writer
 * revoked it, so revocations take at most 1/(N+1) of a write-heavy
 * phase's time.  64 keeps that under 1.6 % (the paper's 9 allows 10 %);
 * docs/qrwlock.md has the measurement.  The inhibit time is capped at
 * QC_BRAVO_INHIBIT_MAX_NS.
 */
#define QC_BRAVO_N 64u
#define QC_BRAVO_INHIBIT_MAX_NS (1000000000ull) /* 1 s */

/* Biased read locks one thread may hold at once (more take the
 * underlying lock). */
#define QC_BRAVO_HELD 8u

extern const void *qc_bravo_table[QC_BRAVO_SLOTS];

struct qc_bravo_held {
	const void *lock;
	uint32_t slot;
	uint32_t depth; /* nested read locks through this slot */
};

struct qc_bravo_self {
	uint32_t n;      /* entries in use in held[] */
	uint32_t seq;    /* thread number + 1; 0 = none yet */
	uint32_t slow;   /* underlying reads, to pace the clock reads */
	struct qc_bravo_held held[QC_BRAVO_HELD];
};

/* GenMC 0.10.3 cannot initialise a thread-local struct, and every model
 * links this file; under it each model thread has its own element of a
 * global array (the thread index costs no shared access there). */
#ifdef QLOCK_UNDER_GENMC
extern struct qc_bravo_self qc_bravo_model_me[QC_MODEL_THREADS];
#define qc_bravo_me (qc_bravo_model_me[qc_model_self()])
#else
extern __thread __attribute__((tls_model("initial-exec")))
	struct qc_bravo_self qc_bravo_me;
#endif

uint32_t qc_bravo_seq_assign(void);

/* Drop entry i of held[] (the last one takes its place), field by field:
 * GenMC rejects the memcpy() a struct copy becomes. */
static inline void qc_bravo_drop(struct qc_bravo_self *me, uint32_t i)
{
	uint32_t last = --me->n;

	me->held[i].lock = me->held[last].lock;
	me->held[i].slot = me->held[last].slot;
	me->held[i].depth = me->held[last].depth;
}

static inline uint32_t qc_bravo_slot_of(const void *lock, uint32_t seq)
{
	uint64_t h = (uint64_t)(uintptr_t)lock * 0x9e3779b97f4a7c15ull;
	uint32_t line = ((uint32_t)(h >> 32) + seq) & (QC_BRAVO_LINES - 1u);

	return line * QC_BRAVO_COLS + (uint32_t)(h >> 61) % QC_BRAVO_COLS;
}

/*
 * A read lock the calling thread already holds through its slot: one
 * more level (true), unless `max` levels are held already.  false: the
 * thread holds no biased read of `lock`.
 */
static inline bool qc_bravo_read_nest(const void *lock, uint32_t max)
{
	struct qc_bravo_self *me = &qc_bravo_me;

	for (uint32_t i = 0; i < me->n; i++)
		if (me->held[i].lock == lock) {
			/* Another thread released it for us: a stale entry. */
			if (qa_read(&qc_bravo_table[me->held[i].slot]) != lock) {
				qc_bravo_drop(me, i);
				return false;
			}
			if (me->held[i].depth >= max)
				return false;
			me->held[i].depth++;
			return true;
		}
	return false;
}

/* Drop the calling thread's entry for `lock`, if any. */
static inline void qc_bravo_forget(const void *lock)
{
	struct qc_bravo_self *me = &qc_bravo_me;

	for (uint32_t i = 0; i < me->n; i++)
		if (me->held[i].lock == lock) {
			qc_bravo_drop(me, i);
			return;
		}
}

/*
 * The reader's biased path: true when the caller now holds a read lock of
 * `lock` without having touched it (or nests on one it holds so), false
 * when it must take the underlying lock (bias off, slot taken, too many
 * biased holds).  `max`: most nested reads of one thread (the lock's
 * reader limit).
 */
static inline bool qc_bravo_read_try(const void *lock, uint32_t *bias,
				     uint32_t max)
{
	struct qc_bravo_self *me = &qc_bravo_me;
	const void *cur = NULL;
	uint32_t seq, s;

	if (!(qa_read(bias) & QC_BRAVO_ON))
		return false;
	if (qa_unlikely(me->n == QC_BRAVO_HELD))
		return qc_bravo_read_nest(lock, max);
	seq = me->seq;
	if (qa_unlikely(seq == 0))
		seq = qc_bravo_seq_assign();
	s = qc_bravo_slot_of(lock, seq);
	if (qa_read(&qc_bravo_table[s]) != NULL ||
	    !qa_try_cmpxchg(&qc_bravo_table[s], &cur, lock))
		return qc_bravo_read_nest(lock, max); /* ours, or taken */
#ifndef QLOCK_MUTATE_BRAVO
	qc_bravo_b1(); /* B1: publish s, then read the bias (F1) */
#endif
	if (qa_likely(qc_bravo_read_bias(bias) & QC_BRAVO_ON)) { /* B4 */
		if (qa_unlikely(me->n != 0))
			qc_bravo_forget(lock); /* a stale entry (see above) */
		me->held[me->n].lock = lock;
		me->held[me->n].slot = s;
		me->held[me->n].depth = 1;
		me->n++;
		return true;
	}
	qa_write(&qc_bravo_table[s], NULL); /* a writer revokes: back out */
	return false;
}

/*
 * A read unlock: true when the caller held `lock` through its slot (one
 * level released; the slot freed with the last), false when it must
 * release the underlying lock.
 */
static inline bool qc_bravo_read_release(const void *lock)
{
	struct qc_bravo_self *me = &qc_bravo_me;

	if (qa_likely(me->n == 0))
		return false;
	for (uint32_t i = 0; i < me->n; i++) {
		struct qc_bravo_held *h = &me->held[i];

		if (h->lock != lock)
			continue;
		if (--h->depth == 0) {
			qa_write_release(&qc_bravo_table[h->slot], NULL); /* B2 */
			qc_bravo_drop(me, i);
		}
		return true;
	}
	return false;
}

/*
 * A read unlock by a thread that holds no biased read of `lock`, while no
 * reader is counted in the lock word and the bias word says biased
 * readers may exist (ON or HOLD): another thread's biased read, released
 * here (the pthread drop-in allows it, as glibc does).  true when a slot
 * naming `lock` was freed.  The owner's entry goes stale; its thread finds
 * it so (its slot no longer names the lock) and drops it.
 */
bool qc_bravo_release_foreign(const void *lock);

/* Does the calling thread hold `lock` through its slot? */
static inline bool qc_bravo_read_held(const void *lock)
{
	const struct qc_bravo_self *me = &qc_bravo_me;

	for (uint32_t i = 0; i < me->n; i++)
		if (me->held[i].lock == lock)
			return true;
	return false;
}

void qc_bravo_enable_slow(uint32_t *bias, uint32_t b);

/*
 * A reader that holds the underlying lock: turn the bias on if `capable`
 * and the inhibit time has passed (the clock is read once in eight
 * calls of a thread; a lock never revoked, inhibit-until 0, at once).
 */
static inline void qc_bravo_reader_locked(uint32_t *bias, bool capable)
{
	uint32_t b = qa_read(bias);

	if (qa_likely(b & QC_BRAVO_ON) || !capable)
		return;
	if ((b & ~QC_BRAVO_CAPABLE) != 0 && qa_likely(++qc_bravo_me.slow & 7u))
		return;
	qc_bravo_enable_slow(bias, b);
}

/* Must a writer that holds the underlying lock revoke? */
static inline bool qc_bravo_must_revoke(uint32_t *bias)
{
	return qa_unlikely(qa_read(bias) & (QC_BRAVO_ON | QC_BRAVO_HOLD));
}

/*
 * A writer that holds the underlying lock, with qc_bravo_must_revoke():
 * bias off, then wait until no slot names `lock`, at most `budget_ns`
 * (0: look once, no wait; UINT64_MAX: as long as it takes), spinning a
 * little, then yielding, then sleeping in growing naps.  true: no biased
 * reader is left (HOLD cleared, inhibit-until set); false: the budget ran
 * out with biased readers left (HOLD stays set, so the next writer waits
 * for them; the caller may release the underlying lock and try again).
 */
bool qc_bravo_revoke(const void *lock, uint32_t *bias, uint64_t budget_ns);

/* In a fork child: free every slot but the calling thread's. */
void qc_bravo_fork_child(void);

/* Slots that name `lock` (tests). */
uint32_t qc_bravo_readers(const void *lock);

#endif /* QLOCK_CORE_BRAVO_H */
