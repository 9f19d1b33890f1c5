/* SPDX-License-Identifier: MIT */
/*
 * pthread_spin_*: a qlock_spinlock_t in the 4 bytes of pthread_spinlock_t.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "lockdep.h"
#include "lockstat.h"
#include "shim.h"

static inline qlock_spinlock_t *QS(pthread_spinlock_t *s)
{
	return (qlock_spinlock_t *)(void *)s;
}

EXPORT int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	ready();
	if (LOCKDEP_ON())
		lockdep_init(s, LD_SPIN, LOCKDEP_PC());
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_init(s, pshared);
	qlock_spin_init(QS(s));
	return 0;
}

EXPORT int pthread_spin_destroy(pthread_spinlock_t *s)
{
	if (LOCKDEP_ON())
		lockdep_destroy(s, LD_SPIN, LOCKDEP_PC(), 0);
	return 0;
}

static int spin_lock(pthread_spinlock_t *s)
{
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_lock(s);
	if (qa_unlikely(shim_stats_on))
		return LOCKSTAT_ACQUIRE(s, LOCKSTAT_SPIN,
			qlock_spin_trylock(QS(s)) ? 0 : EBUSY,
			(qlock_spin_lock(QS(s)), 0));
	qlock_spin_lock(QS(s));
	return 0;
}

EXPORT int pthread_spin_lock(pthread_spinlock_t *s)
{
	ready();
	if (LOCKDEP_ON())
		return LOCKDEP_ACQUIRE(s, LD_SPIN, LD_BLOCK, spin_lock(s));
	return spin_lock(s);
}

static int spin_trylock(pthread_spinlock_t *s)
{
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_trylock(s);
	return shim_qs_trylock(QS(s)) ? 0 : EBUSY;
}

EXPORT int pthread_spin_trylock(pthread_spinlock_t *s)
{
	ready();
	if (LOCKDEP_ON())
		return LOCKDEP_ACQUIRE(s, LD_SPIN, LD_TRY, spin_trylock(s));
	return spin_trylock(s);
}

EXPORT int pthread_spin_unlock(pthread_spinlock_t *s)
{
	ready();
	if (LOCKDEP_ON())
		lockdep_release(s, LD_SPIN, LOCKDEP_PC());
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_unlock(s);
	qlock_spin_unlock(QS(s));
	return 0;
}
