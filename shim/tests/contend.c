/* SPDX-License-Identifier: MIT */
/*
 * An ordinary pthread program with known lock traffic, for qlock-run
 * --stats: THREADS threads take `hot` ITERS times each and `cold` and the
 * rwlock (read) every 100th time; and `waited` is taken once by a thread
 * that certainly blocks: main holds it until that thread sleeps in the
 * kernel (its /proc state says so), then lets go.  Prints the counts it
 * expects the statistics to show.
 *   contend [THREADS [ITERS]]
 * `contend nap` does one thing only: main holds `napped` across usleep(),
 * and the other thread locks it only while main sleeps there, so that the
 * TP mutex's waiter finds its owner off the CPU by its own call (the
 * stats' "off-CPU owners" line); no other lock is held across a yield.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cold = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t waited = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t napped = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static long iters, counter;
static volatile pid_t blocker_tid, main_tid;
static volatile int napper_locking;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&hot);
		counter++;
		pthread_mutex_unlock(&hot);
		if (i % 100 == 0) {
			pthread_mutex_lock(&cold);
			pthread_mutex_unlock(&cold);
			pthread_rwlock_rdlock(&table);
			pthread_rwlock_unlock(&table);
		}
	}
	return NULL;
}

static void *blocker(void *arg)
{
	(void)arg;
	__atomic_store_n(&blocker_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pthread_mutex_lock(&waited);
	pthread_mutex_unlock(&waited);
	return NULL;
}

static int asleep(pid_t tid);

/* Lock `napped` while main sleeps in usleep() holding it. */
static void *napper(void *arg)
{
	(void)arg;
	__atomic_store_n(&blocker_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!asleep(main_tid))
		sched_yield();
	__atomic_store_n(&napper_locking, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&napped);
	pthread_mutex_unlock(&napped);
	return NULL;
}

/* Is thread `tid` asleep (state S: in the kernel, here in futex_wait)? */
static int asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int s = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		s = p[2] == 'S';
	fclose(f);
	return s;
}

/* `napped`, held across usleep() until the napper waits for it. */
static int nap(void)
{
	pthread_t b;

	main_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&napped);
	pthread_create(&b, NULL, napper, NULL);
	while (!__atomic_load_n(&napper_locking, __ATOMIC_ACQUIRE) ||
	       !asleep(__atomic_load_n(&blocker_tid, __ATOMIC_ACQUIRE)))
		usleep(20000); /* long: the napper's look must find us in it */
	pthread_mutex_unlock(&napped);
	pthread_join(b, NULL);
	printf("napped %p 2 contended>=1\n", (void *)&napped);
	return 0;
}

int main(int argc, char **argv)
{
	int nthreads;
	pthread_t t[64], b;

	if (argc > 1 && strcmp(argv[1], "nap") == 0)
		return nap();
	nthreads = argc > 1 ? atoi(argv[1]) : 4;

	iters = argc > 2 ? atol(argv[2]) : 100000;
	if (nthreads < 1 || nthreads > 64 || iters < 1)
		return 2;

	pthread_mutex_lock(&waited);
	pthread_create(&b, NULL, blocker, NULL);
	while (!__atomic_load_n(&blocker_tid, __ATOMIC_ACQUIRE) || !asleep(blocker_tid))
		sched_yield();
	pthread_mutex_unlock(&waited);
	pthread_join(b, NULL);

	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("hot %p %ld\ncold %p %ld\ntable %p %ld\nwaited %p 2 contended>=1\n",
	       (void *)&hot, counter, (void *)&cold, nthreads * ((iters + 99) / 100),
	       (void *)&table, nthreads * ((iters + 99) / 100), (void *)&waited);
	return counter == nthreads * iters ? 0 : 1;
}
