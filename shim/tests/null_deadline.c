/* SPDX-License-Identifier: MIT */
/*
 * A NULL deadline is no deadline, as glibc has it: pthread_mutex_timedlock,
 * pthread_mutex_clocklock, pthread_rwlock_timed{rd,wr}lock and
 * pthread_rwlock_clock{rd,wr}lock with a NULL abstime take a free lock at
 * once and wait for a held one as long as it takes (never ETIMEDOUT, never
 * a crash), for every mutex kind and rwlock preference, process-private
 * and process-shared.  The held cases hand the lock over only once the
 * waiter sleeps in its call (its task state, after it said it is calling):
 * a condition, not a delay.  And the clock's check, where glibc makes it:
 * a mutex's clocklock refuses a bad clock even with NULL; an rwlock's does
 * not look at the clock without a deadline.  Output must be identical with
 * and without the drop-in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *err(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return strerror(e);
	}
}

/* NULL, hidden from the compiler: glibc's header declares the deadline
 * nonnull, its code takes NULL as no deadline, and programs rely on it. */
static const struct timespec *volatile no_deadline;
#define NONE no_deadline

/* The calls under test: how = 0 timed (CLOCK_REALTIME), 1 clock
 * CLOCK_MONOTONIC, 2 clock CLOCK_REALTIME. */
static const char *const hows[] = { "timedlock", "clocklock(MONOTONIC)", "clocklock(REALTIME)" };

static int mutex_call(pthread_mutex_t *m, int how)
{
	switch (how) {
	case 0: return pthread_mutex_timedlock(m, NONE);
	case 1: return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, NONE);
	default: return pthread_mutex_clocklock(m, CLOCK_REALTIME, NONE);
	}
}

static int rw_call(pthread_rwlock_t *r, int wr, int how)
{
	switch (how) {
	case 0: return wr ? pthread_rwlock_timedwrlock(r, NONE)
			  : pthread_rwlock_timedrdlock(r, NONE);
	case 1: return wr ? pthread_rwlock_clockwrlock(r, CLOCK_MONOTONIC, NONE)
			  : pthread_rwlock_clockrdlock(r, CLOCK_MONOTONIC, NONE);
	default: return wr ? pthread_rwlock_clockwrlock(r, CLOCK_REALTIME, NONE)
			   : pthread_rwlock_clockrdlock(r, CLOCK_REALTIME, NONE);
	}
}

/* Is thread `tid` asleep (state S: in the kernel)? */
static int asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int s = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		s = p[2] == 'S';
	fclose(f);
	return s;
}

struct waiter {
	pthread_mutex_t *m;
	pthread_rwlock_t *r;
	int wr, how, result, done;
	pid_t tid, calling;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	int e;

	w->tid = (pid_t)syscall(SYS_gettid);
	/* From here its only sleep is in the lock call. */
	__atomic_store_n(&w->calling, w->tid, __ATOMIC_RELEASE);
	e = w->m ? mutex_call(w->m, w->how) : rw_call(w->r, w->wr, w->how);
	w->result = e;
	if (e == 0) {
		if (w->m)
			pthread_mutex_unlock(w->m);
		else
			pthread_rwlock_unlock(w->r);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start the waiter on a lock the caller holds; return once it sleeps in
 * its call, or has returned (a NULL deadline taken as a past one). */
static void start_waiter(pthread_t *t, struct waiter *w)
{
	pid_t tid;

	pthread_create(t, NULL, waiter_main, w);
	while (!(tid = __atomic_load_n(&w->calling, __ATOMIC_ACQUIRE)))
		usleep(1000);
	while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) && !asleep(tid))
		usleep(1000);
}

static void mutex_kind(const char *name, int type, int pshared)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutexattr_setpshared(&a, pshared);
	for (int how = 0; how < 3; how++) {
		struct waiter w = { .m = &m, .how = how };
		pthread_t t;
		int e;

		pthread_mutex_init(&m, &a);
		e = mutex_call(&m, how);
		printf("mutex %-18s %-21s NULL, free:   %s\n", name, hows[how], err(e));
		if (e == 0) {
			/* Taken: the waiter below finds it held by us. */
			start_waiter(&t, &w);
			printf("mutex %-18s %-21s NULL, held:   %s while held\n", name,
			       hows[how], __atomic_load_n(&w.done, __ATOMIC_ACQUIRE)
			       ? err(w.result) : "waiting");
			pthread_mutex_unlock(&m);
			pthread_join(t, NULL);
			printf("mutex %-18s %-21s NULL, held:   %s after the unlock\n",
			       name, hows[how], err(w.result));
		}
		pthread_mutex_destroy(&m);
	}
	/* The clock is checked first, deadline or not. */
	pthread_mutex_init(&m, &a);
	printf("mutex %-18s clocklock(CPUTIME)    NULL, free:   %s\n", name,
	       err(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, NONE)));
	pthread_mutex_destroy(&m);
	pthread_mutexattr_destroy(&a);
}

static void rw_kind(const char *name, int pref, int pshared)
{
	pthread_rwlockattr_t a;
	pthread_rwlock_t r;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, pref);
	pthread_rwlockattr_setpshared(&a, pshared);
	for (int wr = 0; wr < 2; wr++)
		for (int how = 0; how < 3; how++) {
			struct waiter w = { .r = &r, .wr = wr, .how = how };
			const char *op = wr ? "wr" : "rd";
			pthread_t t;
			int e;

			pthread_rwlock_init(&r, &a);
			e = rw_call(&r, wr, how);
			printf("rwlock %-17s %s %-18s NULL, free:   %s\n", name, op, hows[how], err(e));
			if (e == 0)
				pthread_rwlock_unlock(&r);
			/* Held for writing by us: both wait. */
			pthread_rwlock_wrlock(&r);
			start_waiter(&t, &w);
			printf("rwlock %-17s %s %-18s NULL, held:   %s while held\n", name, op,
			       hows[how], __atomic_load_n(&w.done, __ATOMIC_ACQUIRE)
			       ? err(w.result) : "waiting");
			pthread_rwlock_unlock(&r);
			pthread_join(t, NULL);
			printf("rwlock %-17s %s %-18s NULL, held:   %s after the unlock\n",
			       name, op, hows[how], err(w.result));
			pthread_rwlock_destroy(&r);
		}
	/* No deadline: the clock is not looked at (glibc checks it only
	 * with a deadline). */
	pthread_rwlock_init(&r, &a);
	for (int wr = 0; wr < 2; wr++) {
		int e = wr ? pthread_rwlock_clockwrlock(&r, CLOCK_PROCESS_CPUTIME_ID, NONE)
			   : pthread_rwlock_clockrdlock(&r, CLOCK_PROCESS_CPUTIME_ID, NONE);

		printf("rwlock %-17s %s clocklock(CPUTIME)    NULL, free:   %s\n", name,
		       wr ? "wr" : "rd", err(e));
		if (e == 0)
			pthread_rwlock_unlock(&r);
	}
	pthread_rwlock_destroy(&r);
	pthread_rwlockattr_destroy(&a);
}

int main(void)
{
	static const struct { const char *name; int type; } kinds[] = {
		{ "normal", PTHREAD_MUTEX_NORMAL },
		{ "recursive", PTHREAD_MUTEX_RECURSIVE },
		{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK },
		{ "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP },
	};
	static const struct { const char *name; int pref; } prefs[] = {
		{ "prefer-reader", PTHREAD_RWLOCK_PREFER_READER_NP },
		{ "prefer-writer", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP },
	};

	for (int ps = 0; ps < 2; ps++) {
		int pshared = ps ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE;

		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			char name[32];

			snprintf(name, sizeof name, "%s%s", kinds[i].name, ps ? "/shared" : "");
			mutex_kind(name, kinds[i].type, pshared);
		}
		for (size_t i = 0; i < sizeof(prefs) / sizeof(prefs[0]); i++) {
			char name[32];

			snprintf(name, sizeof name, "%s%s", prefs[i].name, ps ? "/shared" : "");
			rw_kind(name, prefs[i].pref, pshared);
		}
	}
	/* A recursive mutex the caller holds: a NULL-deadline call counts
	 * once more; an errorcheck one: EDEADLK. */
	{
		pthread_mutexattr_t a;
		pthread_mutex_t m;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&m, &a);
		pthread_mutex_lock(&m);
		printf("recursive held by me: timedlock NULL %s\n", err(pthread_mutex_timedlock(&m, NONE)));
		printf("recursive held by me: unlock %s, unlock %s\n",
		       err(pthread_mutex_unlock(&m)), err(pthread_mutex_unlock(&m)));
		pthread_mutex_destroy(&m);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&m, &a);
		pthread_mutex_lock(&m);
		printf("errorcheck held by me: clocklock NULL %s\n",
		       err(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, NONE)));
		pthread_mutex_unlock(&m);
		pthread_mutex_destroy(&m);
		pthread_mutexattr_destroy(&a);
	}
	/* A statically initialised mutex and rwlock. */
	{
		static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;
		static pthread_rwlock_t sr = PTHREAD_RWLOCK_INITIALIZER;

		printf("static mutex: timedlock NULL %s\n", err(pthread_mutex_timedlock(&sm, NONE)));
		pthread_mutex_unlock(&sm);
		printf("static rwlock: timedwrlock NULL %s\n", err(pthread_rwlock_timedwrlock(&sr, NONE)));
		pthread_rwlock_unlock(&sr);
		printf("static rwlock: timedrdlock NULL %s\n", err(pthread_rwlock_timedrdlock(&sr, NONE)));
		pthread_rwlock_unlock(&sr);
	}
	printf("done\n");
	return 0;
}
