/* SPDX-License-Identifier: MIT */
/*
 * pthread_rwlock_*: process-private rwlocks on the algorithm
 * QLOCK_RWLOCK chose; process-shared ones go to glibc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "shim.h"

static inline struct qrw *QRW(pthread_rwlock_t *r) { return (struct qrw *)(void *)r; }

static inline bool rwlock_glibc(pthread_rwlock_t *r)
{
	return shim_ralg == RALG_GLIBC || QRW(r)->shared != 0;
}

static int rwlock_init(pthread_rwlock_t *r, const pthread_rwlockattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE, kind = PTHREAD_RWLOCK_DEFAULT_NP;

	ready();
	if (a) {
		(void)pthread_rwlockattr_getpshared(a, &pshared);
		(void)pthread_rwlockattr_getkind_np(a, &kind);
	}
	if (shim_ralg == RALG_GLIBC || pshared != PTHREAD_PROCESS_PRIVATE) {
		int err = real.pthread_rwlock_init(r, a);
		/* glibc marks a shared rwlock with a non-zero __shared. */
		if (!err && pshared != PTHREAD_PROCESS_PRIVATE && QRW(r)->shared == 0)
			QRW(r)->shared = 1;
		return err;
	}
	memset(r, 0, sizeof(*r));
	QRW(r)->flags = (uint32_t)kind;
	return 0;
}

/* mode: 0 block, 1 try, 2 timed */
static inline int rw_rdlock(pthread_rwlock_t *r, int mode, clockid_t clk,
			    const struct timespec *abs)
{
	struct qrw *q = QRW(r);

	if (rwlock_glibc(r)) {
		switch (mode) {
		case 0: return real.pthread_rwlock_rdlock(r);
		case 1: return real.pthread_rwlock_tryrdlock(r);
		default: return real.pthread_rwlock_clockrdlock(r, clk, abs);
		}
	}
	/* glibc's order: a bad deadline first, then the deadlock check. */
	if (mode == 2 && (!clock_ok(clk) || !nsec_ok(abs)))
		return EINVAL;
	if (mode != 1 && qa_read(&q->writer) == self_id())
		return EDEADLK;
	switch (mode) {
	case 0:
		ra_rdlock(q->alg);
		return 0;
	case 1:
		return ra_tryrdlock(q->alg) ? 0 : EBUSY;
	default:
		if (ra_tryrdlock(q->alg))
			return 0;
		return ra_timedrdlock(q->alg, clk, abs);
	}
}

static inline int rw_wrlock(pthread_rwlock_t *r, int mode, clockid_t clk,
			    const struct timespec *abs)
{
	struct qrw *q = QRW(r);
	int err = 0;

	if (rwlock_glibc(r)) {
		switch (mode) {
		case 0: return real.pthread_rwlock_wrlock(r);
		case 1: return real.pthread_rwlock_trywrlock(r);
		default: return real.pthread_rwlock_clockwrlock(r, clk, abs);
		}
	}
	if (mode == 2 && (!clock_ok(clk) || !nsec_ok(abs)))
		return EINVAL;
	uint64_t me = self_id();
	if (mode != 1 && qa_read(&q->writer) == me)
		return EDEADLK;
	switch (mode) {
	case 0:
		ra_wrlock(q->alg);
		break;
	case 1:
		if (!ra_trywrlock(q->alg))
			return EBUSY;
		break;
	default:
		if (!ra_trywrlock(q->alg))
			err = ra_timedwrlock(q->alg, clk, abs);
		if (err)
			return err;
		break;
	}
	qa_write(&q->writer, me);
	return 0;
}

static inline int rw_unlock(pthread_rwlock_t *r)
{
	struct qrw *q = QRW(r);

	if (rwlock_glibc(r))
		return real.pthread_rwlock_unlock(r);
	if (qa_read(&q->writer) == self_id()) {
		qa_write(&q->writer, 0);
		ra_wrunlock(q->alg);
	} else {
		ra_rdunlock(q->alg);
	}
	return 0;
}

EXPORT int pthread_rwlock_init(pthread_rwlock_t *r, const pthread_rwlockattr_t *a)
{
	return rwlock_init(r, a);
}

EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *r)
{
	ready();
	if (rwlock_glibc(r))
		return real.pthread_rwlock_destroy(r);
	return 0; /* as glibc: nothing to do, no check */
}

EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *r)
{
	ready();
	return rw_rdlock(r, 0, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *r)
{
	ready();
	return rw_rdlock(r, 1, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *r,
				      const struct timespec *abs)
{
	ready();
	return rw_rdlock(r, 2, CLOCK_REALTIME, abs);
}

EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *r, clockid_t clk,
				      const struct timespec *abs)
{
	ready();
	return rw_rdlock(r, 2, clk, abs);
}

EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *r)
{
	ready();
	return rw_wrlock(r, 0, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *r)
{
	ready();
	return rw_wrlock(r, 1, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *r,
				      const struct timespec *abs)
{
	ready();
	return rw_wrlock(r, 2, CLOCK_REALTIME, abs);
}

EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *r, clockid_t clk,
				      const struct timespec *abs)
{
	ready();
	return rw_wrlock(r, 2, clk, abs);
}

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *r)
{
	ready();
	return rw_unlock(r);
}

EXPORT int __pthread_rwlock_init(pthread_rwlock_t *a, const pthread_rwlockattr_t *b);
int __pthread_rwlock_init(pthread_rwlock_t *a, const pthread_rwlockattr_t *b)
{
	return pthread_rwlock_init(a, b);
}
EXPORT int __pthread_rwlock_destroy(pthread_rwlock_t *a);
int __pthread_rwlock_destroy(pthread_rwlock_t *a)
{
	return pthread_rwlock_destroy(a);
}
EXPORT int __pthread_rwlock_rdlock(pthread_rwlock_t *a);
int __pthread_rwlock_rdlock(pthread_rwlock_t *a)
{
	return pthread_rwlock_rdlock(a);
}
EXPORT int __pthread_rwlock_tryrdlock(pthread_rwlock_t *a);
int __pthread_rwlock_tryrdlock(pthread_rwlock_t *a)
{
	return pthread_rwlock_tryrdlock(a);
}
EXPORT int __pthread_rwlock_wrlock(pthread_rwlock_t *a);
int __pthread_rwlock_wrlock(pthread_rwlock_t *a)
{
	return pthread_rwlock_wrlock(a);
}
EXPORT int __pthread_rwlock_trywrlock(pthread_rwlock_t *a);
int __pthread_rwlock_trywrlock(pthread_rwlock_t *a)
{
	return pthread_rwlock_trywrlock(a);
}
EXPORT int __pthread_rwlock_unlock(pthread_rwlock_t *a);
int __pthread_rwlock_unlock(pthread_rwlock_t *a)
{
	return pthread_rwlock_unlock(a);
}

