/* SPDX-License-Identifier: MIT */
/*
 * The queued spinlock (qspinlock) in user space, after the Linux kernel's
 * kernel/locking/qspinlock.c and its paravirt extension
 * (qspinlock_paravirt.h).  Written from the algorithm, not from the
 * kernel sources; docs/qspinlock.md has the full design and measurements.
 *
 * ---- Lock word (32 bits; bit numbers are value bits, so the layout is
 * the same on little- and big-endian; byte/halfword accesses go through
 * qa_u8_* / qa_u16_*, which pick the right address) -----------------------
 *
 *   PENDING_BITS == 8 (default)        PENDING_BITS == 1 (wide tail; forced
 *                                      by QLOCK_WORD_ATOMICS_ONLY)
 *    0- 7  locked byte                  0- 7  locked byte
 *    8-15  pending byte (value 1)       8     pending bit
 *   16-17  tail index (nesting 0..3)    9-10  tail index
 *   18-31  tail slot + 1 (14 bits)     11-31  tail slot + 1 (21 bits)
 *
 *   locked byte: 0 free, 1 held, 3 (SLOW) held and the queue head sleeps
 *   on this word, so the unlocker must wake it.
 *   tail: the last queued thread (slot + 1, so 0 = no queue) and the
 *   nesting level of the node it queued with.
 *
 * ---- States (tail, pending, locked); * = any, n = our tail --------------
 *
 *   uncontended         0,0,0 -> 0,0,1                    fast path cmpxchg
 *   pending (one        0,0,1 -> 0,1,1 -> 0,1,0 -> 0,0,1  fetch_or, wait,
 *     contender)                                          halfword store
 *   hand-over wait      0,1,0 seen: spin a bounded number of loads until it
 *                       becomes 0,0,1 (a pending owner is taking the lock)
 *   queue               p,*,* -> n,*,*                    tail exchange
 *   head, alone         n,0,0 -> 0,0,1                    cmpxchg
 *   head, others queued *,0,0 -> *,0,1   (spin-only)      plain byte store
 *                       *,1,0 -> *,0,1   (parking)        plain halfword
 *                                                         store (8-bit)
 *   unlock              *,*,1 -> *,*,0   release fetch_sub(1) of the word
 *                                        (plain release store: spin-only)
 *   steal (parking)     n,0,0 -> n,0,1   cmpxchg of the whole word
 *   head sleeps         *,0,1 -> *,0,3   cmpxchg of the locked byte
 *   slow unlock         *,*,3 -> *,*,2 -> *,*,0   the same fetch_sub, a
 *                                        release byte store, a futex wake
 *
 * ---- Parking (the user-space paravirt design; docs/qspinlock.md) --------
 *
 * Every user-space thread can be preempted, as a vCPU can, so the
 * parking variants do what pv qspinlock does:
 *  - a queued (non-head) waiter spins on its node's `locked` for a bounded
 *    time (qc_spinner), sooner if its predecessor sleeps ("wait early"),
 *    then marks its node HALTED and futex-waits on node->state; the
 *    predecessor, handing the queue head over, wakes exactly it;
 *  - the queue head sets pending while it spins (which stops stealing),
 *    claims the lock when the locked byte clears; when its budget runs out
 *    it clears pending, turns the locked byte 1 -> SLOW and futex-waits on
 *    the lock word; the unlocker that finds SLOW wakes it (only the head
 *    ever waits on the lock word: wake one wakes exactly it);
 *  - a new arrival may steal the lock while a queue exists and nobody
 *    holds pending (the head sleeps), like pv's hybrid unfair trylock;
 *  - the pending path is bounded too; when it gives up it queues.
 *
 * Uncontended unlock is one release fetch_sub of the whole word (locked
 * 1 -> 0), an RMW as the paravirt unlock's cmpxchg: a plain release store
 * cannot tell that a head went to sleep without a store-load barrier
 * (which costs as much as the RMW), and reading the word again after
 * releasing it would touch memory the next owner may already have freed.
 * The subtraction is 32 bits wide, not a byte operation, because mixing
 * sizes on a word costs more than the RMW here (docs/qspinlock.md).  The
 * spin-only variant keeps the native plain release byte store.
 *
 * ---- Ordering (what pairs with what) -------------------------------------
 *
 *  O1  fast path / steal / trylock cmpxchg ACQUIRE  <->  unlock RELEASE
 *      (cmpxchg or store) of the previous owner.
 *  O2  pending owner and queue head wait with load-ACQUIRE (or cmpxchg
 *      ACQUIRE, cmpxchg-wait variant) for the locked byte to clear  <->
 *      unlock RELEASE; so the claiming plain stores need no ordering.
 *  O3  the tail exchange is fully ordered: its release half publishes our
 *      node's initialisation, its acquire half (in the successor, whose
 *      exchange returned our tail) orders that before the successor
 *      touches our node.  The kernel uses a relaxed exchange after
 *      smp_wmb() and relies on the address dependency.
 *  O4  prev->next store RELEASE  <->  load ACQUIRE of node->next by prev,
 *      before it writes our node->locked (our init happens before).
 *  O5  hand-over: next->locked store RELEASE  <->  node->locked load
 *      ACQUIRE by the waiter (MCS).
 *  O6  sleep/wake of a queued waiter, a Dekker pair of seq_cst RMWs:
 *      waiter xchg(state, HALTED) then fetch_or(locked, 0);  kicker
 *      xchg(locked, 1) then cmpxchg(state, HALTED -> RUNNING).  One of them
 *      sees the other: the waiter does not sleep, or the kicker wakes it.
 *  O7  sleep/wake of the head: both sides are RMWs of the lock word
 *      (head cmpxchg of the locked byte 1 -> SLOW, unlocker fetch_sub 1),
 *      so one is ordered before the other: either the head's cmpxchg fails
 *      (the byte is 0 already) or the unlocker sees SLOW and wakes.
 *      The futex wait rechecks the word in the kernel, so a release between
 *      the head's cmpxchg and its sleep is not missed.
 */
#define _GNU_SOURCE
#include "lock/qspinlock_variants.h"

#include <sched.h>
#include <stddef.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/misuse.h"
#include "core/testhook.h"
#include "core/slot.h"
#include "core/spin.h"
#include "core/lockevent.h"

_Static_assert(sizeof(qlock_spinlock_t) == 4, "qlock_spinlock_t is 4 bytes");
_Static_assert(QLOCK_MAX_THREADS <= QS_TAIL_SLOT_MAX,
	       "QLOCK_MAX_THREADS does not fit in the qspinlock tail");

#define QS_CLASS QC_CLASS_qspinlock

/* Bounded wait in the 0,1,0 hand-over state (the kernel's x86 value). */
#define QS_PENDING_LOOPS 512
/* A queued waiter looks at its predecessor's state every so many spins. */
#define QS_PREV_CHECK_MASK 0xff

enum qs_state { QS_RUNNING = 0, QS_HALTED = 1 };

/* Give the CPU to a thread we wait for (a model checker has no scheduler). */
static inline void qs_yield(void)
{
#ifndef QLOCK_MODEL
	sched_yield();
#else
	qc_model_relax();
#endif
}

struct qs_node {
	struct qs_node *next; /* successor in the queue */
	uint32_t locked;      /* 1: you are the queue head (MCS hand-over) */
	uint32_t state;       /* enum qs_state; futex word of a sleeper */
	uint32_t count;       /* nesting depth; node 0 of a slot only */
} __attribute__((aligned(32)));

/* Static, indexed by thread slot: never freed, so a stale tail that names
 * a node is always safe to dereference. */
static struct qs_node qs_nodes[QLOCK_MAX_THREADS][QS_MAX_NODES];

enum qs_variant {
	QS_V_PARK,          /* qspinlock */
	QS_V_CMPXCHG_GRAB,  /* qspinlock-cmpxchg-grab (seed 003 before) */
	QS_V_CMPXCHG_WAIT,  /* qspinlock-cmpxchg-wait (seed 001 RFC) */
	QS_V_SPIN_ONLY,     /* qspinlock-spin-only (native kernel) */
};

#define QS_PARKS(v)    ((v) != QS_V_SPIN_ONLY)
#define QS_CWAIT(v)    ((v) == QS_V_CMPXCHG_WAIT)
#define QS_CGRAB(v)    ((v) == QS_V_CMPXCHG_GRAB)

static inline struct qs_node *qs_decode_tail(uint32_t tail)
{
	return &qs_nodes[qs_tail_slot(tail)][qs_tail_idx(tail)];
}

/*
 * p,*,* -> n,*,*: publish our tail, return the previous word.  Fully
 * ordered (O3): release publishes our node's initialisation, acquire makes
 * the predecessor's visible before we touch its node.  (The kernel uses a
 * relaxed exchange plus smp_wmb() and the address dependency; C11 and
 * ThreadSanitizer need the ordering on the access.  On x86 and arm64 LSE
 * it is the same instruction.)
 */
static inline uint32_t qs_xchg_tail(uint32_t *w, uint32_t tail)
{
#if QS_PENDING_BITS == 8
	return (uint32_t)qa_u16_xchg(w, 16, (uint16_t)(tail >> 16)) << 16;
#else
	uint32_t old = qa_read(w);

	while (!qa_try_cmpxchg(w, &old, (old & ~QS_TAIL_MASK) | tail))
		;
	return old;
#endif
}

/* *,1,0 -> *,0,1 by the pending owner (nobody else may write the locked
 * byte while we own pending and it is 0; see the steal condition). */
static inline void qs_clear_pending_set_locked(uint32_t *w)
{
#if QS_PENDING_BITS == 8
	qa_u16_write(w, 0, (uint16_t)QS_LOCKED_VAL);
#else
	qa_fetch_add_relaxed(w, QS_LOCKED_VAL - QS_PENDING_VAL);
#endif
}

/* The kernel's queued_spin_trylock: only a free word (fair). */
static inline bool qs_trylock_fair(uint32_t *w)
{
	uint32_t v = qa_read(w);

	return !v && qa_try_cmpxchg_acquire(w, &v, QS_LOCKED_VAL); /* O1 */
}

/* Take the lock if nobody holds it or pending, even with a queue (parking
 * variants): tail and pending stay as they are. */
static inline bool qs_trylock_steal(uint32_t *w)
{
	uint32_t v = qa_read(w);

	while (!(v & QS_LOCKED_PENDING_MASK))
		if (qa_try_cmpxchg_acquire(w, &v, v | QS_LOCKED_VAL)) /* O1 */
			return true;
	return false;
}

/*
 * The hybrid unfair trylock of a new arrival: while a queue exists and its
 * head is not actively spinning (pending clear), keep trying to take the
 * lock, for a bounded time.  *valp gets the last word seen.
 */
static bool qs_steal(uint32_t *w, uint32_t *valp, struct qc_spinner *s)
{
	uint32_t v = *valp;

	qc_spin_begin(s);
	for (;;) {
		if (!(v & QS_LOCKED_PENDING_MASK)) {
			if (qa_try_cmpxchg_acquire(w, &v, v | QS_LOCKED_VAL)) {
				qc_event_inc(QS_CLASS, QC_EV_steal);
				return true;
			}
			continue;
		}
		if (!(v & QS_TAIL_MASK) || (v & QS_PENDING_MASK))
			break;
		if (!qc_spin_continue(s))
			break;
		v = qa_read(w);
	}
	*valp = v;
	return false;
}

/*
 * Pending owner: wait for the owner to go away (0,1,1 -> 0,1,0) and take
 * the lock (-> 0,0,1).  Parking variants give up after the spin budget
 * (false; pending still ours).
 */
static inline __attribute__((always_inline)) bool
qs_pending_acquire(uint32_t *w, uint32_t val, const enum qs_variant var,
		   struct qc_spinner *s)
{
	qc_spin_begin(s);
	if (QS_CWAIT(var)) {
		/* Seed 001: the wait is the cmpxchg itself; expect the locked
		 * byte clear, keep whatever else we were told is there. */
		uint32_t v = val & ~QS_LOCKED_MASK;

		for (;;) {
			if (qa_try_cmpxchg_acquire(w, &v, (v & ~QS_PENDING_MASK) |
							  QS_LOCKED_VAL)) /* O2 */
				return true;
			v &= ~QS_LOCKED_MASK;
			if (!qc_spin_continue(s))
				return false;
		}
	}
	while (val & QS_LOCKED_MASK) {
		if (QS_PARKS(var)) {
			if (!qc_spin_continue(s))
				return false;
		} else {
			qa_cpu_relax();
		}
		val = qa_read_acquire(w); /* O2 */
	}
	qs_clear_pending_set_locked(w);
	return true;
}

/* O6: wake a queued waiter that went to sleep on its node. */
static inline void qs_kick_node(struct qs_node *next)
{
	if (qa_cmpxchg(&next->state, QS_HALTED, QS_RUNNING) == QS_HALTED) {
		qc_futex_wake(&next->state, 1, QS_CLASS, QC_OP_LOCK);
		qc_event_inc(QS_CLASS, QC_EV_wake);
	}
}

/*
 * A queued waiter: wait until the predecessor makes us the head.  Parking:
 * spin a bounded time (less when the predecessor itself sleeps), then
 * sleep on node->state until kicked.
 */
static void qs_wait_node_park(struct qs_node *node, struct qs_node *prev,
			      struct qc_spinner *s)
{
	for (;;) {
		bool early = qa_read(&prev->state) != QS_RUNNING;

		if (early)
			qc_event_inc(QS_CLASS, QC_EV_wait_early);
		qc_spin_begin(s);
		for (unsigned i = 1; !early; i++) {
			if (qa_read_acquire(&node->locked)) /* O5 */
				return;
			if (!qc_spin_continue(s))
				break;
			if (!(i & QS_PREV_CHECK_MASK) &&
			    qa_read(&prev->state) != QS_RUNNING) {
				/* The predecessor sleeps: it must wake,
				 * take and pass the lock first. */
				qc_event_inc(QS_CLASS, QC_EV_wait_early);
				break;
			}
		}
		(void)qa_xchg(&node->state, QS_HALTED);          /* O6 */
		if (qa_fetch_or(&node->locked, 0)) {             /* O6 */
			qa_write(&node->state, QS_RUNNING);
			break;
		}
		qc_event_inc(QS_CLASS, QC_EV_sleep);
		(void)qc_futex_wait(&node->state, QS_HALTED, NULL,
				    CLOCK_MONOTONIC, QS_CLASS, QC_OP_LOCK);
		qa_write(&node->state, QS_RUNNING);
	}
	(void)qa_read_acquire(&node->locked); /* O5 (seen 1 above) */
}

/*
 * Queue head, parking: spin with pending set (no stealing) and claim the
 * lock when the locked byte clears; after the budget, clear pending, mark
 * the locked byte SLOW and sleep on the lock word until an unlocker wakes
 * us.  Returns true when the claim also cleared our tail (we were alone).
 */
static inline __attribute__((always_inline)) bool
qs_head_park(uint32_t *w, uint32_t tail, struct qs_node *node,
	     struct qs_node **nextp, const enum qs_variant var,
	     struct qc_spinner *s)
{
	uint32_t v = qa_read_acquire(w);

	for (;;) {
		bool own = false;

		qc_spin_begin(s);
		for (;;) {
			if (!own && !(v & QS_PENDING_MASK)) {
				/* *,0,* -> *,1,*: stop the stealers. */
				uint32_t old = qa_fetch_or_acquire(w, QS_PENDING_VAL);

				own = !(old & QS_PENDING_MASK);
				v = old | QS_PENDING_VAL;
			}
			if (own && QS_CWAIT(var)) {
				/* Seed 001: wait and claim with one cmpxchg
				 * expecting the locked byte clear. */
				uint32_t e = v & ~QS_LOCKED_MASK;
				uint32_t n = (e & QS_TAIL_MASK) == tail ?
					QS_LOCKED_VAL :
					(e & ~QS_PENDING_MASK) | QS_LOCKED_VAL;

				if (qa_try_cmpxchg_acquire(w, &e, n)) /* O2 */
					return n == QS_LOCKED_VAL;
				v = e;
				if (!*nextp)
					*nextp = qa_read_acquire(&node->next);
			} else if (own && !(v & QS_LOCKED_MASK)) {
				/* n,1,0 -> 0,0,1 when alone. */
				if ((v & QS_TAIL_MASK) == tail &&
				    qa_try_cmpxchg_acquire(w, &v, QS_LOCKED_VAL))
					return true;
				/* Others queued: *,1,0 -> *,0,1.  The locked
				 * byte cannot change under us: stealers need
				 * pending clear, SLOW needs it held. */
				if (QS_CGRAB(var)) {
					while (!qa_try_cmpxchg_acquire(w, &v,
						(v & ~QS_PENDING_MASK) | QS_LOCKED_VAL))
						;
				} else {
					qs_clear_pending_set_locked(w);
				}
				return false;
			}
			if (!qc_spin_continue(s))
				break;
			if (!(own && QS_CWAIT(var)))
				v = qa_read_acquire(w); /* O2 */
		}

		/* Budget spent: let stealers in and sleep until woken. */
		if (own)
			qa_fetch_andnot_relaxed(w, QS_PENDING_VAL);
		if (qa_u8_cmpxchg_relaxed(w, QS_LOCKED_OFFSET, QS_LOCKED_VAL,
					  QS_SLOW_VAL) == QS_LOCKED_VAL) { /* O7 */
			for (;;) {
				v = qa_read(w);
				if ((v & QS_LOCKED_MASK) != QS_SLOW_VAL)
					break;
				qc_event_inc(QS_CLASS, QC_EV_sleep);
				(void)qc_futex_wait(w, v, NULL, CLOCK_MONOTONIC,
						    QS_CLASS, QC_OP_LOCK);
			}
		}
		v = qa_read_acquire(w);
	}
}

/* No node (slot limit or nesting > QS_MAX_NODES): a trylock loop that
 * spins a bounded time, then yields, so it neither burns a core nor
 * touches any queue state. */
static void qs_lock_no_node(uint32_t *w, const enum qs_variant var)
{
	qc_event_inc(QS_CLASS, QC_EV_lock_no_node);
	for (;;) {
		for (uint32_t i = qc_spin_limit() + 1; i; i--) {
			/* The spin-only head claims with a plain store, so
			 * only a free word may be taken there. */
			if (QS_PARKS(var) ? qs_trylock_steal(w) : qs_trylock_fair(w))
				return;
			qa_cpu_relax();
		}
		qs_yield();
	}
}

static inline __attribute__((always_inline)) void
qs_slowpath(uint32_t *w, uint32_t val, const enum qs_variant var)
{
	struct qc_spinner s;
	struct qs_node *node0, *node, *prev, *next = NULL;
	uint32_t tail, old;
	int slot, idx;

	qc_spinner_init(&s);
	qc_event_inc(QS_CLASS, QC_EV_slowpath);

	/* Parking: steal while the queue head sleeps (hybrid trylock). */
	if (QS_PARKS(var) && (val & QS_TAIL_MASK) && qs_steal(w, &val, &s))
		goto done;

	/* 0,1,0: a pending owner is taking over; wait a bounded time. */
	if (val == QS_PENDING_VAL) {
		for (int cnt = QS_PENDING_LOOPS;
		     (val = qa_read(w)) == QS_PENDING_VAL && cnt; cnt--)
			qa_cpu_relax();
	}

	/* Anything but the locked byte set: queue. */
	if (val & ~QS_LOCKED_MASK)
		goto queue;

	/* 0,0,* -> 0,1,* */
	val = qa_fetch_or_acquire(w, QS_PENDING_VAL);
	if (val & ~QS_LOCKED_MASK) {
		/* Contended after all: undo pending only if we set it. */
		if (!(val & QS_PENDING_MASK))
			qa_fetch_andnot_relaxed(w, QS_PENDING_VAL);
		goto queue;
	}
	/* We own pending: 0,1,* -> 0,1,0 -> 0,0,1. */
	if (qs_pending_acquire(w, val, var, &s)) {
		qc_event_inc(QS_CLASS, QC_EV_lock_pending);
		goto done;
	}
	qa_fetch_andnot_relaxed(w, QS_PENDING_VAL); /* gave up (parking) */

queue:
	slot = qc_slot_self();
	if (qa_unlikely(slot < 0)) {
		qs_lock_no_node(w, var);
		goto done;
	}
	node0 = &qs_nodes[slot][0];
	idx = (int)qa_read(&node0->count);
	if (qa_unlikely(idx >= QS_MAX_NODES)) {
		qs_lock_no_node(w, var);
		goto done;
	}
	/* Claim the node before initialising it: a signal handler that
	 * interrupts us from here on uses the next one. */
	qa_write(&node0->count, (uint32_t)idx + 1);
	qa_barrier();
	if (idx)
		qc_event_inc(QS_CLASS, QC_EV_lock_use_node2);
	node = &qs_nodes[slot][idx];
	tail = qs_encode_tail(slot, idx);
	qa_write(&node->locked, 0);
	qa_write(&node->next, (struct qs_node *)NULL);
	qa_write(&node->state, QS_RUNNING);

	/* We touched a possibly cold line: one more try before queueing. */
	if (QS_PARKS(var) ? qs_trylock_steal(w) : qs_trylock_fair(w))
		goto release;

	old = qs_xchg_tail(w, tail);                           /* O3 */

	if (old & QS_TAIL_MASK) {
		prev = qs_decode_tail(old);
		qa_write_release(&prev->next, node);            /* O4 */
		if (QS_PARKS(var)) {
			qs_wait_node_park(node, prev, &s);
		} else {
			while (!qa_read_acquire(&node->locked))  /* O5 */
				qa_cpu_relax();
		}
		/* The successor may have linked up already. */
		next = qa_read_acquire(&node->next);
	}

	/* Queue head. */
	if (QS_PARKS(var)) {
		if (qs_head_park(w, tail, node, &next, var, &s))
			goto release_queued;
	} else {
		/* *,x,y -> *,0,0 */
		while ((val = qa_read_acquire(w)) & QS_LOCKED_PENDING_MASK) /* O2 */
			qa_cpu_relax();
		/* n,0,0 -> 0,0,1 alone; else *,0,0 -> *,0,1 with a plain
		 * store (seed 003): nobody else may take a lock that has a
		 * queue in this variant. */
		if ((val & QS_TAIL_MASK) == tail &&
		    qa_try_cmpxchg_relaxed(w, &val, QS_LOCKED_VAL))
			goto release_queued;
		qa_u8_write(w, QS_LOCKED_OFFSET, (uint8_t)QS_LOCKED_VAL);
	}

	/* Others are queued: wait for our successor to link up (it is
	 * between its tail exchange and its prev->next store). */
	if (!next) {
		uint32_t spins = 0;

		while (!(next = qa_read_acquire(&node->next))) {   /* O4 */
			if (QS_PARKS(var) && ++spins > qc_spin_limit())
				qs_yield();
			else
				qa_cpu_relax();
		}
	}
	if (QS_PARKS(var)) {
		(void)qa_xchg(&next->locked, 1);                /* O5, O6 */
		qs_kick_node(next);
	} else {
		qa_write_release(&next->locked, 1);             /* O5 */
	}

release_queued:
	qc_event_inc(QS_CLASS, QC_EV_lock_queued);
release:
	qa_barrier(); /* our last use of the node comes before we free it */
	qa_write(&node0->count, (uint32_t)idx);
done:
	qc_spin_account(&s, QS_CLASS);
}

/* ---- instantiations ------------------------------------------------------ */

static __attribute__((noinline)) void qs_slow_park(uint32_t *w, uint32_t v)
{
	qs_slowpath(w, v, QS_V_PARK);
}

static __attribute__((noinline)) void qs_slow_cgrab(uint32_t *w, uint32_t v)
{
	qs_slowpath(w, v, QS_V_CMPXCHG_GRAB);
}

static __attribute__((noinline)) void qs_slow_cwait(uint32_t *w, uint32_t v)
{
	qs_slowpath(w, v, QS_V_CMPXCHG_WAIT);
}

static __attribute__((noinline)) void qs_slow_spin(uint32_t *w, uint32_t v)
{
	qs_slowpath(w, v, QS_V_SPIN_ONLY);
}

/* 0,0,0 -> 0,0,1 (O1), else the slow path with the word we saw. */
#define QS_FAST_LOCK(lock, slow) do {                                   \
	uint32_t qs__v = 0;                                             \
	if (qa_likely(qa_try_cmpxchg_acquire(&(lock)->val, &qs__v,      \
					     QS_LOCKED_VAL)))           \
		return;                                                 \
	slow(&(lock)->val, qs__v);                                      \
} while (0)

QLOCK_API void qlock_spin_lock(qlock_spinlock_t *lock)
{
	QS_FAST_LOCK(lock, qs_slow_park);
}

void qs_lock_cmpxchg_grab(qlock_spinlock_t *lock)
{
	QS_FAST_LOCK(lock, qs_slow_cgrab);
}

void qs_lock_cmpxchg_wait(qlock_spinlock_t *lock)
{
	QS_FAST_LOCK(lock, qs_slow_cwait);
}

void qs_lock_spin_only(qlock_spinlock_t *lock)
{
	QS_FAST_LOCK(lock, qs_slow_spin);
}

QLOCK_API bool qlock_spin_trylock(qlock_spinlock_t *lock)
{
	return qs_trylock_steal(&lock->val);
}

bool qs_trylock_spin_only(qlock_spinlock_t *lock)
{
	return qs_trylock_fair(&lock->val);
}

/* SLOW found: the head sleeps on the word.  Release, then wake it (the
 * futex call only names the address; no memory access after release). */
static __attribute__((noinline)) void qs_unlock_slow(uint32_t *w, uint32_t old)
{
	if (qa_unlikely(!(old & QS_LOCKED_MASK))) {
		/* Not held: undo our subtraction before reporting. */
		qa_fetch_add_relaxed(w, QS_LOCKED_VAL);
		qc_misuse("qlock_spin_unlock", "the lock is not held", w);
		return;
	}
	/* *,*,SLOW-1 -> *,*,0 (nobody else writes a held locked byte). */
	qa_u8_write_release(w, QS_LOCKED_OFFSET, 0);
	qc_test_released(w);
#ifndef QLOCK_MUTATE_WAKE_QSPINLOCK /* the parked head's wake */
	qc_futex_wake(w, 1, QS_CLASS, QC_OP_UNLOCK);
#endif /* else: model-check mutation (tests/model): must be caught */
	qc_event_inc(QS_CLASS, QC_EV_wake);
}

/*
 * *,*,1 -> *,*,0: one release subtraction on the whole word (O1, O7).  Its
 * result tells a plain 1 from SLOW, and, unlike the kernel's byte cmpxchg
 * or byte store, it is a 32-bit access like the 32-bit cmpxchg that took
 * the lock: on the AMD EPYC we measure, mixing a byte access into a word
 * that was just accessed whole costs 2-3 ns per lock+unlock
 * (docs/qspinlock.md, "Uncontended cost").
 */
QLOCK_API void qlock_spin_unlock(qlock_spinlock_t *lock)
{
#ifndef QLOCK_MUTATE_QSPINLOCK
	uint32_t old = qa_fetch_sub_release(&lock->val, QS_LOCKED_VAL);
#else /* model-check mutation (tests/model): must be caught */
	uint32_t old = qa_fetch_sub_relaxed(&lock->val, QS_LOCKED_VAL);
#endif

	if (qa_likely((old & QS_LOCKED_MASK) == QS_LOCKED_VAL)) {
		qc_test_released(lock);
		return;
	}
	qs_unlock_slow(&lock->val, old);
}

/* Native: one release store of the locked byte (O1). */
void qs_unlock_spin_only(qlock_spinlock_t *lock)
{
#ifndef QLOCK_MUTATE_QSPINLOCK
	qa_u8_write_release(&lock->val, QS_LOCKED_OFFSET, 0);
#else /* model-check mutation (tests/model): must be caught */
	qa_u8_write(&lock->val, QS_LOCKED_OFFSET, 0);
#endif
}

QLOCK_API bool qlock_spin_is_locked(qlock_spinlock_t *lock)
{
	return qa_read(&lock->val) != 0;
}
