/* SPDX-License-Identifier: MIT */
/*
 * Programs with lock-order problems that never deadlock in the run, for
 * the lock-order checker (QLOCK_LOCKDEP; lockdep.sh checks its reports).
 *   lockdep CASE
 * Every case finishes (an alarm() fails it if not) and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t ma, mb, mc;
static pthread_mutex_t sa = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t sb = PTHREAD_MUTEX_INITIALIZER;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "lockdep test: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static NOINLINE void init_locks(void)
{
	check(pthread_mutex_init(&ma, NULL), "init a");
	check(pthread_mutex_init(&mb, NULL), "init b");
	check(pthread_mutex_init(&mc, NULL), "init c");
}

static NOINLINE void take_two(pthread_mutex_t *x, pthread_mutex_t *y)
{
	check(pthread_mutex_lock(x), "lock first");
	check(pthread_mutex_lock(y), "lock second");
	check(pthread_mutex_unlock(y), "unlock second");
	check(pthread_mutex_unlock(x), "unlock first");
}

static NOINLINE void *abba_forward(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "forward");
	check(pthread_mutex_lock(&ma), "lock a");
	check(pthread_mutex_lock(&mb), "lock b");
	check(pthread_mutex_unlock(&mb), "unlock b");
	check(pthread_mutex_unlock(&ma), "unlock a");
	return NULL;
}

static NOINLINE void *abba_backward(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "backward");
	check(pthread_mutex_lock(&mb), "lock b");
	check(pthread_mutex_lock(&ma), "lock a");
	check(pthread_mutex_unlock(&ma), "unlock a");
	check(pthread_mutex_unlock(&mb), "unlock b");
	return NULL;
}

/* One thread, then the other: the orders never meet in time. */
static void run_in_turn(void *(*f)(void *), void *(*g)(void *))
{
	pthread_t t;

	check(pthread_create(&t, NULL, f, NULL), "create");
	check(pthread_join(t, NULL), "join");
	check(pthread_create(&t, NULL, g, NULL), "create");
	check(pthread_join(t, NULL), "join");
}

static void *cyc_ab(void *arg) { (void)arg; take_two(&ma, &mb); return NULL; }
static void *cyc_bc(void *arg) { (void)arg; take_two(&mb, &mc); return NULL; }
static void *cyc_ca(void *arg) { (void)arg; take_two(&mc, &ma); return NULL; }

static NOINLINE void *static_forward(void *arg)
{
	(void)arg;
	take_two(&sa, &sb);
	return NULL;
}

static NOINLINE void *static_backward(void *arg)
{
	(void)arg;
	take_two(&sb, &sa);
	return NULL;
}

/* trylock in the reverse order: it cannot block, so no cycle. */
static NOINLINE void *try_backward(void *arg)
{
	(void)arg;
	check(pthread_mutex_lock(&mb), "lock b");
	if (pthread_mutex_trylock(&ma) == 0)
		check(pthread_mutex_unlock(&ma), "unlock a");
	check(pthread_mutex_unlock(&mb), "unlock b");
	return NULL;
}

static struct timespec soon(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50 * 1000 * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static NOINLINE void self_deadlock(void)
{
	struct timespec ts = soon();
	int err;

	check(pthread_mutex_lock(&ma), "lock a");
	err = pthread_mutex_timedlock(&ma, &ts);
	if (err != ETIMEDOUT) {
		fprintf(stderr, "lockdep test: timedlock of a held mutex: %d\n", err);
		exit(1);
	}
	check(pthread_mutex_unlock(&ma), "unlock a");
	printf("timedlock: ETIMEDOUT\n");
}

static NOINLINE void unlock_unheld(void)
{
	check(pthread_mutex_lock(&ma), "lock a");
	check(pthread_mutex_unlock(&ma), "unlock a");
	(void)pthread_mutex_unlock(&ma); /* not held: glibc returns 0 */
	/* Not a tail call: the report names the caller's return address. */
	__asm__ volatile("" ::: "memory");
}

static void *unlock_a(void *arg)
{
	(void)arg;
	(void)pthread_mutex_unlock(&ma); /* another thread's: reported */
	return NULL;
}

/* Unlocked by another thread, then locked again by its first owner: one
 * report (the foreign unlock), not a self-deadlock. */
static NOINLINE void foreign_unlock(void)
{
	pthread_t t;

	check(pthread_mutex_lock(&ma), "lock a");
	check(pthread_create(&t, NULL, unlock_a, NULL), "create");
	check(pthread_join(t, NULL), "join");
	check(pthread_mutex_lock(&ma), "lock a again");
	check(pthread_mutex_unlock(&ma), "unlock a");
}

/* 60 locks held at once: past the checker's depth (48), said once; the
 * untracked unlocks are not misuse. */
static NOINLINE void deep(void)
{
	static pthread_mutex_t m[60];

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 60; i++) {
			if (round == 0)
				check(pthread_mutex_init(&m[i], NULL), "init");
			check(pthread_mutex_lock(&m[i]), "lock");
		}
		for (int i = 59; i >= 0; i--)
			check(pthread_mutex_unlock(&m[i]), "unlock");
	}
}

static NOINLINE void destroy_held(void)
{
	pthread_mutex_t m;
	pthread_rwlock_t r;

	check(pthread_mutex_init(&m, NULL), "init");
	check(pthread_mutex_lock(&m), "lock");
	printf("destroy: %s\n", pthread_mutex_destroy(&m) == EBUSY ? "EBUSY" : "other");
	check(pthread_mutex_unlock(&m), "unlock");
	check(pthread_mutex_destroy(&m), "destroy");
	check(pthread_rwlock_init(&r, NULL), "rw init");
	check(pthread_rwlock_rdlock(&r), "rdlock");
	(void)pthread_rwlock_destroy(&r);
	check(pthread_rwlock_unlock(&r), "rw unlock");
}

static NOINLINE void rw_recursive_read(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlock_t r;
	struct timespec ts = soon();
	int err;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	check(pthread_rwlock_init(&r, &a), "rw init");
	check(pthread_rwlock_rdlock(&r), "rdlock");
	check(pthread_rwlock_rdlock(&r), "rdlock again"); /* no writer: succeeds */
	check(pthread_rwlock_unlock(&r), "unlock");
	/* the upgrade: times out, as no one else reads */
	err = pthread_rwlock_timedwrlock(&r, &ts);
	printf("upgrade: %s\n", err == ETIMEDOUT ? "ETIMEDOUT" : strerror(err));
	check(pthread_rwlock_unlock(&r), "unlock");
	check(pthread_rwlock_destroy(&r), "rw destroy");
}

/* Consistent orders everywhere: no report. */
static NOINLINE void *clean_worker(void *arg)
{
	pthread_rwlock_t *r = arg;

	for (int i = 0; i < 1000; i++) {
		take_two(&ma, &mb);
		take_two(&mb, &mc);
		check(pthread_rwlock_rdlock(r), "rdlock");
		check(pthread_mutex_lock(&ma), "lock a");
		check(pthread_mutex_unlock(&ma), "unlock a");
		check(pthread_rwlock_unlock(r), "unlock");
		check(pthread_rwlock_rdlock(r), "rdlock");
		check(pthread_rwlock_rdlock(r), "rdlock (recursive, default kind)");
		check(pthread_rwlock_unlock(r), "unlock");
		check(pthread_rwlock_unlock(r), "unlock");
		/* b then a, but by trylock */
		check(pthread_mutex_lock(&mb), "lock b");
		if (pthread_mutex_trylock(&ma) == 0)
			check(pthread_mutex_unlock(&ma), "unlock a");
		check(pthread_mutex_unlock(&mb), "unlock b");
	}
	return NULL;
}

static NOINLINE void clean(void)
{
	pthread_rwlock_t r;
	pthread_mutexattr_t a;
	pthread_mutex_t rec;
	pthread_t t[4];

	check(pthread_rwlock_init(&r, NULL), "rw init");
	for (int i = 0; i < 4; i++)
		check(pthread_create(&t[i], NULL, clean_worker, &r), "create");
	for (int i = 0; i < 4; i++)
		check(pthread_join(t[i], NULL), "join");
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	check(pthread_mutex_init(&rec, &a), "init recursive");
	check(pthread_mutex_lock(&rec), "lock rec");
	check(pthread_mutex_lock(&rec), "lock rec again");
	check(pthread_mutex_unlock(&rec), "unlock rec");
	check(pthread_mutex_unlock(&rec), "unlock rec");
	check(pthread_mutex_destroy(&rec), "destroy rec");
	check(pthread_rwlock_destroy(&r), "rw destroy");
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "lockdep test: still running after 30 s (a hang)\n";
	(void)!write(2, m, sizeof m - 1);
	_exit(3);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	signal(SIGALRM, on_alarm);
	alarm(300);
	init_locks();
	if (strcmp(c, "abba") == 0)
		run_in_turn(abba_forward, abba_backward);
	else if (strcmp(c, "cycle3") == 0) {
		run_in_turn(cyc_ab, cyc_bc);
		run_in_turn(cyc_ca, cyc_ca);
	} else if (strcmp(c, "static") == 0)
		run_in_turn(static_forward, static_backward);
	else if (strcmp(c, "trylock") == 0)
		run_in_turn(abba_forward, try_backward);
	else if (strcmp(c, "self") == 0)
		self_deadlock();
	else if (strcmp(c, "unlock") == 0)
		unlock_unheld();
	else if (strcmp(c, "deep") == 0)
		deep();
	else if (strcmp(c, "foreign") == 0)
		foreign_unlock();
	else if (strcmp(c, "destroy") == 0)
		destroy_held();
	else if (strcmp(c, "rwread") == 0)
		rw_recursive_read();
	else if (strcmp(c, "clean") == 0)
		clean();
	else {
		fprintf(stderr, "usage: lockdep abba|cycle3|static|trylock|self|unlock|foreign|deep|destroy|rwread|clean\n");
		return 2;
	}
	printf("%s: done\n", c);
	return 0;
}
