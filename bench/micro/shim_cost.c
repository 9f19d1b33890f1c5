/* SPDX-License-Identifier: MIT */
/*
 * shim_cost: what one uncontended lock+unlock pair costs through the
 * pthread calls (glibc, or the drop-in when run with LD_PRELOAD) and
 * through the library's own TP mutex and rwlock (the drop-in's defaults)
 * in the same process.  Single thread, tight loop, best of the rounds,
 * each kind of pair interleaved with the others.  Prints one JSON object:
 * ns per pair.  bench/report/shim_cost.py runs it with and without the
 * drop-in, alternately, and compares (issue 15: the shim adds at most
 * 1 ns to the library's fast path).
 *
 *	shim_cost [pairs] [rounds]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double best[NKIND];

	if (n <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: shim_cost [pairs] [rounds]\n");
		return 2;
	}
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
	printf("{");
	for (int k = 0; k < NKIND; k++)
		printf("%s\"%s\": %.3f", k ? ", " : "", names[k], best[k]);
	printf("}\n");
	return 0;
}
