/* SPDX-License-Identifier: MIT */
/*
 * shim_cost: what one uncontended lock+unlock pair costs through the
 * pthread calls (glibc, or the drop-in when run with LD_PRELOAD) and
 * through the library's own TP mutex and rwlock (the drop-in's defaults)
 * in the same process.  Tight loop, best of the rounds, each kind of pair
 * interleaved with the others, twice: first while the process has one
 * thread (glibc's mutex then skips its atomic instructions, and so does
 * the drop-in's), then with a second thread that exists and sleeps (every
 * multi-threaded program: the atomics are back).  Prints one JSON object,
 * ns per pair per phase: {"threads1": {...}, "threads2": {...}}.
 * bench/report/shim_cost.py runs it with and without the drop-in,
 * alternately, and compares (the target: the shim adds at most 1 ns to
 * the library's fast path).
 *
 *	shim_cost [pairs] [rounds]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "qlock/qrwlock.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t prw = PTHREAD_RWLOCK_INITIALIZER;
static qlock_tp_mutex_t qm = QLOCK_TP_MUTEX_INIT;
static qlock_tp_rwlock_t qrw = QLOCK_TP_RWLOCK_INIT;
static qlock_rwlock_t krw = QLOCK_RWLOCK_INIT;
static volatile unsigned data;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

#define PAIRS(n, lock, unlock) do {                                   \
	for (long i_ = 0; i_ < (n); i_++) {                           \
		lock;                                                 \
		data++;                                               \
		unlock;                                               \
	}                                                             \
} while (0)

enum { P_MUTEX, P_RD, P_WR, Q_MUTEX, Q_RD, Q_WR, K_RD, K_WR, NKIND };
static const char *const names[NKIND] = {
	"pthread_mutex", "pthread_rwlock_rd", "pthread_rwlock_wr",
	"tp_mutex", "tp_rwlock_rd", "tp_rwlock_wr", "qrwlock_rd",
	"qrwlock_wr" };

static void run(int kind, long n)
{
	switch (kind) {
	case P_MUTEX:
		PAIRS(n, pthread_mutex_lock(&pm), pthread_mutex_unlock(&pm));
		break;
	case P_RD:
		PAIRS(n, pthread_rwlock_rdlock(&prw), pthread_rwlock_unlock(&prw));
		break;
	case P_WR:
		PAIRS(n, pthread_rwlock_wrlock(&prw), pthread_rwlock_unlock(&prw));
		break;
	case Q_MUTEX:
		PAIRS(n, qlock_tp_mutex_lock(&qm), qlock_tp_mutex_unlock(&qm));
		break;
	case Q_RD:
		PAIRS(n, qlock_tp_rwlock_rdlock(&qrw), qlock_tp_rwlock_rdunlock(&qrw));
		break;
	case Q_WR:
		PAIRS(n, qlock_tp_rwlock_wrlock(&qrw), qlock_tp_rwlock_wrunlock(&qrw));
		break;
	case K_RD:
		PAIRS(n, qlock_read_lock(&krw), qlock_read_unlock(&krw));
		break;
	default:
		PAIRS(n, qlock_write_lock(&krw), qlock_write_unlock(&krw));
		break;
	}
}

/* Best ns per pair of each kind over `rounds` interleaved rounds. */
static void measure(long n, int rounds, double best[NKIND])
{
	for (int k = 0; k < NKIND; k++) {
		best[k] = 1e300;
		run(k, n / 10); /* warm up */
	}
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NKIND; k++) {
			double t = now_ns();

			run(k, n);
			t = (now_ns() - t) / (double)n;
			if (t < best[k])
				best[k] = t;
		}
}

static void print_phase(const char *name, const double best[NKIND])
{
	printf("\"%s\": {", name);
	for (int k = 0; k < NKIND; k++)
		printf("%s\"%s\": %.3f", k ? ", " : "", names[k], best[k]);
	printf("}");
}

/* The second thread: exists, sleeps until main closes the pipe. */
static void *sleeper(void *arg)
{
	char c;

	(void)!read(*(int *)arg, &c, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double one[NKIND], two[NKIND];
	int fds[2];
	pthread_t t;

	if (n <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: shim_cost [pairs] [rounds]\n");
		return 2;
	}
	measure(n, rounds, one);
	if (pipe(fds) != 0 || pthread_create(&t, NULL, sleeper, &fds[0]) != 0) {
		perror("shim_cost: second thread");
		return 1;
	}
	measure(n, rounds, two);
	close(fds[1]);
	pthread_join(t, NULL);
	printf("{");
	print_phase("threads1", one);
	printf(", ");
	print_phase("threads2", two);
	printf("}\n");
	return 0;
}
