/* SPDX-License-Identifier: MIT */
/*
 * libqlock-pthread.so: glibc's pthread mutexes, rwlocks, condition
 * variables and spinlocks, running on qlock's locks.  Load it with
 * LD_PRELOAD (or link it before libc); see docs/pthread-dropin.md.
 *
 * Interposition: every entry point here is an *unversioned* definition.
 * The dynamic linker lets an unversioned definition in an object that
 * comes first in the lookup order satisfy a versioned reference
 * (pthread_cond_wait@GLIBC_2.2.5, @GLIBC_2.3.2, pthread_mutex_trylock@
 * GLIBC_2.34, ...), so one definition interposes every version glibc
 * exports.  glibc's own functions are reached with dlsym(RTLD_NEXT), which
 * returns glibc's default (newest) version.
 *
 * Storage (x86_64 glibc layouts; checked by the static asserts below):
 *
 * pthread_mutex_t (40 bytes, struct __pthread_mutex_s)
 *   0..15        the mutex algorithm (__lock .. __nusers); its lock word
 *                first, 0 = free (qspinlock: 4 bytes; TP mutex: 16 bytes,
 *                word = owner tid | WAITERS, as glibc's __lock/__owner)
 *  16  __kind    glibc's kind, where glibc's initialisers put it:
 *                0 normal, 1 recursive, 2 errorcheck, 3 adaptive (run as
 *                normal).  Any other bit (robust 16, PI 32, PP 64,
 *                pshared 128, or -1 after destroy) means "glibc-owned":
 *                every call goes to glibc unchanged.
 *  20  __spins + __elision: recursion count (recursive kind)
 *  24  __list.__prev: 64-bit owner id (pthread_self()) for the
 *                recursive and errorcheck kinds
 *  32  __list.__next (low half): fork generation (see fork_check())
 * pthread_rwlock_t (56 bytes)
 *   0..23        the rwlock algorithm's storage (qrwlock 8 bytes; TP
 *                rwlock 32 bytes whose last 8 are never-written padding)
 *  28  __shared  non-zero = process-shared = glibc-owned
 *  40  __pad2    64-bit id of the writer (pthread_self()), 0 if none
 *  48  __flags   glibc's kind (kept, so the initialisers stay valid)
 * pthread_cond_t (48 bytes)
 *   0            sequence word (futex)
 *   4            waiter count
 *  36  __wrefs   glibc's attribute bits: bit 0 pshared (= glibc-owned),
 *                bit 1 CLOCK_MONOTONIC
 * pthread_spinlock_t (4 bytes): a qlock_spinlock_t.
 *
 * A zeroed object is always qlock-owned: glibc marks what it owns with
 * bits that are never zero.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "adapt.h"
#include "core/atomic.h"
#include "core/futex.h"
#include "core/stats.h"
#include "qlock/qspinlock.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- layouts ----------------------------------------------------------- */

_Static_assert(sizeof(pthread_mutex_t) >= 40, "pthread_mutex_t (40 bytes on x86-64 and s390x, 48 on aarch64)");
_Static_assert(sizeof(pthread_rwlock_t) == 56, "pthread_rwlock_t");
_Static_assert(sizeof(pthread_cond_t) == 48, "pthread_cond_t");
_Static_assert(sizeof(pthread_spinlock_t) == 4, "pthread_spinlock_t");
_Static_assert(sizeof(qlock_spinlock_t) == 4, "qlock_spinlock_t");

struct qm {              /* overlay of pthread_mutex_t */
	uint32_t word[SHIM_MUTEX_BYTES / 4]; /* __lock .. __nusers */
	int32_t kind;    /* __kind */
	uint32_t count;  /* __spins, __elision */
	uint64_t owner;  /* __list.__prev */
	uint32_t gen;    /* __list.__next: fork generation, see fork_check() */
};
_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == offsetof(struct qm, word), "lock");
_Static_assert(offsetof(pthread_mutex_t, __data.__kind) == offsetof(struct qm, kind), "kind");
_Static_assert(offsetof(pthread_mutex_t, __data.__spins) == offsetof(struct qm, count), "count");
_Static_assert(offsetof(pthread_mutex_t, __data.__list) == offsetof(struct qm, owner), "owner");
_Static_assert(sizeof(struct qm) <= sizeof(pthread_mutex_t), "qm size");
_Static_assert(_Alignof(pthread_mutex_t) >= 8, "owner alignment");

struct qrw {                     /* overlay of pthread_rwlock_t */
	uint64_t alg[SHIM_RW_BYTES / 8];
	int32_t cur_writer;      /* __cur_writer: unused, stays 0 */
	int32_t shared;          /* __shared */
	uint64_t pad1;           /* __rwelision, __pad1 */
	uint64_t writer;         /* __pad2 */
	uint32_t flags;          /* __flags */
};
_Static_assert(offsetof(pthread_rwlock_t, __data.__cur_writer) == offsetof(struct qrw, cur_writer), "cur_writer");
_Static_assert(offsetof(pthread_rwlock_t, __data.__shared) == offsetof(struct qrw, shared), "shared");
_Static_assert(offsetof(pthread_rwlock_t, __data.__pad2) == offsetof(struct qrw, writer), "writer");
_Static_assert(offsetof(pthread_rwlock_t, __data.__flags) == offsetof(struct qrw, flags), "flags");

struct qcv {                     /* overlay of pthread_cond_t */
	uint32_t seq;
	uint32_t waiters;
	uint32_t unused[7];
	uint32_t wrefs;          /* __wrefs */
};
_Static_assert(offsetof(pthread_cond_t, __data.__wrefs) == offsetof(struct qcv, wrefs), "wrefs");
#define QCV_PSHARED 1u
#define QCV_MONOTONIC 2u

#define MUTEX_KIND_MASK 3
#define MUTEX_ELISION_BITS (256 | 512)
#define MUTEX_NORMAL 0
#define MUTEX_RECURSIVE 1
#define MUTEX_ERRORCHECK 2

/* ---- glibc's functions -------------------------------------------------- */

#define REAL_LIST(X)                                                        \
	X(pthread_mutex_init, int, (pthread_mutex_t *, const pthread_mutexattr_t *)) \
	X(pthread_mutex_destroy, int, (pthread_mutex_t *))                   \
	X(pthread_mutex_lock, int, (pthread_mutex_t *))                      \
	X(pthread_mutex_trylock, int, (pthread_mutex_t *))                   \
	X(pthread_mutex_timedlock, int, (pthread_mutex_t *, const struct timespec *)) \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(pthread_mutex_unlock, int, (pthread_mutex_t *))                    \
	X(pthread_rwlock_init, int, (pthread_rwlock_t *, const pthread_rwlockattr_t *)) \
	X(pthread_rwlock_destroy, int, (pthread_rwlock_t *))                 \
	X(pthread_rwlock_rdlock, int, (pthread_rwlock_t *))                  \
	X(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t *))               \
	X(pthread_rwlock_timedrdlock, int, (pthread_rwlock_t *, const struct timespec *)) \
	X(pthread_rwlock_clockrdlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_wrlock, int, (pthread_rwlock_t *))                  \
	X(pthread_rwlock_trywrlock, int, (pthread_rwlock_t *))               \
	X(pthread_rwlock_timedwrlock, int, (pthread_rwlock_t *, const struct timespec *)) \
	X(pthread_rwlock_clockwrlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_unlock, int, (pthread_rwlock_t *))                  \
	X(pthread_cond_init, int, (pthread_cond_t *, const pthread_condattr_t *)) \
	X(pthread_cond_destroy, int, (pthread_cond_t *))                     \
	X(pthread_cond_wait, int, (pthread_cond_t *, pthread_mutex_t *))     \
	X(pthread_cond_timedwait, int, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *)) \
	X(pthread_cond_clockwait, int, (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(pthread_cond_signal, int, (pthread_cond_t *))                      \
	X(pthread_cond_broadcast, int, (pthread_cond_t *))                   \
	X(pthread_spin_init, int, (pthread_spinlock_t *, int))               \
	X(pthread_spin_destroy, int, (pthread_spinlock_t *))                 \
	X(pthread_spin_lock, int, (pthread_spinlock_t *))                    \
	X(pthread_spin_trylock, int, (pthread_spinlock_t *))                 \
	X(pthread_spin_unlock, int, (pthread_spinlock_t *))

static struct {
#define X(name, ret, args) ret(*name) args;
	REAL_LIST(X)
#undef X
} real;

/* ---- configuration ------------------------------------------------------- */

enum shim_malg shim_malg = MALG_QSPINLOCK;
enum shim_ralg shim_ralg = RALG_GLIBC;
enum shim_salg shim_salg = SALG_QSPINLOCK;

static const char *const malg_names[MALG_NR] = {
	[MALG_GLIBC] = "glibc", [MALG_QSPINLOCK] = "qspinlock", [MALG_TP] = "tp",
};
static const char *const ralg_names[RALG_NR] = {
	[RALG_GLIBC] = "glibc", [RALG_QRWLOCK] = "qrwlock",
	[RALG_RWSEM] = "rwsem", [RALG_TP] = "tp",
};
static const char *const salg_names[SALG_NR] = {
	[SALG_GLIBC] = "glibc", [SALG_QSPINLOCK] = "qspinlock",
};

static bool malg_built(enum shim_malg a)
{
	switch (a) {
	case MALG_GLIBC:
	case MALG_QSPINLOCK:
		return true;
#ifdef SHIM_WITH_TP
	case MALG_TP:
		return true;
#endif
	default:
		return false;
	}
}

static bool ralg_built(enum shim_ralg a)
{
	switch (a) {
	case RALG_GLIBC:
		return true;
#ifdef SHIM_WITH_QRWLOCK
	case RALG_QRWLOCK:
		return true;
#endif
#ifdef SHIM_WITH_RWSEM
	case RALG_RWSEM:
		return true;
#endif
#ifdef SHIM_WITH_TP
	case RALG_TP:
		return true;
#endif
	default:
		return false;
	}
}

/* Defaults: the best algorithm built in (see docs/pthread-dropin.md). */
static enum shim_malg malg_default(void)
{
#ifdef SHIM_WITH_TP
	return MALG_TP;
#else
	return MALG_QSPINLOCK;
#endif
}

static enum shim_ralg ralg_default(void)
{
#if defined(SHIM_WITH_TP)
	return RALG_TP;
#elif defined(SHIM_WITH_RWSEM)
	return RALG_RWSEM;
#elif defined(SHIM_WITH_QRWLOCK)
	return RALG_QRWLOCK;
#else
	return RALG_GLIBC;
#endif
}

static int pick(const char *var, const char *const *names, int nr,
		bool (*built)(int), int dflt)
{
	const char *v = getenv(var);

	if (!v || !*v)
		return dflt;
	for (int i = 0; i < nr; i++)
		if (names[i] && strcmp(v, names[i]) == 0 && built(i))
			return i;
	fprintf(stderr, "libqlock-pthread: %s=%s is not available here; "
		"using %s (choices:", var, v, names[dflt]);
	for (int i = 0; i < nr; i++)
		if (names[i] && built(i))
			fprintf(stderr, " %s", names[i]);
	fprintf(stderr, ")\n");
	return dflt;
}

static bool malg_built_i(int a) { return malg_built((enum shim_malg)a); }
static bool ralg_built_i(int a) { return ralg_built((enum shim_ralg)a); }
static bool salg_built_i(int a) { return a >= 0 && a < SALG_NR; }

static int shim_state; /* 0 = not set up, 1 = being set up, 2 = ready */
static bool shim_stats;

static void print_stats(void);

/*
 * fork(): the child has only the forking thread, but a queued lock may
 * still record waiters of the parent's other threads (a qspinlock tail,
 * the TP mutex's serial word, a SLOW byte, a WAITERS bit); the first
 * child thread to contend would wait behind a ghost forever.  So every
 * fork bumps a generation in the child, each mutex remembers the
 * generation it was last checked in, and the first thread that finds the
 * mutex contended (or unlocks it) in a new generation repairs it: it
 * keeps "held" and drops all waiter state.  The uncontended lock path
 * does not look at it; unlock pays two loads.  Spinlocks (4 bytes) have
 * no room for a generation: re-initialise them in the child.
 */
#define GEN_BUSY UINT32_MAX
static uint32_t shim_forkgen;

static void shim_atfork_child(void)
{
	uint32_t g = shim_forkgen + 1;

	qa_write(&shim_forkgen, g == GEN_BUSY ? 0 : g);
}

static void shim_setup(void)
{
	int expect = 0;

	if (!qa_try_cmpxchg_acquire(&shim_state, &expect, 1)) {
		/* Someone else sets up; dlsym/getenv do not take pthread
		 * locks, so this wait is short and cannot recurse. */
		while (qa_read_acquire(&shim_state) != 2)
			sched_yield();
		return;
	}
#define X(name, ret, args) real.name = (ret(*) args)dlsym(RTLD_NEXT, #name);
	REAL_LIST(X)
#undef X
	shim_malg = (enum shim_malg)pick("QLOCK_MUTEX", malg_names, MALG_NR,
					 malg_built_i, malg_default());
	shim_ralg = (enum shim_ralg)pick("QLOCK_RWLOCK", ralg_names, RALG_NR,
					 ralg_built_i, ralg_default());
	shim_salg = (enum shim_salg)pick("QLOCK_SPIN", salg_names, SALG_NR,
					 salg_built_i, SALG_QSPINLOCK);
	(void)pthread_atfork(NULL, NULL, shim_atfork_child);
	const char *st = getenv("QLOCK_STATS");
	shim_stats = st && *st && strcmp(st, "0") != 0;
	if (shim_stats)
		atexit(print_stats);
	qa_write_release(&shim_state, 2);
}

static inline void ready(void)
{
	if (qa_unlikely(qa_read_acquire(&shim_state) != 2))
		shim_setup();
}

__attribute__((constructor)) static void shim_ctor(void)
{
	ready();
}

/* Which algorithm serves each object class (tests, diagnostics). */
EXPORT const char *qlock_pthread_algorithm(const char *what)
{
	ready();
	if (strcmp(what, "mutex") == 0)
		return malg_names[shim_malg];
	if (strcmp(what, "rwlock") == 0)
		return ralg_names[shim_ralg];
	if (strcmp(what, "spin") == 0)
		return salg_names[shim_salg];
	if (strcmp(what, "cond") == 0)
		return "qlock";
	return NULL;
}

static void print_stats(void)
{
	fprintf(stderr, "libqlock-pthread: mutex=%s rwlock=%s spin=%s\n",
		malg_names[shim_malg], ralg_names[shim_ralg],
		salg_names[shim_salg]);
	for (int c = 0; c < QC_NR_CLASSES; c++) {
		struct qc_class_stats s;
		bool any = false;

		qc_stats_read((enum qc_class)c, &s);
		for (int e = 0; e < QC_NR_EVENTS; e++)
			any |= s.ev[e] != 0;
		for (int o = 0; o < QC_NR_OPS; o++)
			for (int f = 0; f < QC_NR_FX; f++)
				any |= s.fx[o][f] != 0;
		if (!any)
			continue;
		fprintf(stderr, "libqlock-pthread: %-10s", qc_class_name((enum qc_class)c));
		for (int e = 0; e < QC_NR_EVENTS; e++)
			if (s.ev[e])
				fprintf(stderr, " %s=%llu", qc_event_name((enum qc_event)e),
					(unsigned long long)s.ev[e]);
		static const char *const fxn[QC_NR_FX] = { "wait", "wake", "woken" };
		for (int o = 0; o < QC_NR_OPS; o++)
			for (int f = 0; f < QC_NR_FX; f++)
				if (s.fx[o][f])
					fprintf(stderr, " futex_%s[%s]=%llu", fxn[f],
						qc_op_name((enum qc_op)o),
						(unsigned long long)s.fx[o][f]);
		fprintf(stderr, "\n");
	}
}

/* ---- helpers ------------------------------------------------------------ */

static inline uint64_t self_id(void)
{
	return (uint64_t)pthread_self();
}

static inline bool clock_ok(clockid_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC;
}

static inline bool nsec_ok(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

/* ======================================================================
 * Mutexes
 * ====================================================================== */

static inline struct qm *QM(pthread_mutex_t *m) { return (struct qm *)(void *)m; }

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

static __attribute__((noinline)) void mutex_fork_repair(struct qm *q,
							 uint32_t g)
{
	uint32_t cur;

	for (;;) {
		cur = qa_read_acquire(&q->gen);
		if (cur == g)
			return;
		if (cur == GEN_BUSY) {
			sched_yield();
			continue;
		}
		if (qa_try_cmpxchg_acquire(&q->gen, &cur, GEN_BUSY))
			break;
	}
	uint32_t v = qa_read(&q->word[0]), n;
	switch (shim_malg) {
#ifdef SHIM_WITH_TP
	case MALG_TP: /* keep the owner, drop WAITERS and the waiter words */
		do
			n = v & ~QLOCK_TP_WAITERS;
		while (!qa_try_cmpxchg(&q->word[0], &v, n));
		qa_write(&q->word[1], 0); /* serial */
		qa_write(&q->word[2], 0); /* handoff */
		qa_write(&q->word[3], 0); /* nval */
		break;
#endif
	default: /* qspinlock: held (1, or 3 = SLOW) stays held; no tail or pending */
		do
			n = (v & 0xff) ? 1 : 0;
		while (!qa_try_cmpxchg(&q->word[0], &v, n));
		break;
	}
	qa_write_release(&q->gen, g);
}

static inline void mutex_fork_check(struct qm *q)
{
	uint32_t g = qa_read(&shim_forkgen);

	if (qa_unlikely(qa_read_acquire(&q->gen) != g))
		mutex_fork_repair(q, g);
}

/* mode: 0 block, 1 try, 2 timed (clk/abs) */
static inline int mutex_acquire(pthread_mutex_t *m, int mode, clockid_t clk,
				const struct timespec *abs)
{
	struct qm *q = QM(m);
	int kind = q->kind & ~MUTEX_ELISION_BITS;
	uint64_t me = 0;
	int err;

	if (mode == 2 && !clock_ok(clk))
		return EINVAL;
	if (kind & ~MUTEX_KIND_MASK || shim_malg == MALG_GLIBC) {
		switch (mode) {
		case 0: return real.pthread_mutex_lock(m);
		case 1: return real.pthread_mutex_trylock(m);
		default: return real.pthread_mutex_clocklock(m, clk, abs);
		}
	}
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

static inline int mutex_release(pthread_mutex_t *m)
{
	struct qm *q = QM(m);
	int kind = q->kind & ~MUTEX_ELISION_BITS;

	if (kind & ~MUTEX_KIND_MASK || shim_malg == MALG_GLIBC)
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
	ma_unlock(q->word);
	return 0;
}

EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	return mutex_init(m, a);
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	return mutex_destroy(m);
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	ready();
	return mutex_acquire(m, 0, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	ready();
	return mutex_acquire(m, 1, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m,
				   const struct timespec *abs)
{
	ready();
	return mutex_acquire(m, 2, CLOCK_REALTIME, abs);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk,
				   const struct timespec *abs)
{
	ready();
	return mutex_acquire(m, 2, clk, abs);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	ready();
	return mutex_release(m);
}

/* glibc also exports these (GLIBC_2.2.5); old binaries may call them. */
EXPORT int __pthread_mutex_init(pthread_mutex_t *a, const pthread_mutexattr_t *b);
int __pthread_mutex_init(pthread_mutex_t *a, const pthread_mutexattr_t *b)
{
	return pthread_mutex_init(a, b);
}
EXPORT int __pthread_mutex_destroy(pthread_mutex_t *a);
int __pthread_mutex_destroy(pthread_mutex_t *a)
{
	return pthread_mutex_destroy(a);
}
EXPORT int __pthread_mutex_lock(pthread_mutex_t *a);
int __pthread_mutex_lock(pthread_mutex_t *a)
{
	return pthread_mutex_lock(a);
}
EXPORT int __pthread_mutex_trylock(pthread_mutex_t *a);
int __pthread_mutex_trylock(pthread_mutex_t *a)
{
	return pthread_mutex_trylock(a);
}
EXPORT int __pthread_mutex_unlock(pthread_mutex_t *a);
int __pthread_mutex_unlock(pthread_mutex_t *a)
{
	return pthread_mutex_unlock(a);
}

/* ======================================================================
 * Reader-writer locks
 * ====================================================================== */

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

/* ======================================================================
 * Condition variables
 *
 * A sequence word and a waiter count (the design of Rust std's futex
 * condvar): a waiter reads the sequence, counts itself in and unlocks the
 * mutex, then sleeps while the sequence is unchanged; signal/broadcast
 * bump the sequence and wake one/all sleepers, and skip the system call
 * when nobody waits.  The mutex is released and re-acquired through the
 * shim's own unlock/lock, so every mutex kind and algorithm works (and
 * glibc-owned mutexes too).  Spurious wake-ups are possible, as POSIX
 * allows.
 * ====================================================================== */

static inline struct qcv *QCV(pthread_cond_t *c) { return (struct qcv *)(void *)c; }

static inline bool cond_glibc(pthread_cond_t *c)
{
	return (qa_read(&QCV(c)->wrefs) & QCV_PSHARED) != 0;
}

static int sys_futex_wait(uint32_t *w, uint32_t val, clockid_t clk,
			  const struct timespec *abs)
{
	int flags = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;

	if (abs && clk == CLOCK_REALTIME)
		flags |= FUTEX_CLOCK_REALTIME;
	if (syscall(SYS_futex, w, flags, val, abs, NULL,
		    FUTEX_BITSET_MATCH_ANY) == 0)
		return 0;
	return errno == ETIMEDOUT ? ETIMEDOUT : 0;
}

static void sys_futex_wake(uint32_t *w, int nr)
{
	qc_fx_add(QC_CLASS_other, QC_OP_OTHER, QC_FX_WAKE, 1);
	(void)syscall(SYS_futex, w, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, nr,
		      NULL, NULL, 0);
}

struct cond_wait_ctx {
	struct qcv *c;
	pthread_mutex_t *m;
};

/* Cancelled while asleep: leave the waiters and take the mutex back
 * before the caller's cleanup handlers run (as POSIX requires). */
static void cond_cancel_cleanup(void *arg)
{
	struct cond_wait_ctx *x = arg;

	qa_fetch_sub(&x->c->waiters, 1);
	(void)mutex_acquire(x->m, 0, CLOCK_REALTIME, NULL);
}

static int cond_wait_common(pthread_cond_t *c, pthread_mutex_t *m,
			    clockid_t clk, const struct timespec *abs)
{
	struct qcv *q = QCV(c);
	int err, oldtype, r;

	if (abs && (!clock_ok(clk) || !nsec_ok(abs)))
		return EINVAL;
	qc_fx_add(QC_CLASS_other, QC_OP_OTHER, QC_FX_WAIT, 0); /* attach stats now */
	uint32_t seq = qa_read_acquire(&q->seq);
	qa_fetch_add(&q->waiters, 1);
	err = mutex_release(m);
	if (err) {
		qa_fetch_sub(&q->waiters, 1);
		return err;
	}
	if (abs && abs->tv_sec < 0) {
		r = ETIMEDOUT;
	} else {
		struct cond_wait_ctx x = { q, m };

		qc_fx_add(QC_CLASS_other, QC_OP_OTHER, QC_FX_WAIT, 1);
		/* A cancellation point, as glibc's: cancellation is acted on
		 * only while asleep (asynchronous type for the system call
		 * alone), and the cleanup re-takes the mutex. */
		pthread_cleanup_push(cond_cancel_cleanup, &x);
		(void)pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
		r = sys_futex_wait(&q->seq, seq, clk, abs);
		(void)pthread_setcanceltype(oldtype, NULL);
		pthread_cleanup_pop(0);
	}
	qa_fetch_sub(&q->waiters, 1);
	err = mutex_acquire(m, 0, CLOCK_REALTIME, NULL);
	if (err)
		return err; /* e.g. EOWNERDEAD from a glibc robust mutex */
	return r;
}

static inline void cond_wake(pthread_cond_t *c, int nr)
{
	struct qcv *q = QCV(c);

	if (qa_read_acquire(&q->waiters) == 0)
		return;
	qa_fetch_add(&q->seq, 1);
	sys_futex_wake(&q->seq, nr);
}

EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clk = CLOCK_REALTIME;

	ready();
	if (a) {
		(void)pthread_condattr_getpshared(a, &pshared);
		(void)pthread_condattr_getclock(a, &clk);
	}
	if (pshared != PTHREAD_PROCESS_PRIVATE) {
		int err = real.pthread_cond_init(c, a);
		if (!err)
			QCV(c)->wrefs |= QCV_PSHARED;
		return err;
	}
	memset(c, 0, sizeof(*c));
	if (clk == CLOCK_MONOTONIC)
		QCV(c)->wrefs = QCV_MONOTONIC;
	return 0;
}

EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	ready();
	if (cond_glibc(c))
		return real.pthread_cond_destroy(c);
	return 0;
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	ready();
	if (cond_glibc(c))
		return real.pthread_cond_wait(c, m);
	return cond_wait_common(c, m, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abs)
{
	ready();
	if (cond_glibc(c))
		return real.pthread_cond_timedwait(c, m, abs);
	return cond_wait_common(c, m,
		(QCV(c)->wrefs & QCV_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME,
		abs);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clk, const struct timespec *abs)
{
	ready();
	if (cond_glibc(c))
		return real.pthread_cond_clockwait(c, m, clk, abs);
	return cond_wait_common(c, m, clk, abs);
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	ready();
	if (cond_glibc(c))
		return real.pthread_cond_signal(c);
	cond_wake(c, 1);
	return 0;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	ready();
	if (cond_glibc(c))
		return real.pthread_cond_broadcast(c);
	cond_wake(c, INT_MAX);
	return 0;
}

/* ======================================================================
 * Spinlocks
 * ====================================================================== */

static inline qlock_spinlock_t *QS(pthread_spinlock_t *s)
{
	return (qlock_spinlock_t *)(void *)s;
}

EXPORT int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	ready();
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_init(s, pshared);
	qlock_spin_init(QS(s));
	return 0;
}

EXPORT int pthread_spin_destroy(pthread_spinlock_t *s)
{
	(void)s;
	return 0;
}

EXPORT int pthread_spin_lock(pthread_spinlock_t *s)
{
	ready();
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_lock(s);
	qlock_spin_lock(QS(s));
	return 0;
}

EXPORT int pthread_spin_trylock(pthread_spinlock_t *s)
{
	ready();
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_trylock(s);
	return qlock_spin_trylock(QS(s)) ? 0 : EBUSY;
}

EXPORT int pthread_spin_unlock(pthread_spinlock_t *s)
{
	ready();
	if (shim_salg == SALG_GLIBC)
		return real.pthread_spin_unlock(s);
	qlock_spin_unlock(QS(s));
	return 0;
}
