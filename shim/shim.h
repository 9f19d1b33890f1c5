/* SPDX-License-Identifier: MIT */
/*
 * libqlock-pthread.so: glibc's pthread mutexes, rwlocks, condition
 * variables and spinlocks, running on qlock's locks.  Load it with
 * LD_PRELOAD (or link it before libc); see docs/pthread-dropin.md.
 *
 * This internal header holds what the entry points share: the overlays
 * of glibc's objects, small helpers and the mutex calls the condition
 * variable uses.  One file per object (mutex.c, rwlock.c, cond.c,
 * spin.c); the shapes of their lock entry points, with the lockdep and
 * statistics hooks, are written once in entry.h.  Below them: config.c
 * (environment, algorithm choice, set-up; config.h), the algorithm
 * adapters (adapt.h), fork.c (fork.h), the diagnostics in doctor/
 * (statistics: exit_report.c, contention.c, profile.c, report.c; lockdep.c,
 * deadlock.c), and at the bottom the process-wide state (state.h), which
 * depends on none of them.
 *
 * Interposition: every entry point here is an *unversioned* definition.
 * The dynamic linker lets an unversioned definition in an object that
 * comes first in the lookup order satisfy a versioned reference
 * (pthread_cond_wait@GLIBC_2.2.5, @GLIBC_2.3.2, pthread_mutex_trylock@
 * GLIBC_2.34, ...), so one definition interposes every version glibc
 * exports.  glibc's own functions are reached with dlsym(RTLD_NEXT), which
 * returns glibc's default (newest) version.
 *
 * Storage: the structs below overlay glibc's objects (x86_64 layouts,
 * checked by their static asserts); pthread_spinlock_t (4 bytes) is a
 * qlock_spinlock_t, or, process-shared, a test-and-set word whose values
 * the qspinlock never holds (spin.c).
 *
 * A zeroed object is always qlock-owned: glibc marks what it owns with
 * bits that are never zero.
 */
#ifndef QLOCK_SHIM_H
#define QLOCK_SHIM_H

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef SHIM_HAVE_SINGLE_THREADED
#include <sys/single_threaded.h>
#endif

#include "adapt.h"
#include "config.h"
#include "core/atomic.h"
#include "core/futex.h"
#include "fork.h"
#include "qlock/qspinlock.h"
#include "state.h"

/* ---- layouts ----------------------------------------------------------- */

_Static_assert(sizeof(pthread_mutex_t) >= 40, "pthread_mutex_t (40 bytes on x86-64 and s390x, 48 on aarch64)");
_Static_assert(sizeof(pthread_rwlock_t) == 56, "pthread_rwlock_t");
_Static_assert(sizeof(pthread_cond_t) == 48, "pthread_cond_t");
_Static_assert(sizeof(pthread_spinlock_t) == 4, "pthread_spinlock_t");
_Static_assert(sizeof(qlock_spinlock_t) == 4, "qlock_spinlock_t");

struct qm {              /* overlay of pthread_mutex_t */
	/* __lock .. __nusers: the mutex algorithm, a qspinlock (4 bytes) or
	 * a TP mutex (16 bytes); all-zero = free. */
	uint32_t word[SHIM_MUTEX_BYTES / 4];
	/* __kind, where glibc's initialisers put it: MUTEX_* (adaptive runs
	 * as normal).  Any other bit (robust 16, PI 32, PP 64, pshared 128,
	 * or -1 after destroy) means glibc-owned: every call goes to glibc
	 * unchanged. */
	int32_t kind;
	uint32_t count;  /* __spins, __elision: the recursive kind's count */
	uint64_t owner;  /* __list.__prev: pthread_self() of a recursive or errorcheck owner */
	uint32_t gen;    /* __list.__next, low half: fork generation (fork.h) */
};
_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == offsetof(struct qm, word), "lock");
_Static_assert(offsetof(pthread_mutex_t, __data.__kind) == offsetof(struct qm, kind), "kind");
_Static_assert(offsetof(pthread_mutex_t, __data.__spins) == offsetof(struct qm, count), "count");
_Static_assert(offsetof(pthread_mutex_t, __data.__list) == offsetof(struct qm, owner), "owner");
_Static_assert(sizeof(struct qm) <= sizeof(pthread_mutex_t), "qm size");
_Static_assert(_Alignof(pthread_mutex_t) >= 8, "owner alignment");

struct qrw {                     /* overlay of pthread_rwlock_t */
	/* The rwlock algorithm (qrwlock 8 bytes; the TP rwlock's and the
	 * rwsem's last 8 bytes lie over the next two fields, adapt.h). */
	uint64_t alg[SHIM_RW_BYTES / 8];
	int32_t cur_writer;      /* __cur_writer: unused, stays 0 */
	int32_t shared;          /* __shared: non-zero = process-shared = glibc-owned */
	/* x86-64 __rwelision, __pad1[0..2]; else __pad1: blocked realtime
	 * writers (count, top priority; rwlock.c) */
	uint32_t rt_writers;
	uint32_t bias;           /* __pad1[3..6]: read bias word (rwlock.c, core/bravo.h) */
	uint64_t writer;         /* __pad2: pthread_self() of a qrwlock or rwsem writer */
	uint32_t flags;          /* __flags: glibc's kind (its initialisers stay valid) */
};
_Static_assert(offsetof(pthread_rwlock_t, __data.__cur_writer) == offsetof(struct qrw, cur_writer), "cur_writer");
_Static_assert(offsetof(pthread_rwlock_t, __data.__shared) == offsetof(struct qrw, shared), "shared");
#ifdef __x86_64__ /* x86-64 names the bytes __rwelision, __pad1[7]; 64-bit generic __pad1 */
_Static_assert(offsetof(pthread_rwlock_t, __data.__rwelision) == offsetof(struct qrw, rt_writers), "rt_writers");
#else
_Static_assert(offsetof(pthread_rwlock_t, __data.__pad1) == offsetof(struct qrw, rt_writers), "rt_writers");
#endif
_Static_assert(offsetof(pthread_rwlock_t, __data.__pad2) == offsetof(struct qrw, writer), "writer");
_Static_assert(offsetof(pthread_rwlock_t, __data.__flags) == offsetof(struct qrw, flags), "flags");

struct qcv {                     /* overlay of pthread_cond_t */
	uint64_t sw;             /* seq (the futex word) and pending (cond.c) */
	uint32_t gen;            /* fork generation of `waiters`, `pending` */
	uint32_t waiters;        /* and DESTROYING (cond.c) */
	uint32_t unused[5];
	uint32_t wrefs;          /* __wrefs: QCV_PSHARED, QCV_MONOTONIC, as glibc's attribute bits */
};
_Static_assert(_Alignof(pthread_cond_t) >= 8, "qcv.sw: 64-bit atomics");
_Static_assert(offsetof(pthread_cond_t, __data.__wrefs) == offsetof(struct qcv, wrefs), "wrefs");
#define QCV_PSHARED 1u
#define QCV_MONOTONIC 2u

#define MUTEX_KIND_MASK 3
#define MUTEX_ELISION_BITS (256 | 512)
#define MUTEX_NORMAL 0
#define MUTEX_RECURSIVE 1
#define MUTEX_ERRORCHECK 2
#define MUTEX_ADAPTIVE 3

/* ---- helpers ------------------------------------------------------------ */

/*
 * Does the process have only this thread?  glibc keeps
 * __libc_single_threaded (2.32 and later) true until the first
 * pthread_create, which clears it before the new thread exists, and its
 * own mutex skips the atomic instructions while it is true: without the
 * same shortcut a single-threaded program's uncontended mutex costs 2.7x
 * glibc's through the drop-in (bench/report/shim_cost.py, "1 thread").
 */
static inline bool shim_single_threaded(void)
{
#ifdef SHIM_HAVE_SINGLE_THREADED
	return qa_unlikely(__libc_single_threaded);
#else
	return false;
#endif
}

static inline bool clock_ok(clockid_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC;
}

static inline bool nsec_ok(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

/* A lock call about to block where the core's futex layer does not see
 * it (the shim's own futex calls, glibc's locks): it counts as a sleep
 * (core/futex.h), so that the statistics time its wait rather than
 * sample it as one that only spun (contention.h). */
static inline void shim_may_sleep(void)
{
	qc_futex_sleeps++;
}

/* futex(2) on a word that may be process-private or process-shared:
 * the private flag only for private objects (a shared object's waiters
 * may sleep in other processes).  wait: 0, or ETIMEDOUT at abs (clk's
 * clock; NULL = no deadline); anything else (EAGAIN, EINTR) is 0. */
static inline int shim_futex_wait(uint32_t *w, uint32_t val, bool shared,
				  clockid_t clk, const struct timespec *abs)
{
	int flags = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);

	shim_may_sleep();

	if (abs && clk == CLOCK_REALTIME)
		flags |= FUTEX_CLOCK_REALTIME;
	if (syscall(SYS_futex, w, flags, val, abs, NULL,
		    FUTEX_BITSET_MATCH_ANY) == 0)
		return 0;
	return errno == ETIMEDOUT ? ETIMEDOUT : 0;
}

static inline void shim_futex_wake(uint32_t *w, int nr, bool shared)
{
	(void)syscall(SYS_futex, w, FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG),
		      nr, NULL, NULL, 0);
}

/* An acquisition glibc serves (mode: 0 block, 1 try, 2 timed): its
 * blocking call `lock`, `try` or `clock` on l. */
#define SHIM_GLIBC_ACQUIRE(l, mode, clk, abs, lock, try, clock)              \
	((mode) == 0 ? (shim_may_sleep(), real.lock(l))                      \
	 : (mode) == 1 ? real.try(l) : real.clock((l), (clk), (abs)))

static inline struct qm *QM(pthread_mutex_t *m) { return (struct qm *)(void *)m; }

/* mode: 0 block, 1 try, 2 timed (clk/abs); the condition variable
 * releases and re-takes its mutex through these (mutex.c). */
int mutex_acquire(pthread_mutex_t *m, int mode, clockid_t clk,
		  const struct timespec *abs);
int mutex_release(pthread_mutex_t *m);

#endif /* QLOCK_SHIM_H */
