/* SPDX-License-Identifier: MIT */
/*
 * rwsem: the Linux kernel's reader-writer semaphore (kernel/locking/rwsem.c,
 * v6.x design) for user space, written from the algorithm's description.
 *
 * This file is the word protocol: the count and owner words, the fast
 * paths, reader stealing, writers' optimistic spinning and the API.  The
 * wait queue (the waiter list, wake-up batches, the hand-off) is
 * rwsem_wait.c; rwsem_internal.h holds what both use.
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
 *  read_trylock_join: count += READER_BIAS (acquire cmpxchg) while readers
 *                     are counted and neither WRITER_LOCKED nor READ_FULL:
 *                     joins the holders past waiters and a hand-off
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
 *  wake-up (under wait_lock): rwsem_wait.c
 *
 * ---- Optimistic spinning (writers only, as in the kernel since 5.11) ---------
 *
 * The kernel spins while the owner is on a CPU; user space cannot see that.
 * Here a writer in the slow path spins when the owner word is not
 * NONSPINNABLE, queued behind sem->osq so that one spinner at a time polls
 * the lock, and stops (then queues and sleeps) at the first of:
 *   - waiting in the OSQ longer than the thread's owner-spin budget (at
 *     most qc_owner_spin_ns(), default 20 us; halved after a spin that
 *     failed, doubled after one that took the lock: core/spin.h);
 *   - one writer owner holding the lock for longer than that budget
 *     since we began watching it: it is probably preempted or blocked;
 *   - the lock changing hands to other writers OPT_MAX_OWNER_CHANGES times
 *     while we spin: we keep losing the race, spinning only burns CPU;
 *   - readers holding it longer than the kernel's reader threshold, scaled
 *     to the tunable: owner_spin/2 + min(readers, 30) * owner_spin/40
 *     (10-25 us by default); then NONSPINNABLE is set for everyone;
 *   - no owner named while the lock is not free, for longer than the
 *     budget;
 *   - a hand-off pending: the lock is reserved for the first waiter, which
 *     may have to be woken first (try_write_lock_unqueued refuses anyway).
 * QLOCK_OWNER_SPIN_NS=0 turns optimistic spinning off.
 *
 * ---- Memory ordering -------------------------------------------------------
 *
 * Lock acquisitions on count are acquire and pair with the release of the
 * unlock that made them possible (read/write unlock, downgrade).  How a
 * reader granted by a waker is ordered, and everything on the queue:
 * rwsem_wait.c.
 */
#include "qlock/rwsem.h"

#include <errno.h>
#include <stddef.h>

#include "core/atomic.h"
#include "core/bravo.h"
#include "core/futex.h"
#include "core/misuse.h"
#include "core/osq.h"
#include "core/spin.h"
#include "core/lockevent.h"
#include "core/testhook.h"
#include "lock/rwsem_internal.h"
#include "lock/rwsem_variants.h"

enum {
	OPT_MAX_OWNER_CHANGES = 8, /* writer owners seen come and go */
};

/* ---- optimistic spinning ------------------------------------------------ */

static inline void set_nonspinnable(qlock_rwsem_t *sem)
{
	uintptr_t o = qa_read(&sem->owner);

	/* Only while readers still own it: a writer's tag clears the flag. */
	while ((o & (READER_OWNED | NONSPINNABLE)) == READER_OWNED)
		if (qa_try_cmpxchg_relaxed(&sem->owner, &o, o | NONSPINNABLE))
			break;
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

/* ---- write slow path: spin, else queue (rwsem_wait.c) --------------------- */

static int down_write_slow(qlock_rwsem_t *sem, const struct timespec *abs,
			   clockid_t clk, bool front)
{
	uint64_t spin_ns = qc_owner_spin_budget();

	qc_event_inc(CLS, QC_EV_slowpath);
	if (spin_ns && !(qa_read(&sem->owner) & NONSPINNABLE) &&
	    !(abs && qc_deadline_passed(abs, clk))) {
		bool taken = optimistic_spin(sem, spin_ns);

		qc_owner_spin_learn(taken);
		if (taken)
			return 0;
	}
	return qrwsem_down_write_queued(sem, abs, clk, front, spin_ns);
}

/* ---- read slow path: steal, else queue (rwsem_wait.c) ---------------------- */

/* count: the value after this reader's fast-path bias. */
static int down_read_slow(qlock_rwsem_t *sem, uint32_t count,
			  const struct timespec *abs, clockid_t clk, bool front)
{
	uint32_t rcnt = (count & READER_MASK) >> READER_SHIFT;

	qc_event_inc(CLS, QC_EV_slowpath);

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
		if (rcnt == 1 && (count & FLAG_WAITERS))
			qrwsem_wake_read_owned(sem, front, QC_OP_RLOCK);
		return 0;
	}

queue:
	return qrwsem_down_read_queued(sem, abs, clk, front);
}

/* ---- the operations, for both variants ---------------------------------- */

static inline bool timed_args_ok(const struct timespec *abs, clockid_t clk)
{
	return !abs || ((clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME) &&
			qc_timespec_valid(abs));
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
		err = qrwsem_down_read_wait_room(sem, abs, clk, front);
		if (err)
			return err;
	}
}

/*
 * Both unlocks release with a cmpxchg that fails if WAITERS appears, and
 * with WAITERS set go through qrwsem_unlock_with_waiters(): an unlock
 * that would find WAITERS in what its release returned would have to take
 * wait_lock after the release, when the lock may be gone.
 */
static inline void do_up_read(qlock_rwsem_t *sem, bool front)
{
	uint32_t c = qa_read(&sem->count);

	do {
		if (qa_unlikely((c - READER_BIAS) & FLAG_READFAIL))
			goto misuse; /* no reader counted */
		if (qa_unlikely(c & FLAG_WAITERS)) {
			if (!qrwsem_unlock_with_waiters(sem, READER_BIAS, front,
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
			qrwsem_unlock_with_waiters(sem, WRITER_LOCKED, front,
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
	if (c & FLAG_WAITERS)
		qrwsem_wake_read_owned(sem, front, QC_OP_OTHER);
}

/* ---- public API ("rwsem": wake readers from the whole queue) -------------- */

QLOCK_API void qlock_rwsem_init(qlock_rwsem_t *sem)
{
	qa_write(&sem->count, 0);
	qa_write(&sem->wait_lock, 0);
	qa_write(&sem->owner, 0);
	sem->wait_list = NULL;
	qa_write(&sem->osq, 0);
	sem->bias = 0;
}

QLOCK_API void qlock_rwsem_init_biased(qlock_rwsem_t *sem)
{
	qlock_rwsem_init(sem);
	qa_write(&sem->bias, QC_BRAVO_CAPABLE | QC_BRAVO_ON);
}

/*
 * ---- Read bias (core/bravo.h) ----------------------------------------------
 * A lock initialised biased has CAPABLE in its bias word (the padding of
 * the struct); on others the word stays 0 and every path below costs one
 * load of it.  Readers try their slot first and, after taking the count
 * word, turn the bias back on when it is due; writers revoke after taking
 * the count word (a trylock that finds biased readers gives the lock
 * back and fails, a timed lock waits for them until its deadline).
 */
_Static_assert(QLOCK_RWSEM_BIAS_CAPABLE == QC_BRAVO_CAPABLE &&
	       QLOCK_RWSEM_BIAS_ON == QC_BRAVO_ON, "bias bits");

static inline bool bias_read_try(qlock_rwsem_t *sem)
{
	return qc_bravo_read_try(sem, &sem->bias, QLOCK_RWSEM_MAX_READERS);
}

static inline void bias_read_locked(qlock_rwsem_t *sem)
{
	qc_bravo_reader_locked(&sem->bias,
			       qa_read(&sem->bias) & QC_BRAVO_CAPABLE);
}

/* Remaining time to an absolute deadline on clk, in ns (0: passed). */
static uint64_t bias_budget(const struct timespec *abs, clockid_t clk)
{
	struct timespec now;
	int64_t left;

	if (!abs)
		return UINT64_MAX;
	clock_gettime(clk, &now);
	left = (int64_t)(abs->tv_sec - now.tv_sec) * 1000000000 +
	       (abs->tv_nsec - now.tv_nsec);
	return left > 0 ? (uint64_t)left : 0;
}

QLOCK_API void qlock_down_read(qlock_rwsem_t *sem)
{
	if (bias_read_try(sem))
		return;
	(void)do_down_read(sem, NULL, CLOCK_MONOTONIC, false);
	bias_read_locked(sem);
}

QLOCK_API bool qlock_down_read_trylock(qlock_rwsem_t *sem)
{
	uint32_t c = qa_read(&sem->count);

	if (bias_read_try(sem))
		return true;
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

	if (bias_read_try(sem))
		return true;
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

QLOCK_API bool qlock_down_read_trylock_join(qlock_rwsem_t *sem)
{
	uint32_t c = qa_read(&sem->count);

	while ((c & READER_MASK) && !(c & WRITER_LOCKED) &&
	       !((c + READER_BIAS) & READ_FULL)) {
		/* Acquire pairs with the release of the last writer's unlock;
		 * the queued writers wait for us as for the unfair reader. */
		if (qa_try_cmpxchg_acquire(&sem->count, &c, c + READER_BIAS)) {
			set_reader_owned(sem);
			return true;
		}
	}
	return false;
}

QLOCK_API uint32_t qlock_rwsem_readers(const qlock_rwsem_t *sem)
{
	uint32_t n = (qa_read(&sem->count) & READER_MASK) >> READER_SHIFT;

	if (qa_read(&sem->bias) & QC_BRAVO_CAPABLE)
		n += qc_bravo_readers(sem);
	return n;
}

QLOCK_API int qlock_down_read_timed(qlock_rwsem_t *sem,
				    const struct timespec *abs, clockid_t clk)
{
	int err;

	if (!timed_args_ok(abs, clk))
		return EINVAL;
	if (bias_read_try(sem))
		return 0;
	err = do_down_read(sem, abs, clk, false);
	if (!err)
		bias_read_locked(sem);
	return err;
}

QLOCK_API void qlock_up_read(qlock_rwsem_t *sem)
{
	if (qc_bravo_read_release(sem))
		return;
	do_up_read(sem, false);
}

QLOCK_API void qlock_down_write(qlock_rwsem_t *sem)
{
	(void)do_down_write(sem, NULL, CLOCK_MONOTONIC, false);
	if (qc_bravo_must_revoke(&sem->bias))
		(void)qc_bravo_revoke(sem, &sem->bias, UINT64_MAX);
}

QLOCK_API bool qlock_down_write_trylock(qlock_rwsem_t *sem)
{
	uint32_t z = 0;

	/* Acquire pairs with the release of the last unlock. */
	if (qa_try_cmpxchg_acquire(&sem->count, &z, WRITER_LOCKED)) {
		set_owner(sem);
		if (qc_bravo_must_revoke(&sem->bias) &&
		    !qc_bravo_revoke(sem, &sem->bias, 0)) {
			do_up_write(sem, false); /* biased readers hold it */
			return false;
		}
		return true;
	}
	return false;
}

QLOCK_API int qlock_down_write_timed(qlock_rwsem_t *sem,
				     const struct timespec *abs, clockid_t clk)
{
	int err;

	if (!timed_args_ok(abs, clk))
		return EINVAL;
	err = do_down_write(sem, abs, clk, false);
	if (!err && qc_bravo_must_revoke(&sem->bias) &&
	    !qc_bravo_revoke(sem, &sem->bias, bias_budget(abs, clk))) {
		do_up_write(sem, false);
		return ETIMEDOUT;
	}
	return err;
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
