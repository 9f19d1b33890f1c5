/* SPDX-License-Identifier: MIT */
/*
 * unlock_cost: what one uncontended lock+unlock pair costs with each way
 * of releasing a 32-bit lock word taken by a 32-bit cmpxchg, beside
 * glibc's mutex.  Single thread, tight loop, best of interleaved rounds.
 * It backs the choice of qlock_spin_unlock's release operation
 * (docs/qspinlock.md, "What uncontended unlock costs").
 *
 *	unlock_cost [iterations] [rounds]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/atomic.h"
#include "core/futex.h"

static uint32_t word;

static __attribute__((noinline)) void lock_cmpxchg32(uint32_t *w)
{
	uint32_t z = 0;

	if (!qa_try_cmpxchg_acquire(w, &z, 1))
		abort();
}

static __attribute__((noinline)) void unlock_cmpxchg8(uint32_t *w)
{
	if (qa_u8_cmpxchg_release(w, 0, 1, 0) != 1)
		abort();
}

static __attribute__((noinline)) void unlock_store8(uint32_t *w)
{
	qa_u8_write_release(w, 0, 0);
}

static __attribute__((noinline)) void unlock_cmpxchg32(uint32_t *w)
{
	if (qa_cmpxchg_release(w, 1, 0) != 1)
		abort();
}

static __attribute__((noinline)) void unlock_fetch_sub32(uint32_t *w)
{
	if ((qa_fetch_sub_release(w, 1) & 0xff) != 1)
		abort();
}

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static double time_word(void (*unlock)(uint32_t *), long n)
{
	uint64_t t = qc_now_ns();

	for (long i = 0; i < n; i++) {
		lock_cmpxchg32(&word);
		unlock(&word);
	}
	return (double)(qc_now_ns() - t) / (double)n;
}

static double time_pthread(long n)
{
	uint64_t t = qc_now_ns();

	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	}
	return (double)(qc_now_ns() - t) / (double)n;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*unlock)(uint32_t *);
	} ways[] = {
		{ "cmpxchg32 + byte cmpxchg (kernel pv unlock)", unlock_cmpxchg8 },
		{ "cmpxchg32 + byte store (kernel native unlock)", unlock_store8 },
		{ "cmpxchg32 + cmpxchg32", unlock_cmpxchg32 },
		{ "cmpxchg32 + fetch_sub32 (qlock_spin_unlock)", unlock_fetch_sub32 },
	};
	enum { NWAYS = sizeof(ways) / sizeof(ways[0]) };
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	double best[NWAYS + 1];

	for (int k = 0; k <= NWAYS; k++)
		best[k] = 1e30;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k <= NWAYS; k++) {
			double ns = k < NWAYS ? time_word(ways[k].unlock, n)
					      : time_pthread(n);
			if (ns < best[k])
				best[k] = ns;
		}
	}
	printf("lock+unlock, best of %d interleaved rounds of %ld:\n", rounds, n);
	for (int k = 0; k < NWAYS; k++)
		printf("  %-48s %6.2f ns\n", ways[k].name, best[k]);
	printf("  %-48s %6.2f ns\n", "pthread_mutex_lock + unlock", best[NWAYS]);
	return 0;
}
