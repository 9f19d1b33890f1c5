/* SPDX-License-Identifier: MIT */
/*
 * The POSIX pthread_cond_destroy example, in a loop: waiters block on a
 * condition variable, the last one to need it broadcasts, unlocks the
 * mutex, destroys the condvar and reuses its memory at once (here: fills
 * it with a poison pattern).  That is legal (POSIX; C++'s
 * condition_variable may be destroyed once every waiter is notified), so
 * the woken waiters must never write the memory again.  Prints the number
 * of rounds whose poison was overwritten; exits 1 if any.
 *
 *	cond_lifetime [ROUNDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAITERS 3
#define POISON 0xa5

static union {
	pthread_cond_t c;
	unsigned char bytes[sizeof(pthread_cond_t)];
} mem;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t round_start, round_end;
static int waiting, go, rounds;

static void *waiter(void *arg)
{
	(void)arg;
	for (int r = 1; r <= rounds; r++) {
		pthread_barrier_wait(&round_start);
		pthread_mutex_lock(&m);
		if (++waiting == WAITERS)
			pthread_cond_signal(&all_in);
		while (go != r)
			pthread_cond_wait(&mem.c, &m);
		pthread_mutex_unlock(&m);
		pthread_barrier_wait(&round_end);
	}
	return NULL;
}

static int poison_intact(void)
{
	for (size_t i = 0; i < sizeof(mem.bytes); i++)
		if (mem.bytes[i] != POISON)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	pthread_t t[WAITERS];
	int bad = 0;

	rounds = argc > 1 ? atoi(argv[1]) : 2000;
	pthread_barrier_init(&round_start, NULL, WAITERS + 1);
	pthread_barrier_init(&round_end, NULL, WAITERS + 1);
	for (int i = 0; i < WAITERS; i++)
		pthread_create(&t[i], NULL, waiter, NULL);
	for (int r = 1; r <= rounds; r++) {
		pthread_cond_init(&mem.c, NULL);
		waiting = 0;
		pthread_barrier_wait(&round_start);
		pthread_mutex_lock(&m);
		while (waiting < WAITERS) /* each released m inside its wait */
			pthread_cond_wait(&all_in, &m);
		go = r;
		pthread_cond_broadcast(&mem.c);
		pthread_mutex_unlock(&m);
		if (pthread_cond_destroy(&mem.c) != 0)
			bad++;
		memset(mem.bytes, POISON, sizeof(mem.bytes));
		pthread_barrier_wait(&round_end);
		bad += !poison_intact();
	}
	for (int i = 0; i < WAITERS; i++)
		pthread_join(t[i], NULL);
	printf("cond_lifetime: %d rounds, poison overwritten (or destroy failed) in %d\n",
	       rounds, bad);
	return bad != 0;
}
