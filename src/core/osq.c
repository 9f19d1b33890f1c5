/* SPDX-License-Identifier: MIT */
/*
 * OSQ: the optimistic spin queue (an abortable MCS lock), after the
 * algorithm of the kernel's kernel/locking/osq_lock.c, written for user
 * space from its description.
 *
 * Layout
 *   osq->tail   slot + 1 of the last queued spinner, 0 = empty.
 *   nodes[slot] one queue node per thread slot, in a static array: a node
 *               outlives every thread that ever used it, so a stale pointer
 *               to it (a racing unqueue) never points into freed memory.
 *
 *   node.next   successor's node, written by the successor once it queued
 *               behind us; taken (xchg to NULL) by whoever passes the head on
 *               or unqueues.
 *   node.prev   predecessor's node, written by us when we queue and
 *               rewritten by an unqueueing predecessor (its step C).
 *   node.locked 1 once the predecessor made us the head of the queue.
 *
 * States of one thread (osq_self claims the thread's node from before its
 * first write in qc_osq_lock() to after its last use in qc_osq_unlock()
 * or the unqueue, so a signal handler that spins on an OSQ meanwhile is
 * refused instead of sharing the node):
 *   idle --lock: xchg(tail) finds 0--> head (returns true)
 *   idle --lock: xchg(tail) finds P--> queued behind P, spins on node.locked
 *   queued --P's unlock sets locked--> head (returns true)
 *   queued --deadline passed--> unqueue (steps A, B, C) --> idle (false)
 *   head --unlock--> idle: tail back to 0, or node.locked of the successor
 *
 * Unqueue (a queued spinner giving up), as in the kernel:
 *   A. undo prev->next = node with cmpxchg(prev->next, node, NULL).  It
 *      fails only when prev is passing the head to us (then node.locked
 *      becomes 1 and we own the OSQ after all) or when prev is unqueueing
 *      itself (its step C gives us a new node.prev: re-read and retry).
 *   B. stabilise our successor: either we are the tail, and moving the tail
 *      back to prev's slot leaves nothing behind us, or a successor has
 *      linked itself (or is about to: its xchg(tail) is done and its write
 *      of node.next follows), and xchg(node.next, NULL) takes it.
 *   C. link prev and next to each other.
 *
 * Why the user-space version stays correct without the kernel's disabled
 * preemption: a node is only ever used by the one thread that owns its
 * slot, which is a single sequential execution just like a CPU with
 * preemption off; preemption can make a waiter in step A/B or in unlock
 * wait longer for a descheduled neighbour, never make it wrong.  Those
 * short waits (a neighbour between two of its stores) yield the CPU after
 * a while so an oversubscribed machine lets the neighbour run.
 *
 * A queued spinner also yields the CPU every OSQ_YIELD_AFTER spins: on an
 * oversubscribed machine the thread that will hand the queue over may be
 * preempted, and spinning out a whole time slice per hand-over would make
 * the queue crawl (the kernel's spinners are never preempted).
 *
 * Giving up: a user thread cannot see whether the spinner ahead of it (or
 * the lock owner) is on a CPU, which is what the kernel's osq_lock polls
 * (need_resched(), vcpu_is_preempted()).  Here a queued spinner gives up
 * once its CLOCK_MONOTONIC deadline passes (checked every OSQ_CLOCK_EVERY
 * spins, to keep clock reads off the spin).  A spinner whose predecessor
 * gives up does not need to notice it: the predecessor unlinks itself and
 * the queue closes up.  The head of the queue, in turn, is expected to
 * leave it (qc_osq_unlock) before it sleeps, so a queued spinner never
 * waits on a sleeping predecessor for long.
 */
#include "osq.h"

#include <sched.h>
#include <stddef.h>

#include "atomic.h"
#include "futex.h"
#include "slot.h"
#include "lockevent.h"
#include "testhook.h"

struct osq_node {
	struct osq_node *next;
	struct osq_node *prev;
	uint32_t locked;
} __attribute__((aligned(64)));

static struct osq_node nodes[QLOCK_MAX_THREADS];

/* This thread is queued on (or holds) an OSQ: a second one returns false. */
static __thread struct osq_node *osq_self
	__attribute__((tls_model("initial-exec")));

enum {
	OSQ_CLOCK_EVERY = 64,  /* spins between deadline checks */
	OSQ_YIELD_AFTER = 256, /* neighbour waits: spins before sched_yield */
};

static inline struct osq_node *osq_node_of(uint32_t slot1)
{
	return &nodes[slot1 - 1];
}

/* The value a node stands for in tail: its slot + 1. */
static inline uint32_t osq_slot1(const struct osq_node *node)
{
	return (uint32_t)(node - nodes) + 1;
}

/* A short wait for a neighbour that is between two stores. */
static inline void osq_relax(unsigned *n)
{
	if (++*n % OSQ_YIELD_AFTER == 0) {
#ifndef QLOCK_MODEL
		sched_yield();
#endif
	}
	qa_cpu_relax();
}

/*
 * Step B / unlock slow path: wait until our successor is known, or the
 * queue ends with us and we could move the tail back to `old` (prev's
 * slot + 1, or 0 when unlocking).  Returns the successor or NULL.
 */
static struct osq_node *osq_wait_next(struct qc_osq *osq,
				      struct osq_node *node, uint32_t old)
{
	unsigned spins = 0;

	for (;;) {
		uint32_t t = osq_slot1(node);

		/*
		 * Fully ordered: as unlock (old == 0) it releases the OSQ
		 * critical section to the next xchg of tail; as step B it
		 * orders our step A before anyone queueing behind prev.
		 */
		if (qa_read(&osq->tail) == t && qa_try_cmpxchg(&osq->tail, &t, old))
			return NULL;
		/*
		 * A successor swapped tail after us and will store itself in
		 * node->next (its link store); take it so that nobody else
		 * (an unlock racing with our unqueue) can.
		 */
		if (qa_read(&node->next)) {
			struct osq_node *next = qa_xchg(&node->next, NULL);

			if (next)
				return next;
		}
		osq_relax(&spins);
	}
}

bool qc_osq_lock(struct qc_osq *osq, uint64_t deadline_ns)
{
	struct osq_node *node, *prev, *next;
	uint32_t old;
	unsigned spins = 0;
	int slot;

	if (qa_unlikely(osq_self != NULL))
		return false;
	slot = qc_slot_self();
	if (qa_unlikely(slot < 0))
		return false;
	node = &nodes[slot];
	/* Claim the node before touching it (as the qspinlock does): a
	 * signal handler that spins on an OSQ from here is refused. */
	osq_self = node;
	qa_barrier();
	qa_write(&node->locked, 0);
	qa_write(&node->next, NULL);
	qc_test_point(QC_TP_OSQ_NODE, osq);

	/*
	 * Fully ordered: acquire pairs with the release of the previous
	 * head's tail cmpxchg (uncontended hand-over: the OSQ critical
	 * section before happens-before ours); release publishes our node
	 * initialisation to the successor that reads tail and links itself
	 * into node->next.
	 */
#ifndef QLOCK_MUTATE_OSQ
	old = qa_xchg(&osq->tail, osq_slot1(node));
#else /* model-check mutation (tests/model): must be caught */
	old = qa_xchg_relaxed(&osq->tail, osq_slot1(node));
#endif
	if (old == 0)
		return true;

	prev = osq_node_of(old);
	qa_write(&node->prev, prev);
	/*
	 * Release: node->prev (and our initialised node) are visible to
	 * whoever finds us through prev->next (prev's unlock or unqueue).
	 */
	qa_write_release(&prev->next, node);

	/* Acquire pairs with the release store of locked in qc_osq_unlock(). */
	for (;;) {
		if (qa_read_acquire(&node->locked))
			return true;
		/*
		 * The head (or whoever hands over to us) may have been
		 * preempted: yield now and then, or an oversubscribed queue of
		 * patient spinners burns a time slice per hand-over.
		 */
		osq_relax(&spins);
		if (spins % OSQ_CLOCK_EVERY == 0 && qc_now_ns() >= deadline_ns)
			break;
	}

	/* Step A: undo prev->next = node. */
	spins = 0;
	for (;;) {
		struct osq_node *want = node;

		if (qa_read(&prev->next) == node &&
		    qa_try_cmpxchg_acquire(&prev->next, &want, NULL))
			break;
		/* Lost to prev's unlock: it is handing the OSQ to us. */
		if (qa_read_acquire(&node->locked))
			return true;
		osq_relax(&spins);
		/* Or to prev's own unqueue: its step C rewrites node->prev. */
		prev = qa_read_acquire(&node->prev);
	}

	/* Step B: who follows us?  prev->next is NULL now, nobody hands over. */
	next = osq_wait_next(osq, node, osq_slot1(prev));
	if (next) {
		/*
		 * Step C: close the gap.  next->prev first, so that next,
		 * failing its own step A on our node, finds prev; release so
		 * it sees prev's node as it is.
		 */
		qa_write_release(&next->prev, prev);
		qa_write_release(&prev->next, next);
	}
	qa_barrier(); /* done with the node before we free it */
	osq_self = NULL;
	qc_event_inc(QC_CLASS_osq, QC_EV_timeout);
	return false;
}

void qc_osq_unlock(struct qc_osq *osq)
{
	struct osq_node *node = osq_self, *next;
	uint32_t t;

	if (qa_unlikely(node == NULL))
		return;
	qc_test_point(QC_TP_OSQ_UNLOCK, osq);
	/* Release: the next xchg of tail acquires our critical section. */
	t = osq_slot1(node);
	if (qa_unlikely(!qa_try_cmpxchg_release(&osq->tail, &t, 0))) {
		next = qa_xchg(&node->next, NULL);
		if (!next)
			next = osq_wait_next(osq, node, 0);
		/* Release pairs with the acquire load of locked in
		 * qc_osq_lock(). */
		if (next) {
			qc_event_inc(QC_CLASS_osq, QC_EV_handoff);
			qa_write_release(&next->locked, 1);
		}
	}
	/* Our last use of the node comes before we free it for a signal
	 * handler. */
	qa_barrier();
	osq_self = NULL;
}

bool qc_osq_is_locked(struct qc_osq *osq)
{
	return qa_read(&osq->tail) != 0;
}
