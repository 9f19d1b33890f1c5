/* SPDX-License-Identifier: MIT */
/*
 * pthread_mutex_*: the mutex kinds qlock serves (normal, recursive,
 * errorcheck, adaptive) on the algorithm QLOCK_MUTEX chose; the others
 * go to glibc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "core/misuse.h"
#include "deadlock.h"
#include "entry.h"
#include "lockdep.h"
#include "shim.h"

/* glibc-owned: an attribute qlock does not implement, or destroyed. */
static inline bool mutex_glibc(int kind)
{
	return (kind & ~(MUTEX_KIND_MASK | MUTEX_ELISION_BITS)) != 0 ||
	       shim_malg == MALG_GLIBC;
}

static int mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int type = PTHREAD_MUTEX_DEFAULT, pshared = PTHREAD_PROCESS_PRIVATE;
	int robust = PTHREAD_MUTEX_STALLED, proto = PTHREAD_PRIO_NONE;

	ready();
	if (a) {
		(void)pthread_mutexattr_gettype(a, &type);
		(void)pthread_mutexattr_getpshared(a, &pshared);
		(void)pthread_mutexattr_getrobust(a, &robust);
		(void)pthread_mutexattr_getprotocol(a, &proto);
	}
	if (shim_malg == MALG_GLIBC || pshared != PTHREAD_PROCESS_PRIVATE ||
	    robust != PTHREAD_MUTEX_STALLED || proto != PTHREAD_PRIO_NONE)
		return real.pthread_mutex_init(m, a);
	memset(m, 0, sizeof(*m));
	QM(m)->kind = type & MUTEX_KIND_MASK;
	return 0;
}

static int mutex_destroy(pthread_mutex_t *m)
{
	struct qm *q = QM(m);

	ready();
	if (mutex_glibc(q->kind))
		return real.pthread_mutex_destroy(m);
	if (ma_is_locked(q->word))
		return EBUSY;
	/* As glibc: a destroyed mutex has kind -1, so later use gets EINVAL
	 * (from glibc, which owns such objects) until it is initialised. */
	q->kind = -1;
	return 0;
}

/* fork(): the repair of a mutex the parent's threads waited on (fork.c). */
static __attribute__((noinline)) void mutex_fork_repair(struct qm *q, uint32_t g)
{
	if (!shim_fork_claim(&q->gen, g))
		return;
	ma_fork_reset(q->word);
	shim_fork_repaired(&q->gen, g);
}

static inline void mutex_fork_check(struct qm *q)
{
	uint32_t g = shim_fork_check();

	if (qa_unlikely(qa_read_acquire(&q->gen) != g))
		mutex_fork_repair(q, g);
}

int mutex_acquire(pthread_mutex_t *m, int mode, clockid_t clk,
		  const struct timespec *abs)
{
	struct qm *q = QM(m);
	int kind = q->kind & ~MUTEX_ELISION_BITS;
	uint64_t me = 0;
	int err;

	if (mode == 2 && !clock_ok(clk))
		return EINVAL;
	if (mutex_glibc(q->kind))
		return SHIM_GLIBC_ACQUIRE(m, mode, clk, abs, pthread_mutex_lock,
					  pthread_mutex_trylock, pthread_mutex_clocklock);
	/* As glibc: a NULL deadline is none (the clock is still checked,
	 * above). */
	if (mode == 2 && !abs)
		mode = 0;
	if (kind == MUTEX_RECURSIVE || kind == MUTEX_ERRORCHECK) {
		me = self_id();
		if (qa_read(&q->owner) == me) {
			if (kind == MUTEX_ERRORCHECK)
				return mode == 1 ? EBUSY : EDEADLK;
			if (q->count == UINT32_MAX)
				return EAGAIN;
			q->count++;
			return 0;
		}
	}
	switch (mode) {
	case 0:
		if (ma_trylock(q->word))
			break;
		mutex_fork_check(q);
		ma_lock(q->word);
		break;
	case 1:
		if (!ma_trylock(q->word))
			return EBUSY;
		break;
	default:
		/* As glibc: a free mutex is taken without looking at the
		 * deadline; a bad tv_nsec is reported only when we would wait. */
		if (ma_trylock(q->word))
			break;
		if (!nsec_ok(abs))
			return EINVAL;
		mutex_fork_check(q);
		err = ma_timedlock(q->word, clk, abs);
		if (err)
			return err;
		break;
	}
	if (kind == MUTEX_RECURSIVE || kind == MUTEX_ERRORCHECK) {
		qa_write(&q->owner, me);
		q->count = 1;
	}
	return 0;
}

int mutex_release(pthread_mutex_t *m)
{
	struct qm *q = QM(m);
	int kind = q->kind & ~MUTEX_ELISION_BITS;

	if (mutex_glibc(q->kind))
		return real.pthread_mutex_unlock(m);
	if (kind == MUTEX_RECURSIVE || kind == MUTEX_ERRORCHECK) {
		if (qa_read(&q->owner) != self_id())
			return EPERM;
		if (kind == MUTEX_RECURSIVE && --q->count != 0)
			return 0;
		q->count = 0;
		qa_write(&q->owner, 0);
	}
	/* Also here: an unlock in a fork child must not hand the mutex to a
	 * waiter of the parent (TP hand-off) or wake a ghost. */
	mutex_fork_check(q);
	if (qa_unlikely(!ma_is_held(q->word))) {
		/* glibc's NORMAL mutex returns 0 here and so must we: a
		 * program that runs under glibc keeps running.  Counted in
		 * the statistics (shim_on_misuse). */
		qc_misuse("pthread_mutex_unlock", "the mutex is not locked", m);
		return 0;
	}
	ma_unlock(q->word);
	return 0;
}

EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int err = mutex_init(m, a);

	if (SHIM_LOCKDEP_ON() && err == 0)
		lockdep_init(m, LD_MUTEX, LOCKDEP_PC());
	return err;
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	int err = mutex_destroy(m);

	if (SHIM_LOCKDEP_ON())
		lockdep_destroy(m, LD_MUTEX, LOCKDEP_PC(), err);
	return err;
}

/*
 * The default drop-in's hot path: a NORMAL or ADAPTIVE mutex on the TP
 * algorithm, free when locked and without waiters when unlocked, costs the
 * library's own fast path (one cmpxchg) plus four loads: the kind,
 * shim_mutex_fast, the cached tid and __libc_single_threaded (while the
 * process has one thread, a plain load and store replace the cmpxchg, as
 * in glibc).  A thread whose tid is not cached yet takes the general path
 * once, which caches it: so the fast paths make no call.  No fork check
 * is needed there: the lock cmpxchg only takes a free word, and the
 * unlock cmpxchg only releases a word that is exactly our tid, both right
 * in a fork child too; whatever a fork left behind (WAITERS, a ghost top
 * waiter) sends the call to the general path, which repairs it
 * (mutex_fork_check()).
 */
static inline bool mutex_kind_fast(const struct qm *q)
{
	int kind = q->kind & ~MUTEX_ELISION_BITS;

	return qa_likely(kind == MUTEX_NORMAL || kind == MUTEX_ADAPTIVE);
}

/* The inline paths apply to this mutex and thread, the switch read
 * once (f: shim_mutex_fast): the cached tid, 0 for no (not cached yet:
 * the general path fills it). */
static inline uint32_t mutex_fast_tid(uint8_t f, const struct qm *q)
{
	uint32_t tid = tp_self_tid_cached();

	return qa_likely(f) && mutex_kind_fast(q) ? tid : 0u;
}

/* The TP word's one-cmpxchg paths (a plain load and store while the
 * process has one thread); tid != 0. */
static inline bool mutex_lock_tp(pthread_mutex_t *m, uint32_t tid)
{
	qlock_tp_mutex_t *tm = (qlock_tp_mutex_t *)QM(m)->word;

	if (shim_single_threaded())
		return tp_mutex_lock_fast_single(tm, tid);
	return tp_mutex_lock_fast(tm, tid);
}

static inline bool mutex_unlock_tp(pthread_mutex_t *m, uint32_t tid)
{
	qlock_tp_mutex_t *tm = (qlock_tp_mutex_t *)QM(m)->word;

	if (shim_single_threaded())
		return tp_mutex_unlock_fast_single(tm, tid);
	return tp_mutex_unlock_fast(tm, tid) == tid;
}

/* The trylock's inline path (not counted, as trylocks are not; not with
 * lockdep's checks, whose hooks see every trylock). */
static inline bool mutex_lock_fast(pthread_mutex_t *m)
{
	uint32_t tid = mutex_fast_tid(qa_read(&shim_mutex_fast) & SHIM_FAST_ON, QM(m));

	return qa_likely(tid != 0) && mutex_lock_tp(m, tid);
}

/* The blocking lock's inline path: SHIM_FAST_* (entry.h); what it takes
 * while the statistics count or lockdep's checks are on is told out of
 * line (SHIM_FAST_TELL). */
static inline int mutex_lock_fast_counted(pthread_mutex_t *m)
{
	uint8_t f = qa_read(&shim_mutex_fast);
	uint32_t tid = mutex_fast_tid(f, QM(m));

	if (qa_unlikely(tid == 0))
		return SHIM_FAST_NONE;
	if (!mutex_lock_tp(m, tid))
		return SHIM_FAST_MISSED;
	if (qa_unlikely(f & (SHIM_FAST_COUNT | SHIM_FAST_LOCKDEP))) /* one test */
		return SHIM_FAST_TELL(f);
	return SHIM_FAST_TAKEN;
}

/* Expanded in pthread_mutex_unlock(), whose call site LOCKDEP_PC() names
 * (shim_inline_paths checks that it is). */
static inline bool mutex_unlock_fast(pthread_mutex_t *m)
{
	uint8_t f = qa_read(&shim_mutex_fast);
	uint32_t tid = mutex_fast_tid(f, QM(m)); /* 0: never locked, general path */

	if (qa_unlikely(tid == 0))
		return false;
	if (qa_unlikely(f & (SHIM_FAST_COUNT | SHIM_FAST_LOCKDEP))) {
		if (f & SHIM_FAST_COUNT)
			lockstat_release(m);
		else
			lockdep_unlocking(m, LD_MUTEX, LOCKDEP_PC());
		/* Told once: a mutex with waiters is released here. */
		if (!mutex_unlock_tp(m, tid))
			(void)mutex_release(m); /* 0 for these kinds */
		return true;
	}
	return mutex_unlock_tp(m, tid);
}

/* The general path's first try with the statistics or lockdep's checks
 * on (entry.h): the inline path's miss where it tried (so a lock call
 * tries as many times before it waits as without them), else the inline
 * path's code where it applies (the inline paths are off while lockdep's
 * checks and the statistics are both on), else
 * the general try. */
static inline int mutex_first_try(pthread_mutex_t *m, bool missed)
{
	if (missed)
		return EBUSY;
	uint32_t tid = mutex_fast_tid(shim_malg == MALG_TP, QM(m));

	if (qa_likely(tid != 0))
		return mutex_lock_tp(m, tid) ? 0 : EBUSY;
	return mutex_acquire(m, 1, CLOCK_REALTIME, NULL);
}

/* The inline path's take whatever shim_mutex_fast says (entry.h). */
static inline bool mutex_lock_inline(pthread_mutex_t *m)
{
	uint32_t tid = mutex_fast_tid(shim_malg == MALG_TP, QM(m));

	return qa_likely(tid != 0) && mutex_lock_tp(m, tid);
}

/* The mutex's inline path leaves nothing undone (entry.h). */
static inline int mutex_lock_finish(pthread_mutex_t *m, int fast)
{
	(void)m;
	return fast;
}

SHIM_LOCK_CALLS(pthread_mutex_t, pthread_mutex_lock, pthread_mutex_trylock,
		pthread_mutex_timedlock, pthread_mutex_clocklock,
		mutex_lock_fast, mutex_lock_fast_counted, mutex_lock_finish,
		mutex_acquire,
		mutex_first_try, mutex_lock_inline, LD_MUTEX, LOCKSTAT_MUTEX)

static inline int mutex_unlock_general(pthread_mutex_t *m)
{
	ready();
	SHIM_RELEASED(m);
	/* Lockdep's checks with the statistics turn the inline paths off,
	 * and an inline path may have missed: their code here. */
	if (LOCKDEP_ON()) {
		uint32_t tid = mutex_fast_tid(shim_malg == MALG_TP, QM(m));

		if (tid != 0 && mutex_unlock_tp(m, tid))
			return 0;
	}
	return mutex_release(m);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	return SHIM_UNLOCK(m, mutex_unlock_fast(m), LD_MUTEX,
			   mutex_unlock_general(m));
}

/* The profile's deadlock watchdog (contention.h): the TP word holds its
 * owner's tid; the other algorithms' words do not name the owner, and
 * their acquisitions are on the held-lock stacks. */
int32_t shim_mutex_owner(const volatile void *m, bool peek)
{
	struct qm q;

	if (shim_malg != MALG_TP)
		return 0;
	if (peek) {
		if (!shim_peek(&q, m, sizeof(q)))
			return 0;
	} else {
		q.kind = qa_read(&((const struct qm *)m)->kind);
		q.word[0] = qa_read(&((const struct qm *)m)->word[0]);
	}
	if (mutex_glibc(q.kind))
		return 0;
	return (int32_t)(q.word[0] & QLOCK_TP_TID_MASK);
}

SHIM_GLIBC_ALIAS(pthread_mutex_init, (pthread_mutex_t *a, const pthread_mutexattr_t *b), (a, b))
SHIM_GLIBC_ALIAS(pthread_mutex_destroy, (pthread_mutex_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_mutex_lock, (pthread_mutex_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_mutex_trylock, (pthread_mutex_t *a), (a))
SHIM_GLIBC_ALIAS(pthread_mutex_unlock, (pthread_mutex_t *a), (a))
