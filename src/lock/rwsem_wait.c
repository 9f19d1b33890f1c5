/* SPDX-License-Identifier: MIT */
/*
 * rwsem: the wait queue.  rwsem.c is the word protocol (the count and
 * owner words, the fast paths, stealing, optimistic spinning) and calls
 * in here for everything that queues: the queued halves of the slow
 * paths, the unlocks that find WAITERS, the wake-ups and the hand-off.
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
 * ---- Wake-up -----------------------------------------------------------------
 *
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
 * A reader granted by a waker: the waker's fully ordered count update
 * (pre-added bias, or the final adjustment) reads from the releasing
 * unlock, and its release store of waiter->futex pairs with the reader's
 * acquire load, so the last writer's section happens-before the reader's.
 * Everything on the queue and the waiter nodes is under wait_lock
 * (acquire/release).
 *
 * A waker calls futex_wake on a waiter's word after dropping wait_lock; by
 * then the waiter may have returned and its stack been reused, so the wake
 * can be spurious for whatever waits at that address: every futex wait
 * tolerates spurious wake-ups (a private futex wake never touches memory).
 */
#include <errno.h>
#include <stddef.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/spin.h"
#include "core/lockevent.h"
#include "core/testhook.h"
#include "lock/rwsem_internal.h"
#include "lock/rwsem_variants.h"

/* The thread tag (rwsem_internal.h), here so that rwsem.c depends on this
 * file and not the reverse. */
__thread uint32_t qrwsem_tag_var
	__attribute__((tls_model("initial-exec"), aligned(4)));

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

/* Futex words to wake once wait_lock is dropped (the kernel's wake_q). */
struct wake_q {
	unsigned n;
	uint32_t *addr[MAX_READERS_WAKEUP + 1];
};

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
bool qrwsem_unlock_with_waiters(qlock_rwsem_t *sem, uint32_t bias,
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

void qrwsem_wake_read_owned(qlock_rwsem_t *sem, bool front, enum qc_op op)
{
	struct wake_q wq;

	wq.n = 0;
	wl_lock(sem);
	if (first_waiter(sem))
		mark_wake(sem, WAKE_READ_OWNED, &wq, front);
	wl_unlock(sem);
	wake_up_q(&wq, op);
}

/* ---- write slow path, queued ---------------------------------------------- */

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

int qrwsem_down_write_queued(qlock_rwsem_t *sem, const struct timespec *abs,
			     clockid_t clk, bool front, uint64_t spin_ns)
{
	struct rwsem_waiter w;
	struct wake_q wq;

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

/* ---- read slow path, queued ----------------------------------------------- */

int qrwsem_down_read_queued(qlock_rwsem_t *sem, const struct timespec *abs,
			    clockid_t clk, bool front)
{
	uint32_t adjustment = (uint32_t)0 - READER_BIAS, count;
	struct rwsem_waiter w;
	struct qc_spinner spin;
	struct wake_q wq;

	wq.n = 0;
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

/*
 * Our bias made the count full: take it back out under wait_lock (an
 * unlock may have emptied the lock meanwhile and found nobody to wake the
 * queue for), then wait for room.  0, or ETIMEDOUT.
 */
__attribute__((noinline, cold)) int
qrwsem_down_read_wait_room(qlock_rwsem_t *sem, const struct timespec *abs,
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
