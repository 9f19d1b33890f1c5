/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_MUTEX=qspinlock: pthread_mutex_trylock on a mutex nobody holds
 * must not return EBUSY because a waiter holds the pending bit (the
 * qspinlock state (0,1,0): the owner has gone, the pending waiter is
 * about to take it).  EBUSY is right only once that waiter has the lock.
 * The same for pthread_spin_trylock (QLOCK_SPIN=qspinlock, the default).
 *
 * The pending waiter is frozen in a signal handler while the owner
 * unlocks, so the state (0,1,0) lasts; the trylock must then either take
 * the mutex or return EBUSY with the mutex held.  A helper lets the
 * waiter go once the trylock has started, so a trylock that waits for
 * the hand-over finishes.  Run with the drop-in preloaded,
 * QLOCK_MUTEX=qspinlock and a large QLOCK_SPIN_LIMIT (the waiter must
 * still be spinning with pending set when it is frozen); a lock whose
 * algorithm is not qspinlock is skipped.
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
static pthread_spinlock_t sl;
static sem_t in_handler, handler_go, t2_has, t2_may_unlock;
static volatile int trying;

struct lockops {
	const char *name;
	void *obj; /* its qspinlock word is at offset 0 */
	int (*lock)(void *), (*trylock)(void *), (*unlock)(void *);
};
static const struct lockops *ops;

static int m_lock(void *o) { return pthread_mutex_lock(o); }
static int m_trylock(void *o) { return pthread_mutex_trylock(o); }
static int m_unlock(void *o) { return pthread_mutex_unlock(o); }
static int s_lock(void *o) { return pthread_spin_lock(o); }
static int s_trylock(void *o) { return pthread_spin_trylock(o); }
static int s_unlock(void *o) { return pthread_spin_unlock(o); }

static const struct lockops mutex_ops = { "mutex", &m, m_lock, m_trylock, m_unlock };
static const struct lockops spin_ops = { "spin", (void *)&sl, s_lock, s_trylock, s_unlock };

static uint32_t word(void)
{
	return __atomic_load_n((uint32_t *)ops->obj, __ATOMIC_ACQUIRE);
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
	ops->lock(ops->obj);
	sem_post(&t2_has);
	while (sem_wait(&t2_may_unlock) != 0) /* held until main has looked */
		;
	ops->unlock(ops->obj);
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

/* 0 = passed, 1 = failed */
static int run(const struct lockops *o)
{
	pthread_t t2, t4;
	int bad = 0;

	ops = o;
	for (int round = 0; round < 20 && !bad; round++) {
		o->lock(o->obj);
		pthread_create(&t2, NULL, waiter, NULL);
		while (!(word() & PENDING_MASK))
			sched_yield();
		pthread_kill(t2, SIGUSR1);
		sem_wait(&in_handler);
		if (!(word() & PENDING_MASK)) {
			printf("FAIL: %s: the waiter left pending before it was "
			       "frozen (QLOCK_SPIN_LIMIT too small?)\n", o->name);
			return 1;
		}
		o->unlock(o->obj); /* (0,1,1) -> (0,1,0) */
		trying = 0;
		pthread_create(&t4, NULL, releaser, NULL);
		__atomic_store_n(&trying, 1, __ATOMIC_RELEASE);
		int r = o->trylock(o->obj);
		uint32_t w = word();
		if (r == EBUSY && !(w & LOCKED_MASK)) {
			printf("FAIL: %s: round %d: trylock EBUSY while nobody held "
			       "it (word %#x)\n", o->name, round, w);
			bad = 1;
		}
		if (r == 0)
			o->unlock(o->obj);
		pthread_join(t4, NULL);
		sem_wait(&t2_has);
		sem_post(&t2_may_unlock);
		pthread_join(t2, NULL);
	}
	if (!bad)
		printf("trylock_pending: %s: 20 rounds, trylock never failed while "
		       "free\n", o->name);
	return bad;
}

int main(void)
{
	const char *(*alg)(const char *) = (const char *(*)(const char *))
		dlsym(RTLD_DEFAULT, "qlock_pthread_algorithm");
	int bad = 0;

	signal(SIGUSR1, freeze);
	sem_init(&in_handler, 0, 0);
	sem_init(&handler_go, 0, 0);
	sem_init(&t2_has, 0, 0);
	sem_init(&t2_may_unlock, 0, 0);
	pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE);
	if (alg && strcmp(alg("mutex"), "qspinlock") == 0)
		bad |= run(&mutex_ops);
	else
		printf("trylock_pending: mutex skipped (needs QLOCK_MUTEX=qspinlock preloaded)\n");
	if (alg && strcmp(alg("spin"), "qspinlock") == 0)
		bad |= run(&spin_ops);
	else
		printf("trylock_pending: spin skipped (needs QLOCK_SPIN=qspinlock preloaded)\n");
	return bad;
}
