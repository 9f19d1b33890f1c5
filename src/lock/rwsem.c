/* SPDX-License-Identifier: MIT */
/*
 * rwsem: the Linux kernel's reader-writer semaphore (kernel/locking/rwsem.c,
 * v6.x design) for user space, written from the algorithm's description.
 *
 * ---- Count word (sem->count, 32 bits) --------------------------------------
 *
 *   bit  0      WRITER_LOCKED  a writer holds the lock
 *   bit  1      FLAG_WAITERS   the wait queue is not empty
 *   bit  2      FLAG_HANDOFF   the lock is reserved for the first waiter
 *   bits 3-7    (reserved)
 *   bits 8-30   reader count   readers holding the lock, and readers that
 *                              have just added their bias in the fast path
 *                              (about to back it out in the slow path)
 *   bit 31      FLAG_READFAIL  guard: the reader count wrapped
 *
 *   READ_FULL = bit 30 | bit 31: 2^22 readers counted.  A reader whose
 *   bias makes the count full takes it back out and waits for room (or
 *   fails, in the trylocks), so at most QLOCK_RWSEM_MAX_READERS = 2^22 - 1
 *   hold the lock; the values above are headroom for biases on their way
 *   back out and for the 256 readers of one wake-up.
 *
 * 32 bits because every platform has 32-bit atomics and a futex is 32 bits;
 * a thread that nests read locks (the pthread drop-in's recursive readers)
 * is what can reach the limit, not the number of threads.
 *
 * ---- Owner word (sem->owner, uintptr_t) -------------------------------------
 *
 *   writer:  the writer's thread tag (the address of a thread-local, 4-byte
 *            aligned), flags clear;  0 when unlocked by a writer
 *   readers: the last reader's tag | READER_OWNED (bit 0), left behind when
 *            the readers are gone (a hint, as in the kernel)
 *   bit 1:   NONSPINNABLE: a writer spun on the readers for too long; writers
 *            stop spinning until a writer takes the lock or an unlock that
 *            wakes waiters clears it
 *
 * ---- Wait queue --------------------------------------------------------------
 *
 * A circular doubly linked FIFO list (sem->wait_list points to the first
 * waiter) of struct rwsem_waiter nodes on the waiters' stacks, protected by
 * sem->wait_lock: a small spin-then-park lock (0 free, 1 locked, 2 locked
 * with sleepers).  FLAG_WAITERS and FLAG_HANDOFF change only under wait_lock.
 * Each waiter sleeps on its own futex word (waiter->futex):
 *   reader: 1 while waiting, 2 while asleep (or about to be); the waker
 *           exchanges in 0 (release) once the read lock is counted for it:
 *           the reader owns the lock when it sees 0
 *   writer: bit 0 = asleep (or about to be), bits 1-31 a wake-up sequence
 *           number the waker bumps under wait_lock; the writer takes the
 *           lock itself (rwsem_try_write_lock)
 * A waiter spins (qc_spin_limit() times) before it announces its sleep, and
 * a waker makes the futex_wake system call only for a waiter that announced
 * it: the kernel's wake_up_process() of a running task is nearly free, a
 * futex_wake is a system call, and most waiters here are woken while still
 * spinning.
 *
 * ---- Transitions -------------------------------------------------------------
 *
 *  read fast path:    count += READER_BIAS (acquire); done unless any of
 *                     WRITER_LOCKED|WAITERS|HANDOFF|READ_FULL was set
 *  read, count full:  count -= READER_BIAS under wait_lock (waking the
 *                     queue as a queueing reader would), poll until
 *                     READ_FULL clears (or the deadline), start again
 *  read_trylock_unfair: count += READER_BIAS (acquire cmpxchg) unless
 *                     WRITER_LOCKED or READ_FULL: past waiters and a
 *                     hand-off, which then waits for this reader too
 *  read slow path:    steal (keep the bias) if neither WRITER_LOCKED nor
 *                     HANDOFF, unless other readers hold it (owner says
 *                     READER_OWNED and > 1 reader counted); else queue,
 *                     taking the bias back (and setting WAITERS if first)
 *  read unlock:       count -= READER_BIAS (release cmpxchg, fails when
 *                     WAITERS appears); with WAITERS: take wait_lock,
 *                     then count -= READER_BIAS, and the last reader out
 *                     wakes the queue before dropping wait_lock
 *  write fast path:   cmpxchg 0 -> WRITER_LOCKED (acquire)
 *  write slow path:   optimistic spin (below), else queue and loop:
 *                     rwsem_try_write_lock under wait_lock (takes the lock
 *                     when no LOCK bits, or sets HANDOFF if first and waited
 *                     longer than the hand-off time), sleep until woken
 *  write unlock:      count -= WRITER_LOCKED (release cmpxchg); with
 *                     WAITERS: the same under wait_lock, then wake
 *  Either unlock's last access to the rwsem is its release (cmpxchg, or
 *  wl_unlock() after a release under wait_lock): the next owner may free
 *  it at once.  Only futex wakes (addresses only) follow.
 *  downgrade:         count += READER_BIAS - WRITER_LOCKED (release); wake
 *                     readers (without pre-adding a bias: it is read-owned)
 *  wake-up (rwsem_mark_wake, under wait_lock):
 *     first waiter a writer: bump its sequence and wake it
 *     first waiter a reader: pre-add one READER_BIAS; if a writer got in
 *       meanwhile, back it out (setting HANDOFF when the first waiter has
 *       waited too long) and stop; else take up to 256 readers off the
 *       queue -- "rwsem": all readers of the queue, also those behind
 *       writers; "rwsem-wake-front": only those before the first writer --
 *       add their biases, clear WAITERS if the queue emptied and HANDOFF if
 *       any reader was granted, then grant each (store 0, release) and
 *       wake them after wait_lock is dropped.
 *
 * ---- Optimistic spinning (writers only, as in the kernel since 5.11) ---------
 *
 * The kernel spins while the owner is on a CPU; user space cannot see that.
 * Here a writer in the slow path spins when the owner word is not
 * NONSPINNABLE, queued behind sem->osq so that one spinner at a time polls
 * the lock, and stops (then queues and sleeps) at the first of:
 *   - waiting in the OSQ longer than qc_owner_spin_ns() (default 20 us);
 *   - one writer owner holding the lock for longer than qc_owner_spin_ns()
 *     since we began watching it: it is probably preempted or blocked;
 *   - the lock changing hands to other writers OPT_MAX_OWNER_CHANGES times
 *     while we spin: we keep losing the race, spinning only burns CPU;
 *   - readers holding it longer than the kernel's reader threshold, scaled
 *     to the tunable: owner_spin/2 + min(readers, 30) * owner_spin/40
 *     (10-25 us by default); then NONSPINNABLE is set for everyone;
 *   - no owner named while the lock is not free, for longer than
 *     qc_owner_spin_ns();
 *   - a hand-off pending: the lock is reserved for the first waiter, which
 *     may have to be woken first (try_write_lock_unqueued refuses anyway).
 * QLOCK_OWNER_SPIN_NS=0 turns optimistic spinning off.
 *
 * ---- Hand-off ----------------------------------------------------------------
 *
 * Every waiter records when it may ask for a hand-off (now + qc_handoff_ns(),
 * default 4 ms).  A first writer that finds the lock held after that sets
 * HANDOFF (rwsem_try_write_lock); an unlock that finds a writer stole the
 * lock from a first reader past that time sets it for the reader
 * (rwsem_mark_wake).  HANDOFF stops the write fast path (count != 0), the
 * read fast path (READ_FAILED_MASK), reader stealing and spinning writers;
 * the next wake-up gives the lock to the first waiter.  A first writer
 * with the hand-off spins on a writer owner instead of sleeping, and retries
 * at once when the owner leaves.
 *
 * ---- Memory ordering -------------------------------------------------------
 *
 * Lock acquisitions on count are acquire and pair with the release of the
 * unlock that made them possible (read/write unlock, downgrade).  A reader
 * granted by a waker: the waker's fully ordered count update (pre-added
 * bias, or the final adjustment) reads from the releasing unlock, and its
 * release store of waiter->futex pairs with the reader's acquire load, so
 * the last writer's section happens-before the reader's.  Everything on the
 * queue and the waiter nodes is under wait_lock (acquire/release).
 *
 * A waker calls futex_wake on a waiter's word after dropping wait_lock; by
 * then the waiter may have returned and its stack been reused, so the wake
 * can be spurious for whatever waits at that address: every futex wait
 * tolerates spurious wake-ups (a private futex wake never touches memory).
 */
#include "qlock/rwsem.h"

#include <errno.h>
#include <stddef.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/misuse.h"
#include "core/osq.h"
#include "core/spin.h"
#include "core/stats.h"
#include "core/testhook.h"
#include "lock/rwsem_variants.h"

#define CLS QC_CLASS_rwsem

#define WRITER_LOCKED   QRWSEM_WRITER_LOCKED
#define FLAG_WAITERS    QRWSEM_FLAG_WAITERS
#define FLAG_HANDOFF    QRWSEM_FLAG_HANDOFF
#define READER_SHIFT    QRWSEM_READER_SHIFT
#define READER_BIAS     QRWSEM_READER_BIAS
#define FLAG_READFAIL   QRWSEM_FLAG_READFAIL
#define READER_MASK     QRWSEM_READER_MASK
#define LOCK_MASK       QRWSEM_LOCK_MASK
#define READ_FAILED_MASK QRWSEM_READ_FAILED_MASK
#define READ_FULL       QRWSEM_READ_FULL

#define READER_OWNED    QRWSEM_READER_OWNED
#define NONSPINNABLE    QRWSEM_NONSPINNABLE
#define OWNER_FLAGS     QRWSEM_OWNER_FLAGS

#define MAX_READERS_WAKEUP QRWSEM_MAX_READERS_WAKEUP

enum {
	OPT_MAX_OWNER_CHANGES = 8, /* writer owners seen come and go */
	CLOCK_EVERY = 16,          /* spins between clock reads */
};

enum waiter_type { WAIT_READ, WAIT_WRITE };

/* Futex word values: readers ... */
enum { R_GRANTED = 0, R_WAITING = 1, R_ASLEEP = 2 };
/* ... and writers. */
#define W_ASLEEP 1u
#define WSEQ_ONE 2u

struct rwsem_waiter {
	struct rwsem_waiter *next, *prev; /* circular, under wait_lock */
	uint32_t futex;       /* see the header comment */
	uint8_t type;         /* enum waiter_type */
	bool handoff_set;     /* under wait_lock */
	uintptr_t tag;        /* the waiter's thread tag */
	uint64_t timeout_ns;  /* CLOCK_MONOTONIC: may ask for a hand-off */
};

enum wake_type {
	WAKE_ANY,        /* wake whatever is at the front of the queue */
	WAKE_READERS,    /* wake readers only */
	WAKE_READ_OWNED, /* the caller holds a read lock: no pre-added bias */
};

enum owner_state {
	OWNER_NULL,
	OWNER_WRITER,
	OWNER_READER,
	OWNER_NONSPINNABLE,
};

/* Futex words to wake once wait_lock is dropped (the kernel's wake_q). */
struct wake_q {
	unsigned n;
	uint32_t *addr[MAX_READERS_WAKEUP + 1];
};

/* ---- thread tag -------------------------------------------------------- */

static __thread uint32_t rwsem_tag_var
	__attribute__((tls_model("initial-exec"), aligned(4)));

static inline uintptr_t self_tag(void)
{
	return (uintptr_t)&rwsem_tag_var;
}

/* ---- owner word (hints, relaxed) ---------------------------------------- */

static inline void set_owner(qlock_rwsem_t *sem)
{
	qa_write(&sem->owner, self_tag());
}

static inline void clear_owner(qlock_rwsem_t *sem)
{
	qa_write(&sem->owner, 0);
}

/* Keeps NONSPINNABLE; skips the store (a shared line) when unchanged. */
static inline void set_reader_owned_tag(qlock_rwsem_t *sem, uintptr_t tag)
{
	uintptr_t o = qa_read(&sem->owner);
	uintptr_t n = tag | READER_OWNED | (o & NONSPINNABLE);

	if (o != n)
		qa_write(&sem->owner, n);
}

static inline void set_reader_owned(qlock_rwsem_t *sem)
{
	set_reader_owned_tag(sem, self_tag());
}

static inline void clear_nonspinnable(qlock_rwsem_t *sem)
{
	if (qa_unlikely(qa_read(&sem->owner) & NONSPINNABLE))
		qa_fetch_andnot_relaxed(&sem->owner, NONSPINNABLE);
}

static inline void set_nonspinnable(qlock_rwsem_t *sem)
{
	uintptr_t o = qa_read(&sem->owner);

	/* Only while readers still own it: a writer's tag clears the flag. */
	while ((o & (READER_OWNED | NONSPINNABLE)) == READER_OWNED)
		if (qa_try_cmpxchg_relaxed(&sem->owner, &o, o | NONSPINNABLE))
			break;
}

static inline enum owner_state owner_state_of(uintptr_t o)
{
	if (o & NONSPINNABLE)
		return OWNER_NONSPINNABLE;
	if (o & READER_OWNED)
		return OWNER_READER;
	return o ? OWNER_WRITER : OWNER_NULL;
}

/* ---- wait_lock: spin a little, then park ------------------------------- */

static void wl_lock_slow(uint32_t *w)
{
	struct qc_spinner s;

	qc_spinner_init(&s);
	for (;;) {
		uint32_t v = qa_read(w);

		/* Acquire pairs with wl_unlock()'s release. */
		if (v == 0 && qa_try_cmpxchg_acquire(w, &v, 1))
			goto out;
		if (!qc_spin_continue(&s))
			break;
	}
	/* 2 = locked, maybe sleepers: the unlock must wake one. */
	while (qa_xchg_acquire(w, 2) != 0)
		(void)qc_futex_wait(w, 2, NULL, CLOCK_MONOTONIC, CLS, QC_OP_OTHER);
out:
	qc_spin_account(&s, CLS);
}

static inline void wl_lock(qlock_rwsem_t *sem)
{
	uint32_t z = 0;

	if (qa_unlikely(!qa_try_cmpxchg_acquire(&sem->wait_lock, &z, 1)))
		wl_lock_slow(&sem->wait_lock);
}

static inline void wl_unlock(qlock_rwsem_t *sem)
{
	/* Release pairs with the acquire in wl_lock(). */
	if (qa_unlikely(qa_xchg_release(&sem->wait_lock, 0) == 2))
		(void)qc_futex_wake(&sem->wait_lock, 1, CLS, QC_OP_OTHER);
}

/* ---- the wait list (under wait_lock) ------------------------------------ */

static inline struct rwsem_waiter *first_waiter(qlock_rwsem_t *sem)
{
	return sem->wait_list;
}

static inline void add_waiter(qlock_rwsem_t *sem, struct rwsem_waiter *w)
{
	struct rwsem_waiter *first = sem->wait_list;

	if (!first) {
		w->next = w->prev = w;
		sem->wait_list = w;
		return;
	}
	w->next = first;
	w->prev = first->prev;
	first->prev->next = w;
	first->prev = w;
}

/* Unlink; true when others remain. */
static inline bool list_remove(qlock_rwsem_t *sem, struct rwsem_waiter *w)
{
	if (w->next == w) {
		sem->wait_list = NULL;
		return false;
	}
	w->prev->next = w->next;
	w->next->prev = w->prev;
	if (sem->wait_list == w)
		sem->wait_list = w->next;
	return true;
}

/*
 * Remove a waiter that gives up; with the queue empty, clear WAITERS and
 * HANDOFF (the kernel's rwsem_del_waiter).  True when others remain.
 */
static bool del_waiter(qlock_rwsem_t *sem, struct rwsem_waiter *w)
{
	if (list_remove(sem, w))
		return true;
	qa_fetch_andnot(&sem->count, FLAG_HANDOFF | FLAG_WAITERS);
	return false;
}

/* ---- wake-ups ----------------------------------------------------------- */

static inline void wake_q_add(struct wake_q *wq, uint32_t *addr)
{
	wq->addr[wq->n++] = addr;
}

static void wake_up_q(struct wake_q *wq, enum qc_op op)
{
	if (wq->n)
		qc_event_add(CLS, QC_EV_wake, wq->n);
#ifndef QLOCK_MUTATE_WAKE_RWSEM /* the wake of a granted waiter */
	for (unsigned i = 0; i < wq->n; i++)
		(void)qc_futex_wake(wq->addr[i], 1, CLS, op);
#else /* model-check mutation (tests/model): must be caught */
	(void)op;
#endif
	wq->n = 0;
}

/*
 * Decide who runs next, under wait_lock with the queue not empty (the
 * kernel's rwsem_mark_wake).  `front`: stop granting at the first writer
 * (rwsem-wake-front, seed 002's "before").
 */
static void mark_wake(qlock_rwsem_t *sem, enum wake_type wt,
		      struct wake_q *wq, bool front)
{
	struct rwsem_waiter *first = first_waiter(sem), *w, *last;
	uint32_t adjustment = 0, oldcount;
	unsigned woken = 0, start = wq->n, n;

	if (first->type == WAIT_WRITE) {
		/*
		 * The writer takes the lock itself; others may steal it
		 * meanwhile.  Release: pairs with the acquire read of the
		 * sequence in the writer's futex wait loop (it re-reads
		 * everything under wait_lock anyway).
		 */
		if (wt == WAKE_ANY) {
			uint32_t o = qa_read(&first->futex);

			/*
			 * Bump the sequence and take the asleep bit: one
			 * futex_wake per sleep, however many unlocks pass
			 * before the woken writer gets a CPU.
			 */
			while (!qa_try_cmpxchg_release(&first->futex, &o,
					(o + WSEQ_ONE) & ~W_ASLEEP))
				;
			if (o & W_ASLEEP)
				wake_q_add(wq, &first->futex);
		}
		return;
	}

	/* Too many readers: wait for some to leave. */
	if (qa_unlikely(qa_read(&sem->count) & READ_FULL))
		return;

	if (wt != WAKE_READ_OWNED) {
		/*
		 * Take a read lock for the first reader now, so a writer
		 * cannot get in while we walk the queue.  Fully ordered: it
		 * reads from the releasing unlock (acquire for the readers
		 * we grant) and orders before the grants below.
		 */
		adjustment = READER_BIAS;
		oldcount = qa_fetch_add(&sem->count, READER_BIAS);
		if (qa_unlikely(oldcount & WRITER_LOCKED)) {
			/* A writer stole the lock: hand-off time? */
			if (qc_now_ns() >= first->timeout_ns) {
				if (!(oldcount & FLAG_HANDOFF)) {
					adjustment -= FLAG_HANDOFF;
					qc_event_inc(CLS, QC_EV_handoff);
				}
				first->handoff_set = true;
			}
			qa_fetch_add(&sem->count, (uint32_t)0 - adjustment);
			return;
		}
		/* Let spinning writers see read ownership early. */
		set_reader_owned_tag(sem, first->tag);
	}

	/*
	 * First pass: take the readers off the queue (all of them, skipping
	 * writers, up to 256; or only those in front of the first writer).
	 */
	last = first->prev;
	w = first;
	for (;;) {
		struct rwsem_waiter *next = w->next;
		bool at_end = w == last;

		if (w->type == WAIT_WRITE) {
			if (front)
				break;
		} else {
			(void)list_remove(sem, w);
			wake_q_add(wq, &w->futex);
			if (++woken >= MAX_READERS_WAKEUP)
				break;
		}
		if (at_end)
			break;
		w = next;
	}

	adjustment = woken * READER_BIAS - adjustment;
	qc_event_add(CLS, QC_EV_read_wake, woken);
	oldcount = qa_read(&sem->count);
	if (!sem->wait_list) {
		/* The queue is empty: no waiters, no hand-off to honour. */
		adjustment -= FLAG_WAITERS;
		if (oldcount & FLAG_HANDOFF)
			adjustment -= FLAG_HANDOFF;
	} else if (woken && (oldcount & FLAG_HANDOFF)) {
		/* Readers got the lock: writers need not yield any more. */
		adjustment -= FLAG_HANDOFF;
	}
	if (adjustment)
		qa_fetch_add(&sem->count, adjustment);

	/*
	 * Second pass: grant.  Release pairs with the reader's acquire load
	 * of its futex word; after the exchange the reader may return, so
	 * the node is not touched again (only its address, for the wake-up,
	 * and only when the reader announced that it sleeps).
	 */
	n = wq->n;
	wq->n = start;
	for (unsigned i = start; i < n; i++) {
		uint32_t *addr = wq->addr[i];

		if (qa_xchg_release(addr, R_GRANTED) == R_ASLEEP)
			wq->addr[wq->n++] = addr;
	}
}

/*
 * A new waiter found the lock not writer-owned: wake the front of the queue
 * (the kernel's rwsem_cond_wake_waiter).
 */
static void cond_wake_waiter(qlock_rwsem_t *sem, uint32_t count,
			     struct wake_q *wq, bool front)
{
	enum wake_type wt;

	if (count & WRITER_LOCKED)
		return;
	if (count & READER_MASK) {
		wt = WAKE_READERS;
	} else {
		wt = WAKE_ANY;
		clear_nonspinnable(sem);
	}
	mark_wake(sem, wt, wq, front);
}

/* A waiter gives up (timeout): dequeue, and if it was first wake the rest. */
static void del_wake_waiter(qlock_rwsem_t *sem, struct rwsem_waiter *w,
			    struct wake_q *wq, bool front)
{
	bool first = first_waiter(sem) == w;

	if (del_waiter(sem, w) && first)
		mark_wake(sem, WAKE_ANY, wq, front);
}

/*
 * Unlock (subtract `bias`) with waiters queued.  wait_lock is taken
 * *before* the release: while we hold it, no queued waiter can take the
 * lock or leave the queue, and a thread that steals the lock cannot finish
 * its own unlock (it finds WAITERS and needs wait_lock too), so nobody can
 * free the rwsem before our wl_unlock(), the last access.  The kernel
 * takes wait_lock after the release; a user-space lock may be freed by
 * its next owner at once.  Returns false (nothing changed) when the count
 * shows the lock was not held that way.
 */
static bool unlock_with_waiters(qlock_rwsem_t *sem, uint32_t bias,
				bool front, enum qc_op op)
{
	struct wake_q wq;
	uint32_t c;

	wq.n = 0;
	wl_lock(sem);
	/* Release: our section happens-before the next owner's. */
	c = qa_sub_return_release(&sem->count, bias);
	if (qa_unlikely(c & FLAG_READFAIL)) {
		/* A read unlock of a lock no reader holds: take it back. */
		qa_fetch_add_relaxed(&sem->count, bias);
		wl_unlock(sem);
		return false;
	}
	/* A writer always wakes; a reader only as the last one out. */
	if ((c & FLAG_WAITERS) &&
	    (bias == WRITER_LOCKED || !(c & LOCK_MASK))) {
		if (bias != WRITER_LOCKED)
			clear_nonspinnable(sem);
		if (first_waiter(sem))
			mark_wake(sem, WAKE_ANY, &wq, front);
	}
	wl_unlock(sem);
	qc_test_released(sem);
	wake_up_q(&wq, op);
	return true;
}

/* ---- optimistic spinning ------------------------------------------------ */

/* Spin on a writer owner until it changes or holds too long. */
static enum owner_state spin_on_owner(qlock_rwsem_t *sem, uint64_t budget_ns)
{
	uintptr_t owner = qa_read(&sem->owner);
	enum owner_state st = owner_state_of(owner);
	uint64_t until = 0;

	if (st != OWNER_WRITER)
		return st;
	for (unsigned n = 1;; n++) {
		uintptr_t cur = qa_read(&sem->owner);

		if (cur != owner)
			return owner_state_of(cur);
		if (n % CLOCK_EVERY == 0) {
			uint64_t now = qc_now_ns();

			if (!until)
				until = now + budget_ns;
			else if (now >= until)
				return OWNER_NONSPINNABLE;
		}
		qa_cpu_relax();
	}
}

static bool try_write_lock_unqueued(qlock_rwsem_t *sem)
{
	uint32_t c = qa_read(&sem->count);

	while (!(c & (LOCK_MASK | FLAG_HANDOFF))) {
		/* Acquire pairs with the release of the last unlock. */
		if (qa_try_cmpxchg_acquire(&sem->count, &c, c | WRITER_LOCKED)) {
			set_owner(sem);
			return true;
		}
	}
	return false;
}

static uint64_t rspin_budget(qlock_rwsem_t *sem, uint64_t spin_ns)
{
	uint32_t readers = (qa_read(&sem->count) & READER_MASK) >> READER_SHIFT;

	if (readers > 30)
		readers = 30;
	return spin_ns / 2 + readers * (spin_ns / 40);
}

static bool optimistic_spin(qlock_rwsem_t *sem, uint64_t spin_ns)
{
	enum owner_state st, prev_st = OWNER_WRITER;
	uint64_t rspin_until = 0, null_until = 0;
	uintptr_t last_writer = 0;
	unsigned loop = 0, changes = 0;
	bool taken = false;

	if (!qc_osq_lock((struct qc_osq *)&sem->osq, qc_now_ns() + spin_ns))
		goto done;
	for (;;) {
		st = spin_on_owner(sem, spin_ns);
		if (st == OWNER_NONSPINNABLE)
			break;
		if (try_write_lock_unqueued(sem)) {
			taken = true;
			break;
		}
		/*
		 * A hand-off reserves the lock for the first waiter, which
		 * may be asleep: spinning cannot win until it has run, and
		 * on a small machine it would keep that waiter (and a
		 * sleeping owner's wake-up) off the CPU.  The kernel goes on
		 * until need_resched(); user space cannot see that.
		 */
		if (qa_read(&sem->count) & FLAG_HANDOFF)
			break;
		if (st == OWNER_NULL) {
			/* No owner named, lock not free (a writer between
			 * its cmpxchg and set_owner, or readers that left no
			 * tag yet): bounded by the same budget. */
			if (prev_st != OWNER_NULL) {
				null_until = qc_now_ns() + spin_ns;
				loop = 0;
			} else if (++loop % CLOCK_EVERY == 0 &&
				   qc_now_ns() > null_until) {
				break;
			}
		}
		if (st == OWNER_WRITER) {
			uintptr_t o = qa_read(&sem->owner) & ~OWNER_FLAGS;

			if (o != last_writer) {
				last_writer = o;
				if (++changes > OPT_MAX_OWNER_CHANGES)
					break;
			}
		}
		if (st == OWNER_READER) {
			if (prev_st != OWNER_READER) {
				if (qa_read(&sem->owner) & NONSPINNABLE)
					break;
				rspin_until = qc_now_ns() + rspin_budget(sem, spin_ns);
				loop = 0;
			} else if (++loop % CLOCK_EVERY == 0 &&
				   qc_now_ns() > rspin_until) {
				set_nonspinnable(sem);
				qc_event_inc(CLS, QC_EV_rwsem_opt_nospin);
				break;
			}
		}
		prev_st = st;
		qa_cpu_relax();
	}
	qc_osq_unlock((struct qc_osq *)&sem->osq);
done:
	qc_event_inc(CLS, taken ? QC_EV_rwsem_opt_lock : QC_EV_rwsem_opt_fail);
	return taken;
}

/* ---- write slow path ----------------------------------------------------- */

/*
 * Under wait_lock: take the lock for waiter w, or set HANDOFF for the first
 * waiter once w has waited long enough (the kernel's rwsem_try_write_lock).
 */
static bool try_write_lock(qlock_rwsem_t *sem, struct rwsem_waiter *w)
{
	struct rwsem_waiter *first = first_waiter(sem);
	uint32_t c = qa_read(&sem->count), n;
	uint64_t now = 0;

	do {
		bool has_handoff = c & FLAG_HANDOFF;

		/* The hand-off belongs to the first waiter. */
		if (has_handoff && first->handoff_set && w != first)
			return false;
		n = c;
		if (c & LOCK_MASK) {
			if (has_handoff)
				return false;
			if (!now)
				now = qc_now_ns();
			if (now < w->timeout_ns)
				return false;
			n |= FLAG_HANDOFF;
		} else {
			n |= WRITER_LOCKED;
			n &= ~FLAG_HANDOFF;
			if (w->next == w)
				n &= ~FLAG_WAITERS;
		}
		/* Acquire (on taking it) pairs with the last unlock's release. */
	} while (!qa_try_cmpxchg_acquire(&sem->count, &c, n));

	if (n & FLAG_HANDOFF) {
		first->handoff_set = true;
		qc_event_inc(CLS, QC_EV_handoff);
		return false;
	}
	(void)list_remove(sem, w);
	set_owner(sem);
	return true;
}

/*
 * A queued writer waits for a wake-up after the sequence `seq` (read under
 * wait_lock): spin a little, then announce the sleep (bit 0) and sleep
 * unless the sequence moved.  Returns ETIMEDOUT once the deadline passed.
 */
static int writer_wait(struct rwsem_waiter *w, uint32_t seq,
		       const struct timespec *abs, clockid_t clk)
{
	struct qc_spinner spin;
	uint32_t v;
	int r;

	qc_spinner_init(&spin);
	while (qa_read(&w->futex) == seq) {
		if (qc_spin_continue(&spin))
			continue;
		v = qa_fetch_or_relaxed(&w->futex, W_ASLEEP);
		r = 0;
		if (v == seq) {
			r = qc_futex_wait(&w->futex, seq | W_ASLEEP, abs, clk,
					  CLS, QC_OP_LOCK);
			qc_event_inc(CLS, QC_EV_sleep);
		}
		qa_fetch_andnot_relaxed(&w->futex, W_ASLEEP);
		if (r == ETIMEDOUT) {
			qc_spin_account(&spin, CLS);
			return ETIMEDOUT;
		}
		break;
	}
	qc_spin_account(&spin, CLS);
	return 0;
}

static int down_write_slow(qlock_rwsem_t *sem, const struct timespec *abs,
			   clockid_t clk, bool front)
{
	struct rwsem_waiter w;
	struct wake_q wq;
	uint64_t spin_ns = qc_owner_spin_ns();

	qc_event_inc(CLS, QC_EV_slowpath);
	if (spin_ns && !(qa_read(&sem->owner) & NONSPINNABLE) &&
	    !(abs && qc_deadline_passed(abs, clk)) &&
	    optimistic_spin(sem, spin_ns))
		return 0;

	wq.n = 0;
	w.type = WAIT_WRITE;
	w.futex = 0;
	w.handoff_set = false;
	w.tag = self_tag();
	w.timeout_ns = qc_now_ns() + qc_handoff_ns();

	wl_lock(sem);
	add_waiter(sem, &w);
	if (first_waiter(sem) != &w) {
		cond_wake_waiter(sem, qa_read(&sem->count), &wq, front);
		if (wq.n) {
			/* Keep wait_lock short when waking many readers. */
			wl_unlock(sem);
			wake_up_q(&wq, QC_OP_LOCK);
			wl_lock(sem);
		}
	} else {
		qa_fetch_or(&sem->count, FLAG_WAITERS);
	}

	for (;;) {
		bool handoff;
		uint32_t seq;
		int r;

		if (try_write_lock(sem, &w))
			break;
		handoff = w.handoff_set;
		/* A wake-up after this (under wait_lock) changes the word. */
		seq = qa_read(&w.futex);
		wl_unlock(sem);

		/*
		 * With the hand-off ours, spin on a writer owner: when it
		 * leaves, retry at once instead of sleeping.
		 */
		if (handoff && spin_ns &&
		    spin_on_owner(sem, spin_ns) == OWNER_NULL) {
			wl_lock(sem);
			continue;
		}
		r = writer_wait(&w, seq, abs, clk);
		wl_lock(sem);
		if (qa_unlikely(r == ETIMEDOUT)) {
			del_wake_waiter(sem, &w, &wq, front);
			wl_unlock(sem);
			wake_up_q(&wq, QC_OP_LOCK);
			qc_event_inc(CLS, QC_EV_timeout);
			return ETIMEDOUT;
		}
	}
	wl_unlock(sem);
	return 0;
}

/* ---- read slow path ------------------------------------------------------ */

/* count: the value after this reader's fast-path bias. */
static int down_read_slow(qlock_rwsem_t *sem, uint32_t count,
			  const struct timespec *abs, clockid_t clk, bool front)
{
	uint32_t adjustment = (uint32_t)0 - READER_BIAS;
	uint32_t rcnt = (count & READER_MASK) >> READER_SHIFT;
	struct rwsem_waiter w;
	struct qc_spinner spin;
	struct wake_q wq;

	qc_event_inc(CLS, QC_EV_slowpath);
	wq.n = 0;

	/*
	 * No stealing while other readers very likely hold it: a constant
	 * stream of readers would starve the queued writer.
	 */
	if ((qa_read(&sem->owner) & READER_OWNED) && rcnt > 1 &&
	    !(count & WRITER_LOCKED))
		goto queue;

	if (!(count & (WRITER_LOCKED | FLAG_HANDOFF))) {
		/* Steal: our bias is in and no writer or hand-off is. */
		set_reader_owned(sem);
		qc_event_inc(CLS, QC_EV_steal);
		qc_event_inc(CLS, QC_EV_rwsem_rlock_steal);
		/* The first reader in wakes the queued readers to share. */
		if (rcnt == 1 && (count & FLAG_WAITERS)) {
			wl_lock(sem);
			if (first_waiter(sem))
				mark_wake(sem, WAKE_READ_OWNED, &wq, front);
			wl_unlock(sem);
			wake_up_q(&wq, QC_OP_RLOCK);
		}
		return 0;
	}

queue:
	w.type = WAIT_READ;
	w.futex = R_WAITING;
	w.handoff_set = false;
	w.tag = self_tag();
	w.timeout_ns = qc_now_ns() + qc_handoff_ns();

	wl_lock(sem);
	if (!first_waiter(sem)) {
		/*
		 * Nobody queued and no writer: our bias already holds the
		 * lock.  Acquire pairs with the release of the writer's
		 * unlock we see cleared.
		 */
		if (!(qa_read_acquire(&sem->count) & WRITER_LOCKED)) {
			wl_unlock(sem);
			set_reader_owned(sem);
			qc_event_inc(CLS, QC_EV_rwsem_rlock_fast);
			return 0;
		}
		adjustment += FLAG_WAITERS;
	}
	add_waiter(sem, &w);
	/* Now waiting, no longer holding a bias (WAITERS set if first). */
	count = qa_add_return(&sem->count, adjustment);
	cond_wake_waiter(sem, count, &wq, front);
	wl_unlock(sem);
	wake_up_q(&wq, QC_OP_RLOCK);

	/* Acquire pairs with the grant's release in mark_wake(). */
	qc_spinner_init(&spin);
	while (qa_read_acquire(&w.futex) != R_GRANTED) {
		uint32_t v = R_WAITING;
		int r;

		if (qc_spin_continue(&spin))
			continue;
		/* Announce the sleep; fails only when granted meanwhile. */
		if (!qa_try_cmpxchg_relaxed(&w.futex, &v, R_ASLEEP) &&
		    v != R_ASLEEP)
			continue;
		r = qc_futex_wait(&w.futex, R_ASLEEP, abs, clk, CLS, QC_OP_RLOCK);
		qc_event_inc(CLS, QC_EV_sleep);
		qc_spin_begin(&spin);
		if (qa_unlikely(r == ETIMEDOUT)) {
			wl_lock(sem);
			if (qa_read(&w.futex)) {
				del_wake_waiter(sem, &w, &wq, front);
				wl_unlock(sem);
				wake_up_q(&wq, QC_OP_RLOCK);
				qc_event_inc(CLS, QC_EV_timeout);
				return ETIMEDOUT;
			}
			/* Granted meanwhile (ordered by wait_lock): ours. */
			wl_unlock(sem);
			break;
		}
	}
	qc_spin_account(&spin, CLS);
	return 0;
}

/* ---- the operations, for both variants ---------------------------------- */

static inline bool timed_args_ok(const struct timespec *abs, clockid_t clk)
{
	return !abs || ((clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME) &&
			qc_timespec_valid(abs));
}

/*
 * Our bias made the count full: take it back out under wait_lock (an
 * unlock may have emptied the lock meanwhile and found nobody to wake the
 * queue for), then wait for room.  0, or ETIMEDOUT.
 */
static __attribute__((noinline, cold)) int
down_read_wait_room(qlock_rwsem_t *sem, const struct timespec *abs,
		    clockid_t clk, bool front)
{
	struct wake_q wq;
	uint32_t count;

	wq.n = 0;
	wl_lock(sem);
	count = qa_add_return(&sem->count, (uint32_t)0 - READER_BIAS);
	if (first_waiter(sem))
		cond_wake_waiter(sem, count, &wq, front);
	wl_unlock(sem);
	wake_up_q(&wq, QC_OP_RLOCK);
	return qc_wait_room(&sem->count, READER_BIAS, READ_FULL, abs, clk);
}

static inline int do_down_read(qlock_rwsem_t *sem, const struct timespec *abs,
			       clockid_t clk, bool front)
{
	for (;;) {
		/* Acquire pairs with the release of the last writer's
		 * unlock. */
#ifndef QLOCK_MUTATE_RWSEM
		uint32_t c = qa_add_return_acquire(&sem->count, READER_BIAS);
#else /* model-check mutation (tests/model): must be caught */
		uint32_t c = qa_add_return_relaxed(&sem->count, READER_BIAS);
#endif
		int err;

		if (qa_likely(!(c & READ_FAILED_MASK))) {
			set_reader_owned(sem);
			return 0;
		}
		if (qa_likely(!(c & READ_FULL)))
			return down_read_slow(sem, c, abs, clk, front);
		err = down_read_wait_room(sem, abs, clk, front);
		if (err)
			return err;
	}
}

/*
 * Both unlocks release with a cmpxchg that fails if WAITERS appears, and
 * with WAITERS set go through unlock_with_waiters(): an unlock that would
 * find WAITERS in what its release returned would have to take wait_lock
 * after the release, when the lock may be gone.
 */
static inline void do_up_read(qlock_rwsem_t *sem, bool front)
{
	uint32_t c = qa_read(&sem->count);

	do {
		if (qa_unlikely((c - READER_BIAS) & FLAG_READFAIL))
			goto misuse; /* no reader counted */
		if (qa_unlikely(c & FLAG_WAITERS)) {
			if (!unlock_with_waiters(sem, READER_BIAS, front,
						 QC_OP_RUNLOCK))
				goto misuse;
			return;
		}
		/* Release: our read section happens-before the next
		 * writer's. */
	} while (!qa_try_cmpxchg_release(&sem->count, &c, c - READER_BIAS));
	qc_test_released(sem);
	return;
misuse:
	qc_misuse("qlock_up_read", "rwsem not read-locked", sem);
}

static inline int do_down_write(qlock_rwsem_t *sem, const struct timespec *abs,
				clockid_t clk, bool front)
{
	uint32_t z = 0;

	/* Acquire pairs with the release of the last unlock. */
	if (qa_likely(qa_try_cmpxchg_acquire(&sem->count, &z, WRITER_LOCKED))) {
		set_owner(sem);
		return 0;
	}
	return down_write_slow(sem, abs, clk, front);
}

static inline void do_up_write(qlock_rwsem_t *sem, bool front)
{
	uint32_t c;

	if (qa_unlikely(!(qa_read(&sem->count) & WRITER_LOCKED))) {
		qc_misuse("qlock_up_write", "rwsem not write-locked", sem);
		return;
	}
	clear_owner(sem);
	c = qa_read(&sem->count);
	do {
		if (qa_unlikely(c & FLAG_WAITERS)) {
			unlock_with_waiters(sem, WRITER_LOCKED, front,
					    QC_OP_UNLOCK);
			return;
		}
		/* Release: our write section happens-before the next
		 * owner's. */
	} while (!qa_try_cmpxchg_release(&sem->count, &c, c - WRITER_LOCKED));
	qc_test_released(sem);
}

static inline void do_downgrade_write(qlock_rwsem_t *sem, bool front)
{
	uint32_t c;

	if (qa_unlikely(!(qa_read(&sem->count) & WRITER_LOCKED))) {
		qc_misuse("qlock_downgrade_write", "rwsem not write-locked",
			  sem);
		return;
	}
	set_reader_owned(sem);
	/* Release: the write section happens-before the readers we admit. */
	c = qa_fetch_add_release(&sem->count, READER_BIAS - WRITER_LOCKED);
	if (c & FLAG_WAITERS) {
		struct wake_q wq;

		wq.n = 0;
		wl_lock(sem);
		if (first_waiter(sem))
			mark_wake(sem, WAKE_READ_OWNED, &wq, front);
		wl_unlock(sem);
		wake_up_q(&wq, QC_OP_OTHER);
	}
}

/* ---- public API ("rwsem": wake readers from the whole queue) -------------- */

QLOCK_API void qlock_rwsem_init(qlock_rwsem_t *sem)
{
	qa_write(&sem->count, 0);
	qa_write(&sem->wait_lock, 0);
	qa_write(&sem->owner, 0);
	sem->wait_list = NULL;
	qa_write(&sem->osq, 0);
	sem->pad = 0;
}

QLOCK_API void qlock_down_read(qlock_rwsem_t *sem)
{
	(void)do_down_read(sem, NULL, CLOCK_MONOTONIC, false);
}

QLOCK_API bool qlock_down_read_trylock(qlock_rwsem_t *sem)
{
	uint32_t c = qa_read(&sem->count);

	while (!(c & READ_FAILED_MASK) && !((c + READER_BIAS) & READ_FULL)) {
		/* Acquire pairs with the release of the last writer's unlock. */
		if (qa_try_cmpxchg_acquire(&sem->count, &c, c + READER_BIAS)) {
			set_reader_owned(sem);
			return true;
		}
	}
	return false;
}

QLOCK_API bool qlock_down_read_trylock_unfair(qlock_rwsem_t *sem)
{
	uint32_t c = qa_read(&sem->count);

	while (!(c & WRITER_LOCKED) && !((c + READER_BIAS) & READ_FULL)) {
		/* Acquire pairs with the release of the last writer's unlock.
		 * A queued writer (hand-off or not) takes the lock only with
		 * no reader counted, under wait_lock: it waits for us, and
		 * our up_read() with WAITERS set wakes it as the last reader
		 * out. */
		if (qa_try_cmpxchg_acquire(&sem->count, &c, c + READER_BIAS)) {
			set_reader_owned(sem);
			return true;
		}
	}
	return false;
}

QLOCK_API uint32_t qlock_rwsem_readers(const qlock_rwsem_t *sem)
{
	return (qa_read(&sem->count) & READER_MASK) >> READER_SHIFT;
}

QLOCK_API int qlock_down_read_timed(qlock_rwsem_t *sem,
				    const struct timespec *abs, clockid_t clk)
{
	if (!timed_args_ok(abs, clk))
		return EINVAL;
	return do_down_read(sem, abs, clk, false);
}

QLOCK_API void qlock_up_read(qlock_rwsem_t *sem)
{
	do_up_read(sem, false);
}

QLOCK_API void qlock_down_write(qlock_rwsem_t *sem)
{
	(void)do_down_write(sem, NULL, CLOCK_MONOTONIC, false);
}

QLOCK_API bool qlock_down_write_trylock(qlock_rwsem_t *sem)
{
	uint32_t z = 0;

	/* Acquire pairs with the release of the last unlock. */
	if (qa_try_cmpxchg_acquire(&sem->count, &z, WRITER_LOCKED)) {
		set_owner(sem);
		return true;
	}
	return false;
}

QLOCK_API int qlock_down_write_timed(qlock_rwsem_t *sem,
				     const struct timespec *abs, clockid_t clk)
{
	if (!timed_args_ok(abs, clk))
		return EINVAL;
	return do_down_write(sem, abs, clk, false);
}

QLOCK_API void qlock_up_write(qlock_rwsem_t *sem)
{
	do_up_write(sem, false);
}

QLOCK_API void qlock_downgrade_write(qlock_rwsem_t *sem)
{
	do_downgrade_write(sem, false);
}

QLOCK_API bool qlock_rwsem_is_locked(qlock_rwsem_t *sem)
{
	return (qa_read(&sem->count) & LOCK_MASK) != 0;
}

QLOCK_API bool qlock_rwsem_is_contended(qlock_rwsem_t *sem)
{
	return (qa_read(&sem->count) & FLAG_WAITERS) ||
	       qa_read(&sem->osq) != 0;
}

/* ---- rwsem-wake-front: seed 002's "before" (internal) --------------------- */

void qrwsem_front_down_read(qlock_rwsem_t *sem)
{
	(void)do_down_read(sem, NULL, CLOCK_MONOTONIC, true);
}

int qrwsem_front_down_read_timed(qlock_rwsem_t *sem, const struct timespec *abs,
				 clockid_t clk)
{
	if (!timed_args_ok(abs, clk))
		return EINVAL;
	return do_down_read(sem, abs, clk, true);
}

void qrwsem_front_up_read(qlock_rwsem_t *sem)
{
	do_up_read(sem, true);
}

void qrwsem_front_down_write(qlock_rwsem_t *sem)
{
	(void)do_down_write(sem, NULL, CLOCK_MONOTONIC, true);
}

int qrwsem_front_down_write_timed(qlock_rwsem_t *sem, const struct timespec *abs,
				  clockid_t clk)
{
	if (!timed_args_ok(abs, clk))
		return EINVAL;
	return do_down_write(sem, abs, clk, true);
}

void qrwsem_front_up_write(qlock_rwsem_t *sem)
{
	do_up_write(sem, true);
}

void qrwsem_front_downgrade_write(qlock_rwsem_t *sem)
{
	do_downgrade_write(sem, true);
}

/* ---- tests ---------------------------------------------------------------- */

unsigned qrwsem_queue_snapshot(qlock_rwsem_t *sem, char *buf, unsigned n)
{
	struct rwsem_waiter *first, *w;
	unsigned len = 0;

	wl_lock(sem);
	first = first_waiter(sem);
	for (w = first; w; w = w->next == first ? NULL : w->next) {
		if (buf && len + 1 < n)
			buf[len] = w->type == WAIT_WRITE ? 'W' : 'R';
		len++;
	}
	wl_unlock(sem);
	if (buf && n)
		buf[len < n ? len : n - 1] = 0;
	return len;
}
