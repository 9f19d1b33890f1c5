/* SPDX-License-Identifier: MIT */
/*
 * Per-lock contention table of the pthread drop-in (QLOCK_STATS, qlock-run
 * --stats; QLOCK_PROFILE, qlock-run --profile): for each pthread lock a
 * program takes, its acquisitions, the acquisitions that had to wait, and
 * the total and longest wait, printed at exit with the locks that cost the
 * most waiting first (in the spirit of mutrace), each named by the call
 * site that first locked it.
 *
 * Off, it costs the entry points one predictable branch.  On, an
 * uncontended acquisition adds one counter update in the thread's own
 * counters (below, struct pf_count; the lock's row when the thread
 * has no record, or the lock does not keep a counter slot); only a
 * contended one reads the clock (ticks.h): before its wait, and after it
 * when the wait slept in the kernel (or could have, where glibc's lock
 * is behind the call), is the thread's first for a lock with no timed
 * wait on record, finds no counter slot, or is one of the random 1 in 8
 * sampled (below, PF_SAMPLE); it counts the acquisition as contended
 * and the wait's time, a sampled one's 8 times, in the same counter.  A
 * wait that only spun is short, and the clock read after it would
 * lengthen the hold of a lock that changes hands fast: wait totals and
 * percentiles are exact for the waits that slept and estimated for the
 * rest, the counts are exact.  Nothing is written on a line another
 * thread writes while the lock is held, save for the locks without a
 * counter slot: the counters are added to the rows later (thread exit,
 * report).
 *
 * The profile (shim_profile_on, profile.c) adds, still only on the
 * contended path: a wait histogram (p50, p99), the call sites that
 * waited (their counts scaled to the contended acquisitions at a
 * report), and the hold time of the sampled acquisitions that waited
 * and of each lock's first timed one (one more clock read, at the
 * unlock), per lock, in the thread's own
 * share of the lock's details (below, struct pf_detail), added up the
 * same way; and what tells the deadlock watchdog (deadlock.c) who holds
 * what: a lock an inline path takes (a NORMAL or ADAPTIVE mutex on the
 * TP algorithm, a process-private rwlock on the qrwlock or TP) names its
 * holder itself (the TP word holds the owner's tid, the qrwlock's writer
 * is recorded in the drop-in's struct qrw, readers in the drop-in's
 * per-thread table of read locks held), and the call site of the
 * thread's last counted acquisition of each lock is kept in its front
 * place (below, struct pf_front: one store more); every other lock a
 * thread takes (after a wait, through the general path, a trylock or a
 * timed lock, a condition variable's re-lock) is pushed on the thread's
 * held-lock stack (a few thread-local stores; its unlock pops it).  An
 * unlock looks at the stack only when the thread has entries on it.
 * Condition variables: waits, timeouts, signals and broadcasts.
 *
 * What is recorded where: the call site is the return address of the
 * exported pthread call (symbolize.h, SHIM_CALLER()); lock calls with a
 * deadline and trylocks are not counted (with the profile, their locks
 * are on the held-lock stack); a condition variable's wait ends the mutex's hold and
 * starts a new one when it returns (its re-lock is not counted, and that
 * hold is not timed).
 */
#ifndef QLOCK_SHIM_LOCKSTAT_H
#define QLOCK_SHIM_LOCKSTAT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "stacks.h"
#include "ticks.h"

enum lockstat_kind {
	LOCKSTAT_MUTEX,
	LOCKSTAT_RWLOCK_READ,
	LOCKSTAT_RWLOCK_WRITE,
	LOCKSTAT_SPIN,
	LOCKSTAT_COND,
	LOCKSTAT_NR_KINDS
};

/* Profile mode (QLOCK_PROFILE): details, held-lock stacks, condvars. */
extern bool shim_profile_on;

/* The hooks of an acquisition (lockstat_acquired(), lockstat_waited())
 * and of an unlock (lockstat_release(), before the lock is released) are
 * inline below. */
/* Profile: this thread is about to block for `lock`, and is done. */
void lockstat_wait_begin(const volatile void *lock, enum lockstat_kind kind, const void *pc);
void lockstat_wait_end(void);

/* Condition variables (profile): a wait on `cond` with `mutex` from the
 * call at pc, which returned err; a signal or broadcast. */
uint64_t lockstat_cond_wait_begin(const volatile void *cond, const volatile void *mutex,
				  const void *pc);
void lockstat_cond_wait_end(const volatile void *cond, const volatile void *mutex,
			    const void *pc, uint64_t t0, int err);
void lockstat_cond_wake(const volatile void *cond, bool broadcast, const void *pc);

/* Append the per-kind totals and the `top` locks with the most waiting
 * to the QLOCK_STATS report (shim_stats_format()). */
struct shim_report;
void lockstat_report(struct shim_report *out, int top);

/* A condition variable wait `call` on cond with mutex, counted. */
#define LOCKSTAT_COND_WAIT(cond, mutex, pc, call) __extension__({          \
	uint64_t t0_ = lockstat_cond_wait_begin((cond), (mutex), (pc));   \
	int err_ = (call);                                                \
	lockstat_cond_wait_end((cond), (mutex), (pc), t0_, err_);         \
	err_;                                                             \
})


/* ---- the table ----------------------------------------------------------
 * What this file's hooks record and profile.c reports: the per-lock rows,
 * their details (allocated when a lock is first contended, or a condition
 * variable first used), and the per-thread records with each thread's
 * held-lock stack and the lock it waits for (the pf_ names: the profile's
 * side of a thread's record); and the hooks' inline paths that the lock
 * entry points expand (entry.h).
 */
#define LS_BITS 14
#define LS_SLOTS (1 << LS_BITS) /* 1 MiB of rows, touched as used */

/* A row's key: the lock's address shifted left 3, with its kind below
 * (user addresses have their top bits clear, so nothing is lost). */
static inline uintptr_t ls_key(const volatile void *lock, enum lockstat_kind kind)
{
	return ((uintptr_t)lock << 3) | (uintptr_t)kind;
}
static inline uintptr_t ls_key_addr(uintptr_t key) { return key >> 3; }
static inline enum lockstat_kind ls_key_kind(uintptr_t key)
{
	return (enum lockstat_kind)(key & 7);
}

/* Histograms: 4 buckets per power of two of nanoseconds (a value is
 * reported within 19 %), up to 2^41 ns (36 minutes) and beyond in the
 * last. */
#define LS_HIST 160
static inline unsigned ls_bucket(uint64_t v)
{
	if (v < 4)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	unsigned b = 4 * (e - 1) + (unsigned)((v >> (e - 2)) & 3);

	return b < LS_HIST ? b : LS_HIST - 1;
}
/* The largest value bucket b holds. */
static inline uint64_t ls_bucket_top(unsigned b)
{
	if (b < 4)
		return b;
	unsigned e = b / 4 + 1, sub = b % 4;

	return ((uint64_t)(4 + sub + 1) << (e - 2)) - 1;
}

#define LS_SITES 4
struct ls_site {
	uintptr_t pc;      /* 0 = free */
	uint64_t count;    /* the waits' weights (PF_SAMPLE) */
	uint64_t exact;    /* of count, the waits that stand for themselves alone */
	uint64_t wait_ns;
};

struct ls_detail {
	uint64_t wait_hist[LS_HIST];
	uint64_t hold_hist[LS_HIST];
	uint64_t holds, hold_total_ns, hold_max_ns; /* of the timed holds */
	struct ls_site sites[LS_SITES];  /* where it was waited for */
	uint64_t other_sites;            /* waits at further sites */
	uint64_t other_exact;            /* of those, the ones that stand for themselves alone */
	/* condition variables */
	uint64_t timeouts, signals, broadcasts;
	uintptr_t wake_pc;               /* first signal or broadcast */
	uintptr_t mutex;                 /* the mutex of its first wait */
};

struct ls_row {
	uintptr_t key;          /* ls_key(), 0 = free */
	uint64_t acquired;      /* condvar: waits */
	uint64_t contended;     /* condvar: 0 */
	uint64_t wait_total_ns;
	uint64_t wait_max_ns;
	uintptr_t first_pc;     /* the call that first locked it (waited, for a condvar) */
	struct ls_detail *detail;
	uint64_t stacked;       /* a stack of a wait for it is recorded (stacks.h) */
} __attribute__((aligned(64)));

extern struct ls_row ls_table[LS_SLOTS];
extern struct ls_row ls_overflow[LOCKSTAT_NR_KINDS];
extern const char *const ls_kind_name[LOCKSTAT_NR_KINDS];
/* Details ran out (more contended locks than LS_DETAILS): some locks have
 * no percentiles, sites or hold times. */
extern uint64_t ls_detail_lost;

/*
 * The first frames (innermost first, at most LS_FIRST_DEPTH) of the stack
 * that claimed row r: the call that first locked the lock, or first waited
 * on the condition variable, and its callers; 0 frames without the
 * profile's stacks (QLOCK_PROFILE_DEPTH=0, --stats alone).  A report names
 * the first of them outside lock wrappers (wrapper.h), so a lock taken
 * through port::Mutex::Lock() is "first locked at" its user's function.
 * Captured once per row, when the row is claimed.
 */
#define LS_FIRST_DEPTH 4
unsigned ls_first_stack(const struct ls_row *r, uintptr_t pc[LS_FIRST_DEPTH]);

/* The row of a lock, if it has one. */
struct ls_row *ls_find(const volatile void *lock, enum lockstat_kind kind);
/* The rows claimed so far, in the order of their claims: row k of
 * ls_rows_used() is ls_row_used(k) (NULL while its claim is written). */
unsigned ls_rows_used(void);
struct ls_row *ls_row_used(unsigned k);

/* ---- threads ------------------------------------------------------------ */

#define PF_HELD 16     /* held locks tracked per thread */
#define PF_DETAILS 4   /* per-thread shares of contended locks' details */
/* Of the acquisitions that waited, a random 1 in 8 is sampled: its wait
 * and its hold are timed.  Every wait that slept is timed too; a wait
 * that only spun and is not sampled is counted, not timed, so a sampled
 * one counts PF_SAMPLE times in the wait totals, histograms and sites
 * (a spinning wait is short, and the clock read after it would lengthen
 * the hold of a lock that changes hands fast). */
#define PF_SAMPLE 8

/*
 * A thread's acquisitions of one lock, and the contended ones among them
 * with their waits, counted here rather than on the lock's row, whose
 * cache line would otherwise travel with the lock from CPU to CPU and be
 * written while the lock is held; added to the row when the slot is taken
 * by another lock, when the thread exits and before a report.
 *
 * PF_COUNTS slots, set-associative: the lock's key hashes to one of
 * PF_SETS sets of PF_WAYS slots.  A set's keys and acquisition counts
 * share one cache line (struct pf_set), so an uncontended acquisition
 * that finds its slot reads and writes that line alone; the rest of a
 * slot (its row, waits) is in struct pf_count, read when the acquisition
 * waited, or when the slot is flushed.  A lock that finds no slot in its
 * set takes a free one, or else counts on its row; every PF_COUNT_MISSES
 * such misses in a set, the set's slot least used since its previous
 * take-over goes to the lock (flushed first), so that a thread that
 * takes many locks in turn does not flush a slot on every acquisition,
 * and the locks it takes most keep their slots.
 */
#define PF_SET_BITS 6
#define PF_SETS (1 << PF_SET_BITS)
#define PF_WAYS 4
#define PF_COUNTS (PF_SETS * PF_WAYS)
struct pf_set {
	uintptr_t key[PF_WAYS]; /* ls_key(), 0 = free */
	uint64_t n[PF_WAYS];    /* acquisitions */
} __attribute__((aligned(64)));
struct pf_count {
	struct ls_row *row;
	uint64_t contended;     /* of the acquisitions, the ones that waited */
	uint64_t wait_ns, wait_max_ns;
};
#define PF_COUNT_MISSES 8 /* a set gives a slot to another lock every 8 misses */

/*
 * In front of the sets, direct-mapped: the slot of the lock last counted
 * at each of PF_FRONT places (pf_front_of()), as its key and a pointer to
 * the slot's count.  A hit is one compare and an increment of the slot's
 * own count, so the counts stay exact and where a flush finds them; an
 * entry is dropped when its slot goes to another lock (pf_count_miss())
 * and all of them when the thread exits.  `pc`: the call site of the
 * thread's last counted acquisition of the lock, which the deadlock
 * watchdog shows for a lock that names this thread its holder and is not
 * on its held-lock stack (pf_front_pc()).
 */
#define PF_FRONT_BITS 8
#define PF_FRONT (1 << PF_FRONT_BITS)
struct pf_front {
	uintptr_t key;          /* ls_key(), 0 = none */
	uint64_t *n;            /* its slot's acquisitions (pf_set.n[way]) */
	uintptr_t pc;           /* the last counted acquisition's call site */
	uintptr_t unused;       /* (32 bytes: a place is an index shifted by 5) */
};
static inline unsigned pf_front_of(uintptr_t key)
{
	/* Fibonacci hashing of the key (the address and the kind): the
	 * locks of an array, or of objects a power of two apart (a lock in
	 * each of 64 shards), fall in different places. */
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> (64 - PF_FRONT_BITS));
}
#define PF_THREADS 1024

/* A thread's share of one contended lock's details (profile): the waits'
 * and holds' histograms, the timed holds, the thread's call sites that
 * waited, kept here for the same reason and added to the lock's detail
 * when the slot is taken by another lock (after PF_DETAIL_MISSES locks
 * found no slot: those add to their details directly), when the thread
 * exits and before a report.  32-bit buckets: the share is added before
 * `events` could make one overflow. */
struct pf_detail {
	struct ls_detail *d;    /* NULL = free */
	uint32_t events;        /* waits and holds since the last flush */
	uint8_t wlo, whi, hlo, hhi; /* buckets in use: lo > hi when none */
	uint64_t holds, hold_total_ns, hold_max_ns;
	struct ls_site sites[LS_SITES];
	uint32_t wait_hist[LS_HIST];
	uint32_t hold_hist[LS_HIST];
};
#define PF_DETAIL_MISSES 8
#define PF_DETAIL_FLUSH_EVENTS (1u << 31)

/* A held lock.  `lock` has PF_HELD_TIMED set when the hold is timed:
 * then alone are `row` and `t0` written (an uncontended acquisition's
 * push is three stores); read the address with pf_held_lock(). */
struct pf_held {
	uintptr_t lock;
	uintptr_t pc;
	struct ls_row *row;
	uint64_t t0;            /* acquired at (ticks_now()), after a wait */
	uint32_t kind;
};
#define PF_HELD_TIMED ((uintptr_t)1) /* lock objects are at least 4-aligned */
static inline uintptr_t pf_held_lock(uintptr_t lock) { return lock & ~PF_HELD_TIMED; }

/* A wait or a timed hold of a contended lock, recorded in the lock's
 * details later, outside the lock (pf_pend_flush()): at the thread's next
 * wait, exit or report.  `row` NULL = free; taken back with an exchange,
 * so that the thread and a report never both add one. */
struct pf_pend {
	struct ls_row *row;
	uintptr_t pc;           /* the wait's call site */
	uint64_t ns;
	uint32_t hold;          /* a hold, not a wait */
	uint32_t weight;        /* a wait: the waits it stands for */
};
#define PF_PEND 8

#define PF_DRAW_NONE 0
#define PF_DRAW_OUT 1          /* not sampled */
#define PF_DRAW_IN 2           /* sampled */
#define PF_STK_NONE 0
#define PF_STK_CAPTURED 1      /* during the wait */
#define PF_STK_TIMED 2         /* the wait done and timed: to record */

/*
 * A thread's record.  Its thread alone writes it; another (the deadlock
 * watchdog) reads it as a sequence lock: wait_seq is odd while the
 * thread waits for wait_lock, and changes around every wait; depth is
 * published with release after the entries below it are written.
 */
struct pf_thread {
	int32_t tid;            /* 0 = free */
	uint32_t depth;
	uint64_t self;          /* pthread_self(), as a qrwlock names its writer */
	const void *rd;         /* the drop-in's table of the read locks it holds */
	uint64_t wait_seq;
	uintptr_t wait_lock;
	uintptr_t wait_pc;
	uint32_t wait_kind;
	uint32_t lost;          /* held entries not tracked (stack full) */
	uint32_t dmisses;       /* details found no slot, since the last take-over */
	uint32_t dnext;         /* the detail slot taken over next */
	uint32_t rng;           /* the sampling's xorshift state (0: not seeded) */
	uint32_t npend;         /* pend[] entries written, a ring index */
	uint32_t draw;          /* the sampling's draw made before a wait: PF_DRAW_* */
	/* The stack of the current or last wait (stacks.h): PF_STK_*. */
	uint32_t stk_state, stk_n, stk_unwinding;
	uintptr_t stk_key;
	uint64_t stk_weight, stk_ns;
	uintptr_t stk[PF_DEPTH_MAX];
	struct pf_pend pend[PF_PEND];
	struct pf_held held[PF_HELD];
	struct pf_front front[PF_FRONT];
	struct pf_set sets[PF_SETS];
	struct pf_count counts[PF_COUNTS]; /* counts[set * PF_WAYS + way] */
	uint8_t set_misses[PF_SETS];       /* misses since the set's last take-over */
	uint32_t n_mark[PF_COUNTS];        /* slot's n at its set's last take-over (or 0) */
	struct pf_detail details[PF_DETAILS];
} __attribute__((aligned(64))); /* no line shared with another thread's */
extern struct pf_thread pf_threads[PF_THREADS];
/* Every record claimed so far is below this index (read it with
 * acquire: the claims before it are then seen). */
extern uint32_t pf_threads_used;

/* ---- the hooks' inline paths (entry.h) ------------------------------------
 * An acquisition that did not wait and a release are the calls every lock
 * operation makes while the statistics are on: their usual cases (a lock
 * whose counter slot is in front; a release while nothing is on the
 * thread's held-lock stack) are inline here, so that they cost the lock
 * call no further call.
 */
extern __thread struct pf_thread *pf_self __attribute__((tls_model("initial-exec")));
/* pf_self->depth, for the unlocks' test (0 without a record). */
extern __thread uint32_t pf_pushed __attribute__((tls_model("initial-exec")));

/* The rows' and the counter sets' hash of a key (its address: a
 * rwlock's two modes share a set), whose high bits are used: a multiply,
 * the high half folded into the low and a second multiply.  One multiply
 * alone put locks at some strides in a few sets (Kyoto Cabinet's slot
 * mutexes, 48 bytes apart: 10 of them in 4 sets, so that a thread's
 * acquisitions missed its counter slots); this spreads them as a random
 * choice would. */
static inline uint64_t ls_hash(uintptr_t key)
{
	uint64_t h = (uint64_t)(key >> 3) * 0x9e3779b97f4a7c15ull;

	h ^= h >> 32;
	return h * 0xd6e8feb86659fd93ull;
}

/* The ways of set s that hold key, one bit each. */
_Static_assert(PF_WAYS == 4, "pf_ways_of() compares 4 ways");
static inline unsigned pf_ways_of(const struct pf_set *s, uintptr_t key)
{
	return (unsigned)(s->key[0] == key) | (unsigned)(s->key[1] == key) << 1 |
	       (unsigned)(s->key[2] == key) << 2 | (unsigned)(s->key[3] == key) << 3;
}

/* The thread's slot for the lock (its index), counting nothing; else -1.
 * *set: the lock's set. */
static inline int pf_slot_find(struct pf_thread *t, const volatile void *lock,
			       enum lockstat_kind kind, unsigned *set)
{
	uintptr_t key = ls_key(lock, kind);
	unsigned i = (unsigned)(ls_hash(key) >> (64 - PF_SET_BITS));
	const struct pf_set *s = &t->sets[i];
	/* The way, or PF_WAYS for none: the first way alone, where a set's
	 * first lock goes (a free way is taken lowest first), else all four
	 * at once, one branch whichever way it is. */
	unsigned w = qa_likely(s->key[0] == key)
			     ? 0u
			     : (unsigned)qa_ctz64(pf_ways_of(s, key) | 1u << PF_WAYS);

	*set = i;
	return qa_likely(w < PF_WAYS) ? (int)(i * PF_WAYS + w) : -1;
}

/* Count an acquisition in the thread's slot for the lock if it has one,
 * and return the slot's index; else -1 and *set: the lock's set. */
static inline int pf_count_hit(struct pf_thread *t, const volatile void *lock,
			       enum lockstat_kind kind, unsigned *set)
{
	int i = pf_slot_find(t, lock, kind, set);

	if (qa_likely(i >= 0)) /* ours alone; a report reads it */
		qa_stat_add(&t->sets[*set].n[i % PF_WAYS], 1);
	return i;
}

/* t0: the acquisition's time after a wait, which times the hold (with
 * r, the lock's row); 0 = the hold is not timed. */
static inline void pf_push(struct pf_thread *t, const volatile void *lock, enum lockstat_kind kind,
			   const void *pc, struct ls_row *r, uint64_t t0)
{
	uint32_t d = t->depth;
	struct pf_held *h;

	if (d >= PF_HELD) {
		t->lost++;
		return;
	}
	h = &t->held[d];
	if (t0) {
		qa_write(&h->row, r);
		qa_write(&h->t0, t0);
	}
	qa_write(&h->lock, (uintptr_t)lock | (t0 ? PF_HELD_TIMED : 0));
	qa_write(&h->pc, (uintptr_t)pc);
	qa_write(&h->kind, (uint32_t)kind);
	/* Release: the entry before the depth that covers it (pairs with
	 * the watchdog's acquire of depth). */
	qa_write_release(&t->depth, d + 1);
	pf_pushed = d + 1;
}

void lockstat_acquired_slow(const volatile void *lock, enum lockstat_kind kind,
			    const void *pc, bool push);
/* A contended acquisition whose wait found the owner off the CPU by its
 * own call (qc_off_cpu_waits): counted for the report as the event
 * owner_off_cpu of class `other` (the drop-in's own), in the thread's own
 * counters. */
static inline void lockstat_off_cpu_wait(void)
{
	qc_event_inc(QC_CLASS_other, QC_EV_owner_off_cpu);
}

void lockstat_waited_timed(const volatile void *lock, enum lockstat_kind kind, const void *pc,
			   uint64_t t0, uint32_t weight, bool time_hold);
void lockstat_release_slow(struct pf_thread *t, const volatile void *lock);

/* Count one acquisition of `lock`, made by the call at `pc`, that did not
 * wait, and keep pc in its front place (and, `push`, push it on the
 * held-lock stack): its usual case, a lock whose slot is in front (struct
 * pf_front), inline.  `push`: shim_profile_on, or false from an inline
 * path, whose locks name their holder themselves (top of this file). */
static inline __attribute__((always_inline)) void
lockstat_acquired_as(const volatile void *lock, enum lockstat_kind kind, const void *pc,
		     bool push)
{
	struct pf_thread *t = pf_self;

	if (qa_likely(t != NULL)) {
		uintptr_t key = ls_key(lock, kind);
		struct pf_front *f = &t->front[pf_front_of(key)];

		__asm__("" : "+r"(f)); /* one address for its three fields */
		if (qa_likely(f->key == key)) {
			qa_stat_add(f->n, 1); /* ours alone; a report reads it */
			qa_write(&f->pc, (uintptr_t)pc); /* the watchdog reads it */
			/* The hold is not timed: no row needed at its release. */
			if (push)
				pf_push(t, lock, kind, pc, NULL, 0);
			return;
		}
	}
	lockstat_acquired_slow(lock, kind, pc, push);
}

static inline __attribute__((always_inline)) void
lockstat_acquired(const volatile void *lock, enum lockstat_kind kind, const void *pc)
{
	lockstat_acquired_as(lock, kind, pc, shim_profile_on);
}

/* Profile: a lock taken by a trylock or a timed lock call (not counted),
 * on the held-lock stack. */
void lockstat_held(const volatile void *lock, enum lockstat_kind kind, const void *pc);

/* One draw of the sampling: true 1 in PF_SAMPLE times. */
static inline bool pf_sampled(struct pf_thread *t)
{
	uint32_t x = t->rng;

	if (qa_unlikely(x == 0))
		x = (uint32_t)((uintptr_t)t >> 6) * 2654435761u | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rng = x;
	return (x >> 29) == 0; /* PF_SAMPLE = 8: the top 3 bits */
}
_Static_assert(PF_SAMPLE == 8, "pf_sampled() draws 3 bits");

/*
 * An acquisition of `lock` by the call at `pc` after a wait that began at
 * t0 (ticks_now()); `slept`: the wait may have slept in the kernel.  A
 * wait that slept, that is sampled, that is the thread's first timed one
 * for the lock, or whose lock has no slot here is timed
 * (lockstat_waited_timed()); else it is counted in the thread's slot for
 * the lock, with no clock read.
 */
static inline void lockstat_waited(const volatile void *lock, enum lockstat_kind kind,
				   const void *pc, uint64_t t0, bool slept)
{
	struct pf_thread *t = pf_self;
	bool sampled = true, first = false;
	uint32_t weight = 1; /* the waits this one stands for */

	if (qa_likely(t != NULL)) {
		unsigned set;
		int i = pf_slot_find(t, lock, kind, &set);

		/* Profiling, the draw was made before the wait (it chose
		 * whether to capture the wait's stack). */
		if (t->draw != PF_DRAW_NONE) {
			sampled = t->draw == PF_DRAW_IN;
			t->draw = PF_DRAW_NONE;
		} else {
			sampled = pf_sampled(t);
		}
		/* A lock without a slot here is timed (its hold sampled); so
		 * is the thread's first timed wait for it (the slot's and
		 * the row's longest still 0; the row's grows at the slot's
		 * flushes), with its hold: no contended lock shows no wait
		 * or no hold. */
		first = i >= 0 && qa_read(&t->counts[i].wait_max_ns) == 0 &&
			qa_read(&t->counts[i].row->wait_max_ns) == 0;
		if (qa_likely(!slept && !first && i >= 0)) {
			if (sampled) {
				weight = PF_SAMPLE;
			} else if (qa_likely(t->stk_state != PF_STK_CAPTURED)) {
				/* (a captured stack needs the wait's time) */
				qa_stat_add(&t->sets[set].n[i % PF_WAYS], 1);
				qa_stat_add(&t->counts[i].contended, 1);
				if (shim_profile_on)
					pf_push(t, lock, kind, pc, NULL, 0);
				return;
			}
		}
	}
	lockstat_waited_timed(lock, kind, pc, t0, weight, sampled || first);
}

/* An unlock of `lock` by this thread, before the lock is released.  The
 * usual case: nothing on the held-lock stack, nothing to do.  Only the
 * profile pushes (pf_push()), so pf_pushed is 0 while it is off and the
 * one test serves the statistics too. */
static inline __attribute__((always_inline)) void lockstat_release(const volatile void *lock)
{
	if (qa_likely(pf_pushed == 0))
		return;
	lockstat_release_slow(pf_self, lock);
}

/*
 * Acquire through `try_call`, and when that reports EBUSY through
 * `block_call`, timing the wait; record the acquisition, made by the call
 * at `pc`, if one succeeded.  Evaluates to the error code of the call
 * that decided.
 */
#define LOCKSTAT_ACQUIRE(lock, kind, pc, try_call, block_call) __extension__({ \
	int err_ = (try_call);                                            \
	if (qa_likely(err_ == 0)) {                                       \
		lockstat_acquired((lock), (kind), (pc));                  \
	} else if (err_ == EBUSY) {                                       \
		if (shim_profile_on)                                      \
			lockstat_wait_begin((lock), (kind), (pc));        \
		uint32_t sleeps_ = qc_futex_sleeps;                       \
		uint32_t offs_ = qc_off_cpu_waits;                        \
		uint64_t t0_ = ticks_now();                               \
		err_ = (block_call);                                      \
		if (shim_profile_on)                                      \
			lockstat_wait_end();                              \
		if (err_ == 0) {                                          \
			lockstat_waited((lock), (kind), (pc), t0_,        \
					qc_futex_sleeps != sleeps_);      \
			if (qc_off_cpu_waits != offs_)                    \
				lockstat_off_cpu_wait();                  \
		}                                                         \
	}                                                                 \
	err_;                                                             \
})

/*
 * The holders the lock objects name (the drop-in's, mutex.c and rwlock.c),
 * for the profile's deadlock watchdog.  `peek`: the object may be another
 * thread's and gone (shim_peek(), deadlock.h); else it is this thread's
 * own, or the lock it is about to wait for.  0 / false: none named (free,
 * or an algorithm or kind whose word does not name it).
 */
int32_t shim_mutex_owner(const volatile void *m, bool peek);       /* its tid */
bool shim_rwlock_writer(const volatile void *r, bool peek, int32_t *tid, uint64_t *self);
/* The read locks a thread holds: the address of its table (its own,
 * shim_rd_table()), read into *v. */
#define SHIM_RD_VIEW 8
struct shim_rd_view {
	uint32_t n, spill;      /* spill: more, not named */
	uintptr_t lock[SHIM_RD_VIEW];
};
const void *shim_rd_table(void);
bool shim_rd_read(const void *table, bool peek, struct shim_rd_view *v);

/* The call site of thread t's last counted acquisition of the lock, if
 * its front place still holds it (else 0). */
static inline uintptr_t pf_front_pc(const struct pf_thread *t, const volatile void *lock,
				    enum lockstat_kind kind)
{
	uintptr_t key = ls_key(lock, kind);
	const struct pf_front *f = &t->front[pf_front_of(key)];
	uintptr_t pc = qa_read(&f->pc);

	return qa_read(&f->key) == key ? pc : 0;
}

/* The per-thread records and the statistics' clock (ticks.h): once, before
 * the statistics turn on. */
void lockstat_setup(void);
/* Add the threads' pending counts and details to the rows (before a
 * report). */
void lockstat_flush_counts(void);

#endif /* QLOCK_SHIM_LOCKSTAT_H */
