/* SPDX-License-Identifier: MIT */
/*
 * pthread_spin_*: a qlock_spinlock_t in the 4 bytes of pthread_spinlock_t.
 *
 * Process-shared spinlocks: the qspinlock's queue names per-process
 * thread slots and sleeps on private futexes, which mean nothing in
 * another process.  So pthread_spin_init(PTHREAD_PROCESS_SHARED) gives
 * the word a value the qspinlock never holds (QS_FOREIGN + 0..3,
 * lock/qspinlock_fast.h), and the entry points run a
 * test-and-set lock on it instead, the futex mutex of Drepper's "Futexes
 * Are Tricky" (mutex 3) with shared futex calls:
 *
 *   PS_FREE   PS_HELD   PS_SLEEPERS (held, and a waiter may sleep on
 *                                 the word: unlock wakes one)
 *
 *   lock:    cmpxchg FREE -> HELD; failing that spin a while on the word,
 *            then xchg(SLEEPERS) and sleep while it returns non-FREE
 *            (a thread that has slept takes the lock as SLEEPERS: others
 *            may still sleep)
 *   unlock:  xchg(FREE); SLEEPERS before: wake one
 *
 * Both sides are RMWs of the one word, so a sleeper's xchg and an
 * unlocker's xchg are ordered: either the unlocker sees SLEEPERS and
 * wakes, or the sleeper's xchg returns FREE and it owns the lock; the
 * kernel rechecks the value before sleeping.  Only whole-word atomics
 * (so the QLOCK_WORD_ATOMICS_ONLY build runs the same code).
 *
 * The private lock pays for this on its contended paths only: the lock
 * fast path is the qspinlock's own cmpxchg (0 -> 1) inline, whose failed
 * value says which kind of lock it is; trylock and unlock read the word
 * first (the line is already ours or about to be).
 */
#define _GNU_SOURCE
#include <errno.h>

#include "core/misuse.h"
#include "entry.h"
#include "lockdep.h"
#include "shim.h"

#define PS_FREE     QS_FOREIGN
#define PS_HELD     (QS_FOREIGN + 1)
#define PS_SLEEPERS (QS_FOREIGN + 2)
#define PS_SPINS    200 /* reads of a held word before sleeping */

static inline qlock_spinlock_t *QS(pthread_spinlock_t *s)
{
	return (qlock_spinlock_t *)(void *)s;
}

/* The process-shared lock's word: the qspinlock's, under QS_FOREIGN
 * values. */
static inline uint32_t *PS(pthread_spinlock_t *s)
{
	return qs_word(QS(s));
}

static __attribute__((noinline)) void ps_lock(uint32_t *w, uint32_t v)
{
	/* Acquire on every taking RMW: pairs with ps_unlock's release. */
	for (int i = 0; i < PS_SPINS; i++) {
		if (v == PS_FREE && qa_try_cmpxchg_acquire(w, &v, PS_HELD))
			return;
		qa_cpu_relax();
		v = qa_read(w);
	}
	if (v != PS_SLEEPERS)
		v = qa_xchg_acquire(w, PS_SLEEPERS);
	while (v != PS_FREE) {
		(void)shim_futex_wait(w, PS_SLEEPERS, true, CLOCK_REALTIME, NULL);
		v = qa_xchg_acquire(w, PS_SLEEPERS);
	}
}

static __attribute__((noinline)) void ps_unlock(uint32_t *w)
{
	uint32_t v = qa_read(w);

	if (v == PS_FREE) {
		qc_misuse("pthread_spin_unlock", "the lock is not held", w);
		return;
	}
	/* Release: pairs with the next owner's acquiring RMW.  After it
	 * the word may be gone: the wake only names the address. */
	if (qa_xchg_release(w, PS_FREE) == PS_SLEEPERS)
		shim_futex_wake(w, 1, true);
}

static inline bool spin_trylock(pthread_spinlock_t *s)
{
	uint32_t *w = PS(s), v = qa_read(w);

	if (qa_unlikely(qs_is_foreign(v)))
		return v == PS_FREE && qa_try_cmpxchg_acquire(w, &v, PS_HELD);
	return qs_trylock_unless_held(QS(s));
}

static inline void spin_lock(pthread_spinlock_t *s)
{
	uint32_t v = 0;

	/* The qspinlock's fast path; the value found on failure tells a
	 * process-shared lock. */
	if (qa_likely(QS_LOCK_FAST(QS(s), &v)))
		return;
	if (qa_unlikely(qs_is_foreign(v)))
		ps_lock(PS(s), v);
	else
		qlock_spin_lock(QS(s));
}

EXPORT int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	ready();
	if (SHIM_LOCKDEP_ON())
		lockdep_init(s, LD_SPIN, LOCKDEP_PC());
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_init(s, pshared);
	if (pshared == PTHREAD_PROCESS_SHARED)
		qa_write(PS(s), PS_FREE);
	else
		qlock_spin_init(QS(s));
	return 0;
}

EXPORT int pthread_spin_destroy(pthread_spinlock_t *s)
{
	if (SHIM_LOCKDEP_ON())
		lockdep_destroy(s, LD_SPIN, LOCKDEP_PC(), 0);
	return 0;
}

static inline int spin_lock_general(pthread_spinlock_t *s, const void *pc)
{
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_lock(s);
	return SHIM_COUNTED(s, LOCKSTAT_SPIN, pc, spin_trylock(s) ? 0 : EBUSY,
			    (spin_lock(s), 0));
}

EXPORT int pthread_spin_lock(pthread_spinlock_t *s)
{
	return SHIM_LOCK(s, false, LD_SPIN, LD_BLOCK,
			 spin_lock_general(s, SHIM_CALLER()));
}

static inline int spin_trylock_general(pthread_spinlock_t *s)
{
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_trylock(s);
	return spin_trylock(s) ? 0 : EBUSY;
}

EXPORT int pthread_spin_trylock(pthread_spinlock_t *s)
{
	return SHIM_LOCK(s, false, LD_SPIN, LD_TRY, spin_trylock_general(s));
}

static inline int spin_unlock_general(pthread_spinlock_t *s)
{
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_unlock(s);
	SHIM_RELEASED(s);
	if (qa_unlikely(qs_is_foreign(qa_read(PS(s)))))
		ps_unlock(PS(s));
	else
		qlock_spin_unlock(QS(s));
	return 0;
}

EXPORT int pthread_spin_unlock(pthread_spinlock_t *s)
{
	return SHIM_UNLOCK(s, false, LD_SPIN, spin_unlock_general(s));
}
