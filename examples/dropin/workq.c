/* SPDX-License-Identifier: MIT */
/*
 * An ordinary pthread program, with no qlock in its source or its build:
 * producers and consumers on a bounded queue (a pthread mutex and two
 * condition variables), the consumers' tallies in a table under a pthread
 * rwlock.  The pthread drop-in runs these locks on qlock's without
 * recompiling anything.
 *
 * Build, then run with glibc's locks and with qlock's (qlock installed in
 * PREFIX):
 *
 *   cc -O2 -g -o workq workq.c -pthread        # glibc before 2.34: add -ldl
 *   ./workq
 *   PREFIX/bin/qlock-run -- ./workq
 *   PREFIX/bin/qlock-run --stats -- ./workq    # + the most contended locks, on stderr
 *   PREFIX/bin/qlock-run --mutex=qspinlock --rwlock=rwsem -- ./workq
 *   LD_PRELOAD=PREFIX/lib/libqlock-pthread.so ./workq    # without the launcher
 *
 * The first line it prints names the library its pthread_mutex_lock comes
 * from (libc.so.6 or libqlock-pthread.so); exits 1 if an item was lost.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { PRODUCERS = 2, CONSUMERS = 3, ITEMS = 20000, SLOTS = 16 };

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static long queue[SLOTS];
static int head, count, producers_left = PRODUCERS;

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct { long items, sum; } table[CONSUMERS];

static void put(long v)
{
	pthread_mutex_lock(&queue_lock);
	while (count == SLOTS)
		pthread_cond_wait(&not_full, &queue_lock);
	queue[(head + count++) % SLOTS] = v;
	pthread_cond_signal(&not_empty);
	pthread_mutex_unlock(&queue_lock);
}

/* The next item, or 0 once every producer is done and the queue empty. */
static long get(void)
{
	long v = 0;

	pthread_mutex_lock(&queue_lock);
	while (count == 0 && producers_left)
		pthread_cond_wait(&not_empty, &queue_lock);
	if (count) {
		v = queue[head];
		head = (head + 1) % SLOTS;
		count--;
		pthread_cond_signal(&not_full);
	}
	pthread_mutex_unlock(&queue_lock);
	return v;
}

static void *producer(void *arg)
{
	long first = (long)arg;

	for (long v = first; v <= ITEMS; v += PRODUCERS)
		put(v);
	pthread_mutex_lock(&queue_lock);
	if (--producers_left == 0)
		pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&queue_lock);
	return NULL;
}

static void *consumer(void *arg)
{
	long me = (long)arg, v;

	while ((v = get()) != 0) {
		pthread_rwlock_wrlock(&table_lock);
		table[me].items++;
		table[me].sum += v;
		pthread_rwlock_unlock(&table_lock);
	}
	return NULL;
}

/* Which shared object this process's pthread_mutex_lock is from. */
static const char *mutex_provider(void)
{
	Dl_info info;
	void *f = dlsym(RTLD_DEFAULT, "pthread_mutex_lock");
	const char *slash;

	if (!f || !dladdr(f, &info) || !info.dli_fname)
		return "?";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

int main(void)
{
	pthread_t p[PRODUCERS], c[CONSUMERS];
	long items = 0, sum = 0;

	printf("pthread_mutex_lock is from %s\n", mutex_provider());
	for (long i = 0; i < CONSUMERS; i++)
		if (pthread_create(&c[i], NULL, consumer, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < PRODUCERS; i++)
		if (pthread_create(&p[i], NULL, producer, (void *)(i + 1))) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);

	pthread_rwlock_rdlock(&table_lock);
	for (int i = 0; i < CONSUMERS; i++) {
		items += table[i].items;
		sum += table[i].sum;
	}
	pthread_rwlock_unlock(&table_lock);
	printf("workq: %d producers, %d consumers: %ld of %d items, sum %s\n",
	       PRODUCERS, CONSUMERS, items, ITEMS,
	       sum == (long)ITEMS * (ITEMS + 1) / 2 ? "right" : "WRONG");
	return items == ITEMS && sum == (long)ITEMS * (ITEMS + 1) / 2 ? 0 : 1;
}
