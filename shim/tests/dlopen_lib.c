/* SPDX-License-Identifier: MIT */
/*
 * A library loaded with dlopen() after start: its constructor takes a
 * mutex and runs a thread; dlopenlib_work() counts under every lock kind
 * from several threads.
 */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t sp;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long count, rcount, scount;
static int ctor_ran;

static void *ctor_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	ctor_ran = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return NULL;
}

__attribute__((constructor)) static void dlopenlib_init(void)
{
	pthread_t t;

	pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE);
	pthread_create(&t, NULL, ctor_thread, NULL);
	pthread_mutex_lock(&m);
	while (!ctor_ran)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
}

static long rounds;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&m);
		count++;
		pthread_mutex_unlock(&m);
		pthread_rwlock_wrlock(&rw);
		rcount++;
		pthread_rwlock_unlock(&rw);
		pthread_rwlock_rdlock(&rw);
		pthread_rwlock_unlock(&rw);
		pthread_spin_lock(&sp);
		scount++;
		pthread_spin_unlock(&sp);
	}
	return NULL;
}

__attribute__((visibility("default"))) long dlopenlib_work(int threads, long n)
{
	pthread_t t[16];

	rounds = n;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return ctor_ran && count == rcount && count == scount ? count : -1;
}
