/* SPDX-License-Identifier: MIT */
/*
 * Destroying a lock that is held, as glibc answers it: a locked mutex of
 * every kind, process-private and process-shared, taken by lock, trylock,
 * timedlock or clocklock, by the caller or by a thread that has exited,
 * returns EBUSY and stays locked and usable (unlocked, it destroys with 0);
 * a held rwlock (read or write) and a held spinlock destroy with 0 (glibc
 * does not look).  Output must be identical with and without the drop-in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *err(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	default: return strerror(e);
	}
}

static const char *const ways[] = { "lock", "trylock", "timedlock", "clocklock" };

static int take(pthread_mutex_t *m, int way)
{
	struct timespec t;

	switch (way) {
	case 0: return pthread_mutex_lock(m);
	case 1: return pthread_mutex_trylock(m);
	case 2:
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 60;
		return pthread_mutex_timedlock(m, &t);
	default:
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += 60;
		return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &t);
	}
}

static void *hold_and_exit(void *arg)
{
	pthread_mutex_lock(arg);
	return NULL; /* exits holding it */
}

static void mutex_kind(const char *name, int type, int pshared)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	pthread_t t;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutexattr_setpshared(&a, pshared);
	for (int way = 0; way < 4; way++) {
		pthread_mutex_init(&m, &a);
		printf("mutex %-18s %-9s %s", name, ways[way], err(take(&m, way)));
		printf(", destroy %s", err(pthread_mutex_destroy(&m)));
		printf(", trylock %s", err(pthread_mutex_trylock(&m)));
		printf(", unlock %s", err(pthread_mutex_unlock(&m)));
		printf(", destroy %s\n", err(pthread_mutex_destroy(&m)));
	}
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		pthread_mutex_init(&m, &a);
		pthread_mutex_lock(&m);
		pthread_mutex_lock(&m);
		printf("mutex %-18s twice     destroy %s", name, err(pthread_mutex_destroy(&m)));
		printf(", unlock %s", err(pthread_mutex_unlock(&m)));
		printf(", destroy %s", err(pthread_mutex_destroy(&m)));
		printf(", unlock %s", err(pthread_mutex_unlock(&m)));
		printf(", destroy %s\n", err(pthread_mutex_destroy(&m)));
	}
	if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) {
		/* Held by a thread that has gone: still locked. */
		pthread_mutex_init(&m, &a);
		pthread_create(&t, NULL, hold_and_exit, &m);
		pthread_join(t, NULL);
		printf("mutex %-18s other's   destroy %s", name, err(pthread_mutex_destroy(&m)));
		printf(", unlock %s", err(pthread_mutex_unlock(&m)));
		printf(", destroy %s\n", err(pthread_mutex_destroy(&m)));
	}
	/* Free: destroyed with 0, and again (glibc: EINVAL is not promised
	 * for a destroyed mutex, so not asked). */
	pthread_mutex_init(&m, &a);
	printf("mutex %-18s free      destroy %s\n", name, err(pthread_mutex_destroy(&m)));
	pthread_mutexattr_destroy(&a);
}

int main(void)
{
	static const struct { const char *name; int type; } kinds[] = {
		{ "normal", PTHREAD_MUTEX_NORMAL },
		{ "recursive", PTHREAD_MUTEX_RECURSIVE },
		{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK },
		{ "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP },
	};

	for (int ps = 0; ps < 2; ps++)
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			char name[32];

			snprintf(name, sizeof name, "%s%s", kinds[i].name, ps ? "/shared" : "");
			mutex_kind(name, kinds[i].type,
				   ps ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE);
		}
	{
		static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;

		pthread_mutex_lock(&sm);
		printf("static mutex: destroy %s", err(pthread_mutex_destroy(&sm)));
		printf(", unlock %s", err(pthread_mutex_unlock(&sm)));
		printf(", destroy %s\n", err(pthread_mutex_destroy(&sm)));
	}
	/* A held rwlock: glibc's destroy does not look (0). */
	for (int wr = 0; wr < 2; wr++) {
		pthread_rwlock_t r;

		pthread_rwlock_init(&r, NULL);
		if (wr)
			pthread_rwlock_wrlock(&r);
		else
			pthread_rwlock_rdlock(&r);
		printf("rwlock %s-held: destroy %s\n", wr ? "write" : "read",
		       err(pthread_rwlock_destroy(&r)));
	}
	/* A held spinlock: the same. */
	{
		pthread_spinlock_t s;

		pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
		pthread_spin_lock(&s);
		printf("spinlock held: destroy %s\n", err(pthread_spin_destroy(&s)));
	}
	printf("done\n");
	return 0;
}
