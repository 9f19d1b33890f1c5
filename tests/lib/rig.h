/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the lock test rig (header-only).
 *
 * The generic lock tests (tests/unit/lock_*.c) are each one program that
 * runs its checks for one registered lock, named on the command line:
 *
 *	lock_stress --list         names of every registered lock
 *	lock_stress ticket ttas    run for these locks
 *	lock_stress                run for every registered lock
 *
 * CTest runs it once per lock (see tests/CMakeLists.txt), so a failure
 * names the test kind and the lock, and the message names them again.
 *
 * Work is scaled by QLOCK_TEST_SCALE (a positive factor, default 1) and
 * by a further 1/4 under ThreadSanitizer, which is ~10x slower.
 */
#ifndef QLOCK_TESTS_RIG_H
#define QLOCK_TESTS_RIG_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "lockreg.h"

#if defined(__SANITIZE_THREAD__)
#define RIG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RIG_TSAN 1
#endif
#endif
#ifndef RIG_TSAN
#define RIG_TSAN 0
#endif

/* The lock under test, for failure messages. */
static const char *rig_lock_name = "-";
static const char *rig_kind = "test";

__attribute__((format(printf, 3, 4), noreturn))
static void rig_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s/%s (%s:%d): ", rig_kind, rig_lock_name,
		file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

#define RIG_FAIL(...) rig_fail_at(__FILE__, __LINE__, __VA_ARGS__)
/* Check a condition; on failure print it with the lock's name. */
#define RIG_CHECK(cond, ...) \
	do { if (!(cond)) RIG_FAIL("check `" #cond "` failed: " __VA_ARGS__); } while (0)

/* QLOCK_TEST_SCALE times the sanitizer factor. */
static inline double rig_scale(void)
{
	const char *s = getenv("QLOCK_TEST_SCALE");
	double f = s ? strtod(s, NULL) : 1.0;

	if (!(f > 0))
		f = 1.0;
	return RIG_TSAN ? f / 4 : f;
}

/* n scaled, at least `min`. */
static inline long rig_scaled(long n, long min)
{
	long v = (long)((double)n * rig_scale());

	return v < min ? min : v;
}

/* Online CPUs: thread counts above it oversubscribe. */
static inline int rig_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* An absolute CLOCK_MONOTONIC deadline `ms` from now. */
static inline struct timespec rig_deadline_ms(long ms)
{
	return qc_deadline_in((uint64_t)ms * 1000000u);
}

/* ---- threads ------------------------------------------------------------ */

static inline pthread_t rig_spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);

	if (err)
		RIG_FAIL("pthread_create: %s", strerror(err));
	return t;
}

static inline void *rig_join(pthread_t t)
{
	void *ret;

	pthread_join(t, &ret);
	return ret;
}

/* Run fn(arg) in a new thread and wait for it: "from another thread". */
static inline void rig_in_thread(void *(*fn)(void *), void *arg)
{
	rig_join(rig_spawn(fn, arg));
}

/* ---- driver --------------------------------------------------------------- */

/* Run `one` for each lock named in argv (all when none); --list lists. */
static inline int rig_main(int argc, char **argv, const char *kind,
			   void (*one)(const struct lr_lock *lk))
{
	rig_kind = kind;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		/* One lock a line; pure spinners are marked so CTest runs
		 * them alone (oversubscribed spinners crawl when another
		 * test competes for the CPUs). */
		for (size_t i = 0; i < lr_count(); i++)
			printf("%s%s\n", lr_at(i)->name,
			       lr_at(i)->flags & LR_SPIN_ONLY ? " spin-only" : "");
		return 0;
	}
	for (size_t i = 0; i < (argc > 1 ? (size_t)argc - 1 : lr_count()); i++) {
		const struct lr_lock *lk = argc > 1 ? lr_find(argv[i + 1])
						    : lr_at(i);

		if (!lk) {
			fprintf(stderr, "%s: unknown lock '%s' (try --list)\n",
				argv[0], argv[i + 1]);
			return 2;
		}
		rig_lock_name = lk->name;
		one(lk);
		printf("ok %s/%s\n", kind, lk->name);
	}
	return 0;
}

/* A new lock object for lk, or a failure naming it. */
static inline void *rig_new_lock(const struct lr_lock *lk)
{
	void *l = lr_new(lk);

	if (!l)
		RIG_FAIL("init: %s", strerror(errno));
	return l;
}

#endif /* QLOCK_TESTS_RIG_H */
