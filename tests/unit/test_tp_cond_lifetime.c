/* SPDX-License-Identifier: MIT */
/*
 * TP condition variable lifetime (POSIX's pthread_cond_destroy example,
 * C++'s condition_variable rule): once every waiter has been woken, the
 * notifier may destroy the condition variable and reuse its memory, while
 * the woken waiters are still on their way back into the mutex.
 *
 * In a loop: WAITERS threads wait on a condition variable; the main thread
 * broadcasts (or signals each), unlocks, destroys it (or destroys it
 * before unlocking: requeued waiters then wait for the mutex) and then
 *   - poisons the memory and, after joining the waiters, checks that
 *     nobody wrote the poison (built with ASan: frees it at once, and
 *     ASan reports a later access), or
 *   - unmaps its page (a later access by a waiter faults).
 * Synchronisation only: the main thread knows every waiter is inside the
 * wait because each registers under the mutex right before waiting.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"

enum { WAITERS = 3, ROUNDS = 200 };
#define POISON 0xa5

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static qlock_tp_cond_t *cv;
static int inside, go;          /* under m */
static bool timed;              /* waiters use timedwait (far deadline) */

static void *waiter(void *arg)
{
	qlock_tp_cond_t *c = cv;
	struct timespec far;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &far);
	far.tv_sec += 3600;
	qlock_tp_mutex_lock(&m);
	inside++;
	while (!go) {
		if (timed)
			(void)qlock_tp_cond_timedwait(c, &m, &far,
						      CLOCK_MONOTONIC);
		else
			qlock_tp_cond_wait(c, &m);
	}
	inside--;
	qlock_tp_mutex_unlock(&m);
	return NULL;
}

/* Wait until every waiter registered (and so released m in its wait). */
static void wait_registered(void)
{
	for (;;) {
		qlock_tp_mutex_lock(&m);
		if (inside == WAITERS)
			return; /* m held */
		qlock_tp_mutex_unlock(&m);
		sched_yield();
	}
}

static bool poisoned(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != POISON)
			return false;
	return true;
}

static void one_round(bool unmap, bool broadcast, bool destroy_locked)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_t t[WAITERS];
	void *mem;

	if (unmap) {
		mem = mmap(NULL, page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert(mem != MAP_FAILED);
	} else {
		mem = malloc(sizeof(qlock_tp_cond_t));
		assert(mem);
	}
	cv = mem;
	qlock_tp_cond_init(cv);
	go = 0;
	for (int i = 0; i < WAITERS; i++)
		assert(pthread_create(&t[i], NULL, waiter, NULL) == 0);
	wait_registered();
	go = 1;
	if (broadcast) {
		qlock_tp_cond_broadcast(cv);
	} else {
		for (int i = 0; i < WAITERS; i++)
			qlock_tp_cond_signal(cv);
	}
	if (destroy_locked) {
		/* Requeued waiters wait for m, which we hold. */
		qlock_tp_cond_destroy(cv);
		qlock_tp_mutex_unlock(&m);
	} else {
		qlock_tp_mutex_unlock(&m);
		qlock_tp_cond_destroy(cv);
	}
	if (unmap) {
		assert(munmap(mem, page) == 0);
	} else {
#ifdef __SANITIZE_ADDRESS__
		free(mem);
		mem = NULL;
#else
		memset(mem, POISON, sizeof(qlock_tp_cond_t));
#endif
	}
	for (int i = 0; i < WAITERS; i++)
		assert(pthread_join(t[i], NULL) == 0);
	if (!unmap && mem) {
		if (!poisoned(mem, sizeof(qlock_tp_cond_t))) {
			fprintf(stderr, "FAIL: a woken waiter wrote the destroyed "
				"condition variable\n");
			abort();
		}
		free(mem);
	}
}

int main(void)
{
	for (int mode = 0; mode < 16; mode++) {
		bool unmap = mode & 1, broadcast = mode & 2, locked = mode & 8;

		timed = mode & 4;
		for (int r = 0; r < ROUNDS; r++)
			one_round(unmap, broadcast, locked);
		printf("tp_cond lifetime: %s%s, destroy %s the mutex, %s: "
		       "%d rounds clean\n",
		       broadcast ? "broadcast" : "signal each",
		       timed ? " (timed waits)" : "",
		       locked ? "holding" : "after unlocking",
		       unmap ? "unmapped" : "poisoned", ROUNDS);
	}
	return 0;
}
