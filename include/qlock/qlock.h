/* SPDX-License-Identifier: MIT */
/*
 * qlock: the Linux kernel's locking algorithms in user space.
 *
 * This header carries what all locks share: the version, the export
 * macro and the spin/park tunables.  Each lock has its own header beside
 * this one (qlock/qspinlock.h, ...); include the ones you use.
 */
#ifndef QLOCK_QLOCK_H
#define QLOCK_QLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version: these three lines are its only source.  CMakeLists.txt
 * reads them for the project version, which the shared library's
 * SONAME, the pkg-config file, the CMake package and lockbench --version
 * take from there.  QLOCK_VERSION_STRING and QLOCK_VERSION_NUMBER
 * (major * 10000 + minor * 100 + patch) describe the header a program was
 * compiled with; qlock_version() the library it runs with.
 */
#define QLOCK_VERSION_MAJOR 0
#define QLOCK_VERSION_MINOR 1
#define QLOCK_VERSION_PATCH 0
#define QLOCK_VERSION_NUMBER \
	(QLOCK_VERSION_MAJOR * 10000 + QLOCK_VERSION_MINOR * 100 + QLOCK_VERSION_PATCH)
#define QLOCK_STRINGIFY_(x) #x
#define QLOCK_STRINGIFY(x) QLOCK_STRINGIFY_(x)
#define QLOCK_VERSION_STRING \
	QLOCK_STRINGIFY(QLOCK_VERSION_MAJOR) "." \
	QLOCK_STRINGIFY(QLOCK_VERSION_MINOR) "." \
	QLOCK_STRINGIFY(QLOCK_VERSION_PATCH)

#if defined(QLOCK_BUILDING) && defined(__GNUC__)
#define QLOCK_API __attribute__((visibility("default")))
#else
#define QLOCK_API
#endif

/* The running library's version, "MAJOR.MINOR.PATCH" (a static string;
 * compare with QLOCK_VERSION_STRING to detect a header/library mismatch). */
QLOCK_API const char *qlock_version(void);

/*
 * Timed calls take an absolute deadline (a struct timespec) on a clock
 * passed as an int: CLOCK_MONOTONIC or CLOCK_REALTIME.  POSIX's clockid_t
 * is that int; the headers say int because strict ISO modes (-std=c99,
 * -std=c11 without a POSIX feature macro) hide clockid_t, and C99 also
 * struct timespec, and every qlock header must compile there.
 */
struct timespec;

/*
 * Tunables of the shared spin-then-park policy.  Every sleeping path
 * spins a bounded number of times, then sleeps on a futex.  Defaults can
 * be overridden at start-up by the environment variable named beside each
 * one, or at run time by qlock_tune_set().
 */
enum qlock_tunable {
	/* QLOCK_SPIN_LIMIT: the most cpu_relax() iterations a waiter spins
	 * before sleeping (default 512, 0 = sleep at once). */
	QLOCK_TUNE_SPIN_LIMIT,
	/* QLOCK_HANDOFF_NS: how long a waiter may be passed over by lock
	 * stealers before the lock is handed to it (default 4000000 = 4 ms,
	 * the kernel rwsem's RWSEM_WAIT_TIMEOUT). */
	QLOCK_TUNE_HANDOFF_NS,
	/* QLOCK_OWNER_SPIN_NS: how long a waiter spins on a lock owner that
	 * may be running before it sleeps (default 20000 = 20 us). */
	QLOCK_TUNE_OWNER_SPIN_NS,
	/* QLOCK_POLL_MAX: the longest gap, in cpu_relax() iterations, between
	 * two reads of a held lock word by the TP mutex's spinning top
	 * waiter; the gap
	 * starts at 8 and doubles while the word does not change (default
	 * 1024, at least 8). */
	QLOCK_TUNE_POLL_MAX,
	/* QLOCK_SPIN_ADAPT: 1 (default): each thread learns its spin budget
	 * within QLOCK_SPIN_LIMIT, halving it after a wait whose spin ran out
	 * and doubling it after one that ended while spinning, so waiters
	 * stop spinning while holders are preempted (a busy machine); 0: every
	 * wait spins QLOCK_SPIN_LIMIT times. */
	QLOCK_TUNE_SPIN_ADAPT,
	QLOCK_TUNE_NR
};

/* Set a tunable; returns 0, or EINVAL for an unknown tunable or a
 * negative value. */
QLOCK_API int qlock_tune_set(enum qlock_tunable t, long value);
/* Current value of a tunable, or -1 for an unknown one. */
QLOCK_API long qlock_tune_get(enum qlock_tunable t);

/*
 * Queued locks give each thread a small integer slot on first use.  This
 * is how many threads can use queued locks at the same time (compile-time
 * QLOCK_MAX_THREADS, lowered at start-up by the environment variable
 * QLOCK_MAX_THREADS).  Threads beyond it still get every lock, through a
 * slower path that needs no slot.
 */
QLOCK_API int qlock_max_threads(void);

/*
 * Misuse a lock can tell from its own word (unlocking a lock that is not
 * held, unlocking in the wrong mode, unlocking another thread's mutex, ...)
 * is reported to a handler: `fn` is the public function that detected it,
 * `what` says what was wrong, `lock` is the lock's address.
 *
 * The default handler writes one line on stderr ("qlock: fn: what (lock
 * 0x...)") and aborts.  If an installed handler returns, the call that
 * detected the misuse returns without changing the lock (with an error
 * code where the function has one, e.g. EPERM), with one exception:
 * unlocking a mutex or spinlock that another thread holds releases it,
 * as glibc's NORMAL mutex does.  Each lock's header lists what it
 * detects.  The handler may run in any thread that calls the library,
 * also inside signal handlers; it must not use the lock it is told about.
 */
typedef void (*qlock_misuse_fn)(const char *fn, const char *what,
				const void *lock);
/* Install a handler for detected misuse; NULL restores the default.
 * Returns the previous handler (never NULL). */
QLOCK_API qlock_misuse_fn qlock_set_misuse_handler(qlock_misuse_fn fn);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_QLOCK_H */
