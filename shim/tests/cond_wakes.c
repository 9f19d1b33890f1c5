/* SPDX-License-Identifier: MIT */
/*
 * A signal after the only waiter has been signalled must not make a
 * system call: the waiter is on its way out, nobody sleeps.  Each round
 * a waiter registers, then the main thread, holding the mutex, signals
 * many times before it sets the flag the waiter waits for.  The
 * drop-in's futex counters (cond_wakes.sh) must show no more condvar
 * FUTEX_WAKEs than sleeps.  No timing: the counts hold on any schedule.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS  1000
#define SIGNALS 50

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int waiting, go, done;

static void *waiter(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&m);
		waiting = 1;
		while (!go)
			pthread_cond_wait(&cv, &m);
		go = 0;
		waiting = 0;
		done++;
		pthread_cond_signal(&cv); /* nobody waits: no system call */
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, waiter, NULL))
		return 1;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&m);
		while (!waiting || done != r) { /* registered: it released m */
			pthread_mutex_unlock(&m);
			sched_yield();
			pthread_mutex_lock(&m);
		}
		for (int i = 0; i < SIGNALS; i++)
			pthread_cond_signal(&cv);
		go = 1;
		pthread_mutex_unlock(&m);
	}
	pthread_join(t, NULL);
	printf("%d rounds, %d signals each\n", ROUNDS, SIGNALS);
	return done == ROUNDS ? 0 : 1;
}
