/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_MUTEX=qspinlock: pthread_mutex_trylock on a mutex nobody holds
 * must not return EBUSY because a waiter holds the pending bit (the
 * qspinlock state (0,1,0): the owner has gone, the pending waiter is
 * about to take it).  EBUSY is right only once that waiter has the lock.
 *
 * The pending waiter is frozen in a signal handler while the owner
 * unlocks, so the state (0,1,0) lasts; the trylock must then either take
 * the mutex or return EBUSY with the mutex held.  A helper lets the
 * waiter go once the trylock has started, so a trylock that waits for
 * the hand-over finishes.  Run with the drop-in preloaded,
 * QLOCK_MUTEX=qspinlock and a large QLOCK_SPIN_LIMIT (the waiter must
 * still be spinning with pending set when it is frozen); elsewhere it
 * says "skipped" and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOCKED_MASK 0xffu        /* qspinlock: locked byte, bits 0-7 */
#define PENDING_MASK 0xff00u     /* pending byte (8-bit layout) */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t in_handler, handler_go, t2_has;
static volatile int trying;

static uint32_t word(void)
{
	return __atomic_load_n((uint32_t *)(void *)&m, __ATOMIC_ACQUIRE);
}

static void freeze(int sig)
{
	(void)sig;
	sem_post(&in_handler);
	while (sem_wait(&handler_go) != 0)
		;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	sem_post(&t2_has);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *releaser(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&trying, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < 100; i++) /* give a wrong EBUSY time to show */
		sched_yield();
	sem_post(&handler_go);
	return NULL;
}

int main(void)
{
	const char *(*alg)(const char *) = (const char *(*)(const char *))
		dlsym(RTLD_DEFAULT, "qlock_pthread_algorithm");
	pthread_t t2, t4;
	int bad = 0;

	if (!alg || strcmp(alg("mutex"), "qspinlock") != 0) {
		printf("trylock_pending: skipped (needs QLOCK_MUTEX=qspinlock preloaded)\n");
		return 0;
	}
	signal(SIGUSR1, freeze);
	sem_init(&in_handler, 0, 0);
	sem_init(&handler_go, 0, 0);
	sem_init(&t2_has, 0, 0);
	for (int round = 0; round < 20; round++) {
		pthread_mutex_lock(&m);
		pthread_create(&t2, NULL, waiter, NULL);
		while (!(word() & PENDING_MASK))
			sched_yield();
		pthread_kill(t2, SIGUSR1);
		sem_wait(&in_handler);
		if (!(word() & PENDING_MASK)) {
			printf("FAIL: the waiter left pending before it was frozen "
			       "(QLOCK_SPIN_LIMIT too small?)\n");
			return 1;
		}
		pthread_mutex_unlock(&m); /* (0,1,1) -> (0,1,0) */
		trying = 0;
		pthread_create(&t4, NULL, releaser, NULL);
		__atomic_store_n(&trying, 1, __ATOMIC_RELEASE);
		int r = pthread_mutex_trylock(&m);
		uint32_t w = word();
		if (r == EBUSY && !(w & LOCKED_MASK)) {
			printf("FAIL: round %d: trylock EBUSY while nobody held the "
			       "mutex (word %#x)\n", round, w);
			bad = 1;
		}
		if (r == 0)
			pthread_mutex_unlock(&m);
		pthread_join(t4, NULL);
		sem_wait(&t2_has);
		pthread_join(t2, NULL);
		if (bad)
			return 1;
	}
	printf("trylock_pending: 20 rounds, trylock never failed on a free mutex\n");
	return 0;
}
