/* SPDX-License-Identifier: MIT */
/*
 * fork() in a threaded program: worker threads keep taking a mutex, an
 * rwlock, a spinlock and a condvar while the main thread forks; atfork
 * handlers hold the mutex and the rwlock across fork (the usual pattern).
 * Each child unlocks them in its atfork handler, uses every lock from
 * new threads, and exits 0.  Prints how many children succeeded.
 *
 *	forktest CHILDREN
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rm = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_spinlock_t s;
static long counter, ticks;
static volatile int stop, waiter_done = 1;

/* Hold every lock across fork().  The rwlock is read-locked and the
 * recursive mutex re-initialised in the child: glibc cannot write-unlock
 * or recursive-unlock there (the thread id changed).  The spinlock is
 * re-initialised too (see docs/pthread-dropin.md, fork). */
static void prepare(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_lock(&rm);
	pthread_rwlock_rdlock(&rw);
	pthread_spin_lock(&s);
}
static void parent(void)
{
	pthread_spin_unlock(&s);
	pthread_rwlock_unlock(&rw);
	pthread_mutex_unlock(&rm);
	pthread_mutex_unlock(&m);
}
static void child(void)
{
	pthread_mutexattr_t a;

	pthread_spin_init(&s, 0); /* a queued spinlock may hold parent waiters */
	pthread_rwlock_unlock(&rw);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rm, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutex_unlock(&m);
}

static void *worker(void *arg)
{
	long n = 0;

	(void)arg;
	while (!stop || n < 1000 || !waiter_done) {
		pthread_mutex_lock(&m);
		counter++;
		if (++ticks % 16 == 0)
			pthread_cond_broadcast(&c);
		pthread_mutex_unlock(&m);
		pthread_rwlock_rdlock(&rw);
		pthread_rwlock_unlock(&rw);
		pthread_mutex_lock(&rm);
		pthread_mutex_lock(&rm);
		pthread_mutex_unlock(&rm);
		pthread_mutex_unlock(&rm);
		pthread_spin_lock(&s);
		n++;
		pthread_spin_unlock(&s);
	}
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	long target = ticks + 32;
	while (ticks < target)
		pthread_cond_wait(&c, &m);
	waiter_done = 1;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 20, ok = 0;
	pthread_t w[4];

	pthread_spin_init(&s, 0);
	pthread_atfork(prepare, parent, child);
	for (int i = 0; i < 4; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (int i = 0; i < children; i++) {
		pid_t p = fork();
		if (p == 0) {
			/* Child: only this thread exists; use every lock. */
			pthread_t t[3];
			stop = 1;
			waiter_done = 0;
			ticks = 0;
			for (int j = 0; j < 2; j++)
				pthread_create(&t[j], NULL, worker, NULL);
			pthread_create(&t[2], NULL, waiter, NULL);
			for (int j = 0; j < 3; j++)
				pthread_join(t[j], NULL);
			pthread_mutex_lock(&rm);
			pthread_mutex_unlock(&rm);
			_exit(pthread_mutex_trylock(&m) == 0 ? 0 : 1);
		}
		int st;
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			ok++;
	}
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(w[i], NULL);
	printf("fork children ok %d of %d\n", ok, children);
	return ok == children ? 0 : 1;
}
