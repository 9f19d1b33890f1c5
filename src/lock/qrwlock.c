/* SPDX-License-Identifier: MIT */
/*
 * The queued reader-writer lock (qrwlock) in user space, after the Linux
 * kernel's kernel/locking/qrwlock.c, with the two 2015 forms of seed 000
 * built from the same source.  Written from the algorithm, not from the
 * kernel sources; docs/qrwlock.md has the design and the measurements.
 *
 * struct: a 32-bit count word `cnts` and a qlock spinlock `wait_lock`
 * (8 bytes).  Bit numbers below are value bits; the writer byte is bits
 * 0-7 on either endian (byte accesses go through qa_u8_*, which pick the
 * right address; with QLOCK_WORD_ATOMICS_ONLY they are word cmpxchg loops).
 *
 * ---- Word layouts ------------------------------------------------------
 *
 *   current ("qrwlock", qlock_*)       2014/2015 ("qrwlock-2015-cmpxchg-loop",
 *                                                 "qrwlock-2015-byte")
 *    0- 7  writer byte                  0- 7  writer byte ("wmode")
 *    8     WAITING: a writer waits      8-31  reader count (BIAS 1 << 8)
 *    9-31  reader count (BIAS 1 << 9)
 *
 *   writer byte values            current          2015
 *     0     no writer               free             free
 *     0x01  WAITING                 -                a writer waits
 *     0x02  W_SLEEP                 waiting writer   -
 *                                   sleeps (bit 8 set)
 *     0x03  WAITING|W_SLEEP         -                waiting writer sleeps
 *     0xff  LOCKED                  a writer holds   a writer holds
 *     0x80  SLOW                    a writer holds and the queue head
 *                                   sleeps until it unlocks
 *   The kernel has 0, WAITING (0x01 in 2015, bit 8 today) and LOCKED; the
 *   SLOW and W_SLEEP values are ours, for parking (below).  In both
 *   layouts: "a writer holds" = bit 7 (W_HELD) of the writer byte; "a
 *   writer holds or waits" = cnts & WMASK (0xff in 2015, 0x1ff today);
 *   "readers drained, the queue-head writer may take it" =
 *   (cnts & ~W_SLEEP) == WAITING; "drained and the writer sleeps" =
 *   cnts == WAITING|W_SLEEP (0x102 today, 0x03 in 2015).
 *
 * ---- Transitions (W = writer byte, R = reader count) ---------------------
 *
 *   read_lock fast      R += 1 (add_return), ok if no WMASK bit was set
 *                       and R is not full (bit 30: R_FULL)
 *   read back-out       R -= 1 when WMASK or R_FULL was set; then queue
 *                       on wait_lock
 *   read at queue head  R += 1; if R_FULL: R -= 1, wait (polling) until
 *                       R_FULL clears, again; then wait while W_HELD,
 *                       release wait_lock
 *   read_trylock        as the fast path, failing instead of queueing
 *   read_trylock_unfair R += 1 (add_return), ok unless W_HELD or R_FULL:
 *                       passes a WAITING writer (it waits for R == 0)
 *   read_trylock_join   R > 0 -> R + 1 (acquire cmpxchg), ok unless
 *                       W_HELD or R_FULL: joins readers that hold the
 *                       lock, past a WAITING writer
 *   read_unlock         R -= 1 (sub_return); result == WAITING|W_SLEEP:
 *                       last reader out, futex-wake the writer
 *   write_lock fast     cnts 0 -> LOCKED (cmpxchg)
 *   write at queue head (holding wait_lock):
 *     cnts 0 -> LOCKED                                 cmpxchg, done; else
 *     set WAITING: current   cnts |= WAITING            atomic OR
 *                  2015-loop wait W == 0, cnts -> cnts|WAITING
 *                                                       whole-word cmpxchg,
 *                            fails whenever a reader's add or back-out
 *                            changed R in between (seed 000 "before")
 *                  2015-byte wait W == 0, W 0 -> WAITING
 *                                                       byte cmpxchg, blind
 *                            to R (seed 000 "after")
 *     wait for a writer still holding (current only: W LOCKED with
 *     WAITING set) and for R == 0, then
 *       WAITING(|W_SLEEP), R == 0 -> LOCKED             cmpxchg
 *     write_lock_bounded (current only): once readers have held the lock
 *     for defer_ns against the waiting writer, it lets the threads queued
 *     behind it pass:
 *       WAITING|W_SLEEP, R > 0 -> WAITING, R            atomic AND (if it
 *                                                       slept)
 *     releases wait_lock (each queued reader becomes queue head in turn
 *     and joins the holders: a head reader does not look at WAITING) and
 *     queues again from the start; WAITING stays, so fast-path readers
 *     keep queueing
 *   write_unlock        W LOCKED -> 0                   release cmpxchg of W
 *                       W SLOW -> 0, futex wake          (failed cmpxchg)
 *                       W anything else: misuse, reported, unchanged
 *   read_unlock misuse  R wrapped or W_HELD in the result: R += 1 back,
 *                       reported
 *   parking (queue head only; bounded spin, then):
 *     waiting for a writer to unlock:   W LOCKED -> SLOW (byte cmpxchg),
 *                                       futex-wait while W == SLOW
 *     writer waiting for readers:       W |= W_SLEEP (byte cmpxchg: 0 ->
 *                                       0x02 today, 0x01 -> 0x03 in 2015),
 *                                       futex-wait while R != 0
 *
 * ---- Parking and what each unlock costs ----------------------------------
 *
 * Only the wait_lock holder (the queue head) ever waits on `cnts`; all
 * other waiters queue, spin and sleep inside the qspinlock.  So whoever
 * must wake the head wakes one thread, and knows it must from the word
 * itself (the paravirt qspinlock's trick, applied twice):
 *  - write_unlock is one release cmpxchg of the writer byte LOCKED -> 0
 *    (the kernel's is a plain release byte store, which cannot tell that
 *    the head went to sleep); it fails only when the byte is SLOW, and then
 *    it stores 0 and wakes.  Slow unlock: one store + one futex wake.
 *  - read_unlock is one sub_return (lock xadd) and a compare with a
 *    constant, as the kernel's atomic_sub_return_release; the result is
 *    WAITING|W_SLEEP only for the last reader out while the writer
 *    sleeps, which then wakes it.  The slow-path and trylock back-outs
 *    make the same check (a backing-out reader can be the last one out).
 * Neither unlock reads the word again after releasing it.  A futex wake
 * may touch a lock its waiter has already freed; a private FUTEX_WAKE on
 * such an address is harmless (no waiter, or EFAULT).
 *
 * ---- Ordering (what pairs with what) -------------------------------------
 *
 *  O1  read_lock / read_trylock add_return ACQUIRE  <->  write_unlock
 *      RELEASE (the cmpxchg, or the slow store) of the writer before.
 *  O2  write_lock / write_trylock / head-writer cmpxchg ACQUIRE  <->
 *      read_unlock sub_return RELEASE of every reader (the relaxed RMWs of
 *      backing-out readers continue the release sequence) and write_unlock
 *      RELEASE of the writer before.
 *  O3  reader at the queue head: load-ACQUIRE of cnts seeing W_HELD clear
 *      <->  write_unlock RELEASE.
 *  O4  wait_lock: qspinlock acquire/release; it only orders the queue, the
 *      count word carries its own ordering (O1-O3), so every RMW made
 *      under wait_lock that does not take the lock is relaxed.
 *  O5  head sleeps on a writer: head cmpxchg W LOCKED -> SLOW and unlocker
 *      cmpxchg W LOCKED -> 0 are RMWs of the same byte, so exactly one
 *      wins; if the head won, the unlocker takes the slow path and wakes.
 *      The futex wait re-checks the word in the kernel, so an unlock
 *      between the head's cmpxchg and its sleep is not missed.
 *  O6  writer sleeps on readers: its W_SLEEP RMW and the readers'
 *      decrements are RMWs of the same word.  If the mark comes first, the
 *      decrement that brings R to 0 returns WAITING|W_SLEEP and wakes; if
 *      the last decrement comes first, the writer's load after its own RMW
 *      (coherence) sees R == 0 and it does not sleep.
 *  The native build mixes byte and word RMWs on one word (as the kernel
 *  does); the QLOCK_WORD_ATOMICS_ONLY build uses word RMWs only.
 *
 * ---- Fairness ------------------------------------------------------------
 *  - A writer in the queue sets WAITING before it waits for readers, and
 *    fast-path readers that see it back out and queue behind it: a stream
 *    of readers cannot hold it off (the current layout sets WAITING even
 *    while another writer holds the lock; the 2015 one once W is 0).
 *  - write_lock_bounded gives up its place in the queue (not WAITING)
 *    after defer_ns of readers that do not drain, so a queued reader that
 *    another reader waits for is never held off longer than defer_ns for
 *    each writer queued ahead of it (the pthread drop-in's glibc-like
 *    kinds); only the readers queued then pass, new ones still queue, so
 *    the writer gets the lock as soon as the holders leave.
 *  - A reader at the queue head adds its count before it waits for the
 *    writer, so once the writer unlocks, cnts != 0 and no fast-path writer
 *    can slip in: a stream of writers cannot hold it off.  Readers queued
 *    behind it follow as soon as it releases wait_lock.
 *  - The queue itself is the qspinlock: FIFO, with bounded stealing only
 *    while its head sleeps (docs/qspinlock.md).
 */
#define _GNU_SOURCE
#include "lock/qrwlock_fast.h"
#include "lock/qrwlock_variants.h"

#include <time.h>

#include "core/atomic.h"
#include "core/bravo.h"
#include "core/futex.h"
#include "core/misuse.h"
#include "core/spin.h"
#include "core/lockevent.h"
#include "core/testhook.h"

_Static_assert(sizeof(qlock_rwlock_t) == 8, "qlock_rwlock_t is 8 bytes");

#define QRW_CLASS QC_CLASS_qrwlock
#define QRW_INLINE static inline __attribute__((always_inline))

enum qrw_variant { QRW_CUR, QRW_2015_LOOP, QRW_2015_BYTE };

/* Layout constants of a variant (constant-folded: v is a literal). */
QRW_INLINE uint32_t qrw_waiting(enum qrw_variant v)
{
	return v == QRW_CUR ? QRW_CUR_WAITING : QRW_2015_WAITING;
}

QRW_INLINE uint32_t qrw_wmask(enum qrw_variant v)
{
	return v == QRW_CUR ? QRW_CUR_WMASK : QRW_2015_WMASK;
}

QRW_INLINE uint32_t qrw_bias(enum qrw_variant v)
{
	return v == QRW_CUR ? QRW_CUR_BIAS : QRW_2015_BIAS;
}

QRW_INLINE uint32_t qrw_readers(enum qrw_variant v, uint32_t cnts)
{
	return cnts >> (v == QRW_CUR ? QRW_CUR_RSHIFT : QRW_2015_RSHIFT);
}

/* Last reader out while the queue-head writer sleeps: wake it. */
QRW_INLINE bool qrw_must_wake_writer(enum qrw_variant v, uint32_t cnts)
{
	return qa_unlikely(cnts == (qrw_waiting(v) | QRW_W_SLEEP));
}

static void qrw_wake(qlock_rwlock_t *lock, enum qc_op op)
{
	qc_event_inc(QRW_CLASS, QC_EV_wake);
#ifndef QLOCK_MUTATE_WAKE_QRWLOCK /* every wake of a sleeping waiter */
	qc_futex_wake(&lock->cnts, 1, QRW_CLASS, op);
#else /* model-check mutation (tests/model): must be caught */
	(void)lock;
	(void)op;
#endif
}

/* Take our reader count back out (we did not get the lock); relaxed:
 * it publishes nothing (O2 explains why the release sequence holds). */
QRW_INLINE void qrw_read_back_out(qlock_rwlock_t *lock, enum qrw_variant v)
{
	uint32_t cnts = qa_fetch_sub_relaxed(&lock->cnts, qrw_bias(v)) -
			qrw_bias(v);

	if (qrw_must_wake_writer(v, cnts))
		qrw_wake(lock, QC_OP_RLOCK);
}

/*
 * Queue head parks while a writer holds the lock: W LOCKED -> SLOW (O5),
 * then sleep while W is SLOW.  Returns after a wake-up or any change; the
 * caller re-checks.
 */
static void qrw_park_on_writer(qlock_rwlock_t *lock, enum qc_op op)
{
	uint32_t cnts;

	if (qa_u8_read(&lock->cnts, 0) == QRW_W_LOCKED &&
	    qa_u8_cmpxchg_relaxed(&lock->cnts, 0, QRW_W_LOCKED,
				  QRW_W_SLOW) != QRW_W_LOCKED)
		return; /* unlocked (or already SLOW): look again */
	cnts = qa_read(&lock->cnts);
	if ((cnts & QRW_W_BYTE) != QRW_W_SLOW)
		return;
	qc_event_inc(QRW_CLASS, QC_EV_sleep);
	qc_futex_wait(&lock->cnts, cnts, NULL, CLOCK_MONOTONIC, QRW_CLASS, op);
}

/* Reader at the queue head: wait until no writer holds the lock (O3). */
static void qrw_read_wait_writer(qlock_rwlock_t *lock)
{
	struct qc_spinner s;

	qc_spinner_init(&s);
	while (qa_read_acquire(&lock->cnts) & QRW_W_HELD) {
		if (qc_spin_continue(&s))
			continue;
		qrw_park_on_writer(lock, QC_OP_RLOCK);
		qc_spin_begin(&s);
	}
	qc_spin_account(&s, QRW_CLASS);
}

/* The slow path after the fast path's count was taken back out. */
QRW_INLINE void qrw_read_lock_queued(qlock_rwlock_t *lock, enum qrw_variant v)
{
	uint32_t cnts;

	qc_event_inc(QRW_CLASS, QC_EV_slowpath);
	qlock_spin_lock(&lock->wait_lock);
	/* Count ourselves in first: from here no fast-path writer can take
	 * the lock, so the writer that holds it now is the last we wait for.
	 * A full count means readers hold it (no writer): wait, at the head
	 * of the queue, for one of them to leave. */
	while (qa_unlikely((cnts = qa_add_return_acquire(&lock->cnts,
							 qrw_bias(v))) &
			   QRW_R_FULL)) {
		qrw_read_back_out(lock, v);
		(void)qc_wait_room(&lock->cnts, qrw_bias(v), QRW_R_FULL, NULL,
				   CLOCK_MONOTONIC);
	}
	if (cnts & QRW_W_HELD)
		qrw_read_wait_writer(lock);
	qlock_spin_unlock(&lock->wait_lock);
}

QRW_INLINE void qrw_read_lock_slowpath(qlock_rwlock_t *lock,
				       enum qrw_variant v)
{
	qrw_read_back_out(lock, v);
	qrw_read_lock_queued(lock, v);
}

void qrw_cur_read_back_out(qlock_rwlock_t *lock)
{
	qrw_read_back_out(lock, QRW_CUR);
}

/*
 * 2015 layout, queue-head writer: wait for W == 0 (a writer may hold the
 * lock; fast-path writers may still slip in), then set WAITING: with a
 * whole-word cmpxchg (loop variant: fails whenever R changed since the
 * read) or a byte cmpxchg of W (byte variant: R does not matter).
 */
QRW_INLINE void qrw_2015_set_waiting(qlock_rwlock_t *lock, enum qrw_variant v)
{
	struct qc_spinner s;
	uint64_t retries = 0;
	uint32_t cnts;

	qc_spinner_init(&s);
	for (;;) {
		cnts = qa_read(&lock->cnts);
		if (!(cnts & QRW_2015_WMASK)) {
			if (v == QRW_2015_LOOP) {
				if (qa_try_cmpxchg_relaxed(&lock->cnts, &cnts,
						cnts | QRW_2015_WAITING))
					break;
			} else if (qa_u8_cmpxchg_relaxed(&lock->cnts, 0, 0,
						QRW_2015_WAITING) == 0) {
				break;
			}
			retries++;
			qa_cpu_relax();
			continue;
		}
		/* A writer holds it. */
		if (qc_spin_continue(&s))
			continue;
		qrw_park_on_writer(lock, QC_OP_LOCK);
		qc_spin_begin(&s);
	}
	qc_spin_account(&s, QRW_CLASS);
	if (retries)
		qc_event_add(QRW_CLASS, QC_EV_qrw_waiting_retry, retries);
}

/*
 * Queue-head writer with WAITING set parks: on a writer that still holds
 * the lock (current layout only) as a reader does, else on the readers:
 * set W_SLEEP (O6) and sleep while readers remain.
 */
QRW_INLINE void qrw_park_on_readers(qlock_rwlock_t *lock, enum qrw_variant v,
				    uint32_t cnts, const struct timespec *until)
{
	uint8_t w = (uint8_t)(cnts & QRW_W_BYTE);

	if (w & QRW_W_HELD) {
		qrw_park_on_writer(lock, QC_OP_LOCK);
		return;
	}
	if (!(w & QRW_W_SLEEP) &&
	    qa_u8_cmpxchg_relaxed(&lock->cnts, 0, w, w | QRW_W_SLEEP) != w)
		return; /* the writer byte changed: look again */
	cnts = qa_read(&lock->cnts);
	if (!qrw_readers(v, cnts) || (cnts & QRW_W_HELD))
		return;
	qc_event_inc(QRW_CLASS, QC_EV_sleep);
	qc_futex_wait(&lock->cnts, cnts, until, CLOCK_MONOTONIC, QRW_CLASS,
		      QC_OP_LOCK);
}

/*
 * write_lock_bounded: readers have held the lock since WAITING was set at
 * `since` (CLOCK_MONOTONIC ns): true once defer_ns has passed (then the
 * writer lets them pass), else *until is the time to look again.
 */
static bool qrw_defer_over(uint64_t since, uint64_t defer_ns,
			   struct timespec *until)
{
	uint64_t now = qc_now_ns(), end = since + defer_ns;

	if (now >= end)
		return true;
	*until = qc_deadline_in(end - now);
	return false;
}

/*
 * The writer's slow path up to the wait: under wait_lock (held on return),
 * take the lock if it is free (true), else set WAITING (false).
 */
QRW_INLINE bool qrw_write_enter_queue(qlock_rwlock_t *lock, enum qrw_variant v)
{
	uint32_t cnts;

	qc_event_inc(QRW_CLASS, QC_EV_slowpath);
	qlock_spin_lock(&lock->wait_lock);

	/* Free now: take it at once (O2). */
	cnts = qa_read(&lock->cnts);
	if (!cnts && qa_try_cmpxchg_acquire(&lock->cnts, &cnts, QRW_W_LOCKED))
		return true;

	/* Stop new readers (and writers): WAITING. */
	if (v == QRW_CUR)
		qa_fetch_or_relaxed(&lock->cnts, QRW_CUR_WAITING);
	else
		qrw_2015_set_waiting(lock, v);
	return false;
}

/* WAITING(|W_SLEEP), R == 0 -> LOCKED (O2): may the queue head take it? */
QRW_INLINE bool qrw_write_may_take(enum qrw_variant v, uint32_t cnts)
{
	return (cnts & ~QRW_W_SLEEP) == qrw_waiting(v);
}

/*
 * Wait for the readers (and today a writer) to go, then take it.  The
 * bounded writer's wait below is a separate loop on purpose: its give-way
 * branch inside this one, even never taken, keeps GenMC from treating the
 * wait as one spin loop, and the model of the plain writer grows from
 * seconds to beyond its time bound.
 */
QRW_INLINE void qrw_write_lock_slowpath(qlock_rwlock_t *lock,
					enum qrw_variant v)
{
	struct qc_spinner s;
	uint32_t cnts;

	if (qrw_write_enter_queue(lock, v))
		goto out;
	qc_spinner_init(&s);
	for (;;) {
		cnts = qa_read(&lock->cnts);
		if (qrw_write_may_take(v, cnts)) {
			if (qa_try_cmpxchg_acquire(&lock->cnts, &cnts, /* O2 */
						   QRW_W_LOCKED))
				break;
			continue;
		}
		if (qc_spin_continue(&s))
			continue;
		qrw_park_on_readers(lock, v, cnts, NULL);
		qc_spin_begin(&s);
	}
	qc_spin_account(&s, QRW_CLASS);
out:
	qlock_spin_unlock(&lock->wait_lock);
}

/*
 * write_lock_bounded (current layout): as the slow path above, but once
 * readers have held the lock for defer_ns against this writer, it lets
 * the threads queued behind it pass: true with the lock write-held, false
 * when it gave way (the caller queues again).
 */
static bool qrw_write_lock_slowpath_bounded(qlock_rwlock_t *lock,
					    uint64_t defer_ns)
{
	struct timespec until, *untilp;
	struct qc_spinner s;
	uint64_t since = 0;
	uint32_t cnts;

	if (qrw_write_enter_queue(lock, QRW_CUR))
		goto out;
	qc_spinner_init(&s);
	for (;;) {
		cnts = qa_read(&lock->cnts);
		if (qrw_write_may_take(QRW_CUR, cnts)) {
			if (qa_try_cmpxchg_acquire(&lock->cnts, &cnts, /* O2 */
						   QRW_W_LOCKED))
				break;
			continue;
		}
		if (qc_spin_continue(&s))
			continue;
		untilp = NULL;
		if (!(cnts & QRW_W_HELD)) {
			/* Readers hold it: time them from now. */
			if (!since)
				since = qc_now_ns();
			if (qrw_defer_over(since, defer_ns, &until)) {
				/* Let the queue pass: readers queued behind us
				 * take wait_lock first and join the holders.
				 * WAITING stays (new readers still queue);
				 * nothing to publish. */
				if (cnts & QRW_W_SLEEP)
					qa_fetch_andnot_relaxed(&lock->cnts,
								QRW_W_SLEEP);
				qlock_spin_unlock(&lock->wait_lock);
				qc_spin_account(&s, QRW_CLASS);
				return false;
			}
			untilp = &until;
		}
		qrw_park_on_readers(lock, QRW_CUR, cnts, untilp);
		qc_spin_begin(&s);
	}
	qc_spin_account(&s, QRW_CLASS);
out:
	qlock_spin_unlock(&lock->wait_lock);
	return true;
}

/* ---- the operations, one set per variant --------------------------------- */

QRW_INLINE void qrw_read_lock(qlock_rwlock_t *lock, enum qrw_variant v)
{
	uint32_t cnts;

	if (v == QRW_CUR) {
		if (qa_likely(qrw_cur_read_lock_fast(lock)))
			return;
		qrw_read_lock_queued(lock, v);
		return;
	}
	cnts = qa_add_return_acquire(&lock->cnts, qrw_bias(v)); /* O1 */
	if (qa_likely(!(cnts & (qrw_wmask(v) | QRW_R_FULL))))
		return;
	qrw_read_lock_slowpath(lock, v);
}

QRW_INLINE bool qrw_read_trylock(qlock_rwlock_t *lock, enum qrw_variant v)
{
	uint32_t cnts = qa_read(&lock->cnts);

	if (cnts & (qrw_wmask(v) | QRW_R_FULL))
		return false;
	cnts = qa_add_return_acquire(&lock->cnts, qrw_bias(v)); /* O1 */
	if (qa_likely(!(cnts & (qrw_wmask(v) | QRW_R_FULL))))
		return true;
	qrw_read_back_out(lock, v);
	return false;
}

static __attribute__((noinline, cold)) void
qrw_read_unlock_misuse(qlock_rwlock_t *lock, uint32_t bias)
{
	qa_fetch_add_relaxed(&lock->cnts, bias); /* take it back */
	qc_misuse("qlock_read_unlock", "the lock is not read-locked", lock);
}

/* After the unlock's sub_return: misuse, or the wake of a sleeping writer. */
QRW_INLINE void qrw_read_unlock_finish(qlock_rwlock_t *lock,
				       enum qrw_variant v, uint32_t cnts)
{
	if (qa_unlikely(cnts & QRW_READ_UNLOCK_BAD)) {
		qrw_read_unlock_misuse(lock, qrw_bias(v));
		return;
	}
	qc_test_released(lock);
	if (qrw_must_wake_writer(v, cnts))
		qrw_wake(lock, QC_OP_RUNLOCK);
}

void qrw_cur_read_unlock_slow(qlock_rwlock_t *lock, uint32_t cnts)
{
	qrw_read_unlock_finish(lock, QRW_CUR, cnts);
}

QRW_INLINE void qrw_read_unlock(qlock_rwlock_t *lock, enum qrw_variant v)
{
	if (v == QRW_CUR) {
		qrw_cur_read_unlock(lock);
		return;
	}
	qrw_read_unlock_finish(lock, v,
			       qa_sub_return_release(&lock->cnts,
						     qrw_bias(v))); /* O2 */
}

QRW_INLINE void qrw_write_lock(qlock_rwlock_t *lock, enum qrw_variant v)
{
	if (qa_likely(qrw_cur_write_lock_fast(lock))) /* O2; every layout */
		return;
	qrw_write_lock_slowpath(lock, v);
}

QRW_INLINE bool qrw_write_trylock(qlock_rwlock_t *lock)
{
	uint32_t cnts = qa_read(&lock->cnts);

	if (cnts)
		return false;
	return qa_try_cmpxchg_acquire(&lock->cnts, &cnts, QRW_W_LOCKED); /* O2 */
}

QRW_INLINE void qrw_write_unlock(qlock_rwlock_t *lock)
{
	/* O1/O2/O3 release; fails on SLOW (O5), or when no writer holds
	 * the lock (misuse: left as it is). */
	uint8_t w = qrw_cur_write_unlock_fast(lock);

	if (qa_likely(w == QRW_W_LOCKED))
		return;
	if (qa_unlikely(w != QRW_W_SLOW)) {
		qc_misuse("qlock_write_unlock", "the lock is not write-locked",
			  lock);
		return;
	}
	qa_u8_write_release(&lock->cnts, 0, 0);
	qc_test_released(lock);
	qrw_wake(lock, QC_OP_UNLOCK);
}

/* ---- public API: the current layout ------------------------------------ */

void qlock_read_lock(qlock_rwlock_t *lock) { qrw_read_lock(lock, QRW_CUR); }
bool qlock_read_trylock(qlock_rwlock_t *lock) { return qrw_read_trylock(lock, QRW_CUR); }
void qlock_read_unlock(qlock_rwlock_t *lock) { qrw_read_unlock(lock, QRW_CUR); }

/* The kernel's in_interrupt() reader, as a trylock: only a writer that
 * holds the lock stops it.  A queue-head writer that set WAITING takes
 * the lock only once R is 0 (its cmpxchg expects WAITING alone), so our
 * count keeps it out; if it sleeps, our read_unlock wakes it (O6). */
bool qlock_read_trylock_unfair(qlock_rwlock_t *lock)
{
	uint32_t cnts = qa_read(&lock->cnts);

	if (cnts & (QRW_W_HELD | QRW_R_FULL))
		return false;
	cnts = qa_add_return_acquire(&lock->cnts, QRW_CUR_BIAS); /* O1 */
	if (qa_likely(!(cnts & (QRW_W_HELD | QRW_R_FULL))))
		return true;
	qrw_read_back_out(lock, QRW_CUR);
	return false;
}
/* Joins readers that hold the lock, past a WAITING writer (which waits
 * for R == 0, so our count keeps it out and our unlock wakes it, O6);
 * never when R is 0: the queue-head writer is about to take it then. */
bool qlock_read_trylock_join(qlock_rwlock_t *lock)
{
	uint32_t cnts = qa_read(&lock->cnts);

	while (qrw_readers(QRW_CUR, cnts) &&
	       !(cnts & (QRW_W_HELD | QRW_R_FULL))) {
		if (qa_try_cmpxchg_acquire(&lock->cnts, &cnts,
					   cnts + QRW_CUR_BIAS)) /* O1 */
			return true;
	}
	return false;
}
void qlock_write_lock(qlock_rwlock_t *lock) { qrw_write_lock(lock, QRW_CUR); }
void qlock_write_lock_bounded(qlock_rwlock_t *lock, uint64_t defer_ns)
{
	if (qa_likely(qrw_cur_write_lock_fast(lock))) /* O2 */
		return;
	while (!qrw_write_lock_slowpath_bounded(lock, defer_ns))
		;
}
bool qlock_write_trylock(qlock_rwlock_t *lock) { return qrw_write_trylock(lock); }
void qlock_write_unlock(qlock_rwlock_t *lock) { qrw_write_unlock(lock); }

uint32_t qlock_rwlock_readers(const qlock_rwlock_t *lock)
{
	return qrw_readers(QRW_CUR, qa_read(&lock->cnts));
}

bool qlock_rwlock_is_contended(qlock_rwlock_t *lock)
{
	return qlock_spin_is_locked(&lock->wait_lock);
}

/* ---- the seed 000 variants (internal) ------------------------------------ */

#define QRW_DEFINE_VARIANT(p, v)                                              \
	void p##_read_lock(qlock_rwlock_t *lock) { qrw_read_lock(lock, v); }  \
	bool p##_read_trylock(qlock_rwlock_t *lock)                          \
	{ return qrw_read_trylock(lock, v); }                                 \
	void p##_read_unlock(qlock_rwlock_t *lock) { qrw_read_unlock(lock, v); } \
	void p##_write_lock(qlock_rwlock_t *lock) { qrw_write_lock(lock, v); } \
	bool p##_write_trylock(qlock_rwlock_t *lock)                         \
	{ return qrw_write_trylock(lock); }                                   \
	void p##_write_unlock(qlock_rwlock_t *lock) { qrw_write_unlock(lock); }

QRW_DEFINE_VARIANT(qrw_2015_loop, QRW_2015_LOOP)
QRW_DEFINE_VARIANT(qrw_2015_byte, QRW_2015_BYTE)

/* ---- the read-biased variant (core/bravo.h has the protocol) ------------- *
 * The underlying lock is the current layout; the bias word sits beside it.
 * A reader tries its slot first, else takes the count word and turns the
 * bias back on when it is due; a writer revokes after taking the count
 * word.  Every lock of the variant may be biased. */

void qlock_biased_read_lock(qlock_rwlock_biased_t *lock)
{
	if (qc_bravo_read_try(lock, &lock->bias, QLOCK_RWLOCK_MAX_READERS))
		return;
	qrw_read_lock(&lock->rw, QRW_CUR);
	qc_bravo_reader_locked(&lock->bias, true);
}

bool qlock_biased_read_trylock(qlock_rwlock_biased_t *lock)
{
	if (qc_bravo_read_try(lock, &lock->bias, QLOCK_RWLOCK_MAX_READERS))
		return true;
	if (!qrw_read_trylock(&lock->rw, QRW_CUR))
		return false;
	qc_bravo_reader_locked(&lock->bias, true);
	return true;
}

void qlock_biased_read_unlock(qlock_rwlock_biased_t *lock)
{
	if (qc_bravo_read_release(lock))
		return;
	qrw_read_unlock(&lock->rw, QRW_CUR);
}

void qlock_biased_write_lock(qlock_rwlock_biased_t *lock)
{
	qrw_write_lock(&lock->rw, QRW_CUR);
	if (qc_bravo_must_revoke(&lock->bias))
		(void)qc_bravo_revoke(lock, &lock->bias, UINT64_MAX);
}

bool qlock_biased_write_trylock(qlock_rwlock_biased_t *lock)
{
	if (!qrw_write_trylock(&lock->rw))
		return false;
	if (qc_bravo_must_revoke(&lock->bias) &&
	    !qc_bravo_revoke(lock, &lock->bias, 0)) {
		qrw_write_unlock(&lock->rw); /* biased readers hold it */
		return false;
	}
	return true;
}

void qlock_biased_write_unlock(qlock_rwlock_biased_t *lock)
{
	qrw_write_unlock(&lock->rw);
}
