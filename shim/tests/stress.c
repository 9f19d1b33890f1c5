/* SPDX-License-Identifier: MIT */
/*
 * Multi-threaded stress of every pthread lock kind the shim serves:
 * mutexes of each kind (lock, trylock, timedlock), rwlocks (readers check
 * the writers' invariant), spinlocks, and condition variables (a bounded
 * queue with signal, broadcast and timed waits).  Prints final counts,
 * which depend only on the arguments, so runs with and without the shim
 * must print the same.  Exit status 1 on any invariant violation.
 *
 *	stress THREADS ITERATIONS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int nthreads;
static long iters;
static long violations;

static pthread_mutex_t m_kind[4] = {
	PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
	PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
	PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
};
static const char *const kind_name[4] = { "normal", "recursive", "errorcheck", "adaptive" };
static long m_count[4];

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t rw_w = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static long rw_a, rw_b, rw_writes, rw_reads;
static long rww_a, rww_b, rww_writes;

static pthread_spinlock_t spin;
static long spin_count;

#define QCAP 8
static pthread_mutex_t q_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_notempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_notfull = PTHREAD_COND_INITIALIZER;
static long q_buf[QCAP], q_head, q_tail, q_len, q_sum, q_got;

static void bad(const char *what)
{
	__atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "violation: %s\n", what);
}

static struct timespec in_ms(long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ms * 1000000L;
	while (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static void mutex_op(int k, long i)
{
	pthread_mutex_t *m = &m_kind[k];
	int e;

	switch (i % 3) {
	case 0:
		e = pthread_mutex_lock(m);
		break;
	case 1:
		while ((e = pthread_mutex_trylock(m)) == EBUSY)
			sched_yield();
		break;
	default: {
		struct timespec t = in_ms(5000);
		while ((e = pthread_mutex_timedlock(m, &t)) == ETIMEDOUT)
			t = in_ms(5000);
		break;
	}
	}
	if (e)
		bad("mutex lock failed");
	if (k == 1 && pthread_mutex_lock(m) != 0) /* recursive: nest */
		bad("recursive relock");
	if (k == 2 && pthread_mutex_lock(m) != EDEADLK)
		bad("errorcheck relock");
	m_count[k]++;
	if (k == 1 && pthread_mutex_unlock(m) != 0)
		bad("recursive inner unlock");
	if (pthread_mutex_unlock(m) != 0)
		bad("mutex unlock");
}

static void rw_op(pthread_rwlock_t *r, long *a, long *b, long *writes, long i,
		  int self)
{
	if ((i + self) % 4 == 0) {
		int e = (i & 8) ? pthread_rwlock_trywrlock(r) : pthread_rwlock_wrlock(r);
		if (e == EBUSY)
			e = pthread_rwlock_wrlock(r);
		if (e)
			bad("wrlock");
		(*a)++;
		(*writes)++;
		(*b)++;
		pthread_rwlock_unlock(r);
	} else {
		int e;
		if (i & 16) {
			struct timespec t = in_ms(5000);
			while ((e = pthread_rwlock_timedrdlock(r, &t)) == ETIMEDOUT)
				t = in_ms(5000);
		} else {
			e = pthread_rwlock_rdlock(r);
		}
		if (e)
			bad("rdlock");
		if (__atomic_load_n(a, __ATOMIC_RELAXED) != __atomic_load_n(b, __ATOMIC_RELAXED))
			bad("rwlock invariant");
		__atomic_fetch_add(&rw_reads, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(r);
	}
}

static void q_put(long v)
{
	pthread_mutex_lock(&q_m);
	while (q_len == QCAP)
		pthread_cond_wait(&q_notfull, &q_m);
	q_buf[q_tail] = v;
	q_tail = (q_tail + 1) % QCAP;
	q_len++;
	if (v % 7 == 0)
		pthread_cond_broadcast(&q_notempty);
	else
		pthread_cond_signal(&q_notempty);
	pthread_mutex_unlock(&q_m);
}

static int q_get(long *v, long total)
{
	pthread_mutex_lock(&q_m);
	while (q_len == 0 && q_got < total) {
		struct timespec t = in_ms(2);
		int e = pthread_cond_timedwait(&q_notempty, &q_m, &t);
		if (e && e != ETIMEDOUT)
			bad("cond_timedwait");
	}
	if (q_len == 0) {
		pthread_mutex_unlock(&q_m);
		return 0;
	}
	*v = q_buf[q_head];
	q_head = (q_head + 1) % QCAP;
	q_len--;
	q_got++;
	pthread_cond_signal(&q_notfull);
	pthread_mutex_unlock(&q_m);
	return 1;
}

static void *worker(void *arg)
{
	int self = (int)(long)arg;
	long qtotal = (long)(nthreads / 2) * (iters / 4);

	for (long i = 0; i < iters; i++) {
		mutex_op((int)((i + self) % 4), i);
		rw_op(&rw, &rw_a, &rw_b, &rw_writes, i, self);
		rw_op(&rw_w, &rww_a, &rww_b, &rww_writes, i, self);
		pthread_spin_lock(&spin);
		spin_count++;
		pthread_spin_unlock(&spin);
	}
	/* Half the threads produce iters/4 items each, the others consume. */
	if (self % 2 == 0 && self < (nthreads / 2) * 2) {
		for (long i = 1; i <= iters / 4; i++)
			q_put(i);
	} else if (self < (nthreads / 2) * 2) {
		long v, sum = 0;
		while (q_get(&v, qtotal))
			sum += v;
		pthread_mutex_lock(&q_m);
		q_sum += sum;
		pthread_cond_broadcast(&q_notempty); /* wake the others at the end */
		pthread_mutex_unlock(&q_m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	nthreads = atoi(argv[1]);
	iters = atol(argv[2]);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i))
			return 3;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	for (int k = 0; k < 4; k++)
		printf("mutex.%s count %ld\n", kind_name[k], m_count[k]);
	printf("rwlock.default writes %ld a %ld b %ld\n", rw_writes, rw_a, rw_b);
	printf("rwlock.writer_nonrecursive writes %ld a %ld b %ld\n", rww_writes, rww_a, rww_b);
	printf("rwlock reads %ld\n", rw_reads);
	printf("spin count %ld\n", spin_count);
	printf("cond items %ld sum %ld\n", q_got, q_sum);
	printf("violations %ld\n", violations);
	pthread_spin_destroy(&spin);
	free(t);
	return violations ? 1 : 0;
}
