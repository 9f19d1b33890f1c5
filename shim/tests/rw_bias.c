/* SPDX-License-Identifier: MIT */
/*
 * The drop-in rwlock's read bias keeps glibc's answers (compare.sh: the
 * same output with and without the drop-in).  With the drop-in a default
 * rwlock is biased after its first read, so the reads below go through
 * the table of visible readers.
 *   rw_bias            a reader in another thread holds the lock: trywrlock
 *                      is EBUSY, timedwrlock ETIMEDOUT, tryrdlock and
 *                      rdlock succeed; then the writer gets it; free right
 *                      after the last unlock (500 rounds of a malloc'd
 *                      rwlock: a writer that waits for a reader, then
 *                      destroys and frees it); fork while the forking
 *                      thread holds a read lock: in the child, trywrlock
 *                      is EBUSY until it unlocks, then 0; a read lock
 *                      released by another thread than its reader.
 *   rw_bias ghost      (drop-in only; exit 77 without it) fork while
 *                      another thread holds a biased read lock: the
 *                      child's table has no slot of that thread, so the
 *                      child's writer gets the lock (glibc's counts the
 *                      reader that does not exist there and refuses).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static volatile int state;

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EAGAIN: return "EAGAIN";
	case EDEADLK: return "EDEADLK";
	default: return "other";
	}
}

static void deadline_in_ms(struct timespec *abs, long ms)
{
	clock_gettime(CLOCK_REALTIME, abs);
	abs->tv_nsec += ms * 1000000L;
	while (abs->tv_nsec >= 1000000000L) {
		abs->tv_sec++;
		abs->tv_nsec -= 1000000000L;
	}
}

static void *holder(void *arg)
{
	pthread_rwlock_t *l = arg;

	if (pthread_rwlock_rdlock(l) != 0)
		abort();
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
	if (pthread_rwlock_unlock(l) != 0)
		abort();
	return NULL;
}

static void start_holder(pthread_t *t, pthread_rwlock_t *l)
{
	state = 0;
	pthread_create(t, NULL, holder, l);
	while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
		sched_yield();
}

static void writers_against_reader(void)
{
	struct timespec abs;
	pthread_t t;
	int e;

	/* A first read turns the bias on. */
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	start_holder(&t, &rw);
	printf("trywrlock against a reader: %s\n", err_name(pthread_rwlock_trywrlock(&rw)));
	deadline_in_ms(&abs, 20);
	printf("timedwrlock against a reader: %s\n",
	       err_name(pthread_rwlock_timedwrlock(&rw, &abs)));
	e = pthread_rwlock_tryrdlock(&rw);
	printf("tryrdlock beside the reader: %s\n", err_name(e));
	if (e == 0)
		pthread_rwlock_unlock(&rw);
	e = pthread_rwlock_rdlock(&rw);
	printf("rdlock beside the reader: %s\n", err_name(e));
	if (e == 0)
		pthread_rwlock_unlock(&rw);
	__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	printf("wrlock: %s\n", err_name(pthread_rwlock_wrlock(&rw)));
	pthread_rwlock_unlock(&rw);
	pthread_join(t, NULL);
}

static void *life_reader(void *arg)
{
	pthread_rwlock_t *l = arg;

	if (pthread_rwlock_rdlock(l) != 0)
		abort();
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 100; i++)
		__asm__ __volatile__("" ::: "memory");
	if (pthread_rwlock_unlock(l) != 0) /* l may be freed from here on */
		abort();
	return NULL;
}

static void lifetime(void)
{
	int bad = 0;

	for (int round = 0; round < 500; round++) {
		pthread_rwlock_t *l = malloc(sizeof(*l));
		pthread_t t;

		pthread_rwlock_init(l, NULL);
		pthread_rwlock_rdlock(l);
		pthread_rwlock_unlock(l);
		state = 0;
		pthread_create(&t, NULL, life_reader, l);
		while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
			sched_yield();
		bad += pthread_rwlock_wrlock(l) != 0;
		bad += pthread_rwlock_unlock(l) != 0;
		bad += pthread_rwlock_destroy(l) != 0;
		memset(l, 0xa5, sizeof(*l));
		free(l);
		pthread_join(t, NULL);
	}
	printf("free after the last unlock: %d errors\n", bad);
}

static void fork_own_reader(void)
{
	pid_t pid;
	int st;

	pthread_rwlock_rdlock(&rw);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		printf("child: trywrlock while its read is held: %s\n",
		       err_name(pthread_rwlock_trywrlock(&rw)));
		printf("child: unlock: %s\n", err_name(pthread_rwlock_unlock(&rw)));
		int e = pthread_rwlock_trywrlock(&rw);
		printf("child: trywrlock after: %s\n", err_name(e));
		if (e == 0)
			pthread_rwlock_unlock(&rw);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	pthread_rwlock_unlock(&rw);
	printf("parent: child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* glibc lets another thread release a read lock: a biased one too. */
static void *reader_leaves_it(void *arg)
{
	if (pthread_rwlock_rdlock(arg) != 0)
		abort();
	return NULL;
}

static void foreign_unlock(void)
{
	pthread_t t;

	pthread_create(&t, NULL, reader_leaves_it, &rw);
	pthread_join(t, NULL);
	printf("trywrlock while another thread's read is held: %s\n",
	       err_name(pthread_rwlock_trywrlock(&rw)));
	printf("unlock of that read here: %s\n", err_name(pthread_rwlock_unlock(&rw)));
	int e = pthread_rwlock_trywrlock(&rw);
	printf("trywrlock after: %s\n", err_name(e));
	if (e == 0)
		pthread_rwlock_unlock(&rw);
	e = pthread_rwlock_rdlock(&rw);
	printf("rdlock after: %s\n", err_name(e));
	if (e == 0)
		pthread_rwlock_unlock(&rw);
}

static int ghost(void)
{
	static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_t t;
	pid_t pid;
	int st;

	if (!dlsym(RTLD_DEFAULT, "qlock_set_misuse_handler")) {
		printf("not preloaded: skipped\n");
		return 77;
	}
	pthread_rwlock_rdlock(&l);
	pthread_rwlock_unlock(&l);
	start_holder(&t, &l);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int e = pthread_rwlock_trywrlock(&l);

		printf("child: trywrlock with the parent's reader gone: %s\n",
		       err_name(e));
		if (e == 0)
			e = pthread_rwlock_unlock(&l);
		fflush(stdout);
		_exit(e == 0 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	alarm(120); /* a hang is a failure */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "ghost") == 0)
		return ghost();
	writers_against_reader();
	lifetime();
	fork_own_reader();
	foreign_unlock();
	return 0;
}
