/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's single-threaded mutex path (plain load and store while
 * glibc's __libc_single_threaded is true) against its hand-over to the
 * atomic paths: a mutex taken while the process has one thread, then
 * contended by a thread created while it is held (the waiter must sleep
 * on the plainly written word and be woken by the atomic unlock); trylock
 * and errorcheck answers with one thread; the same in fork children
 * (glibc 2.36 leaves __libc_single_threaded false there once the parent
 * had a thread, so those run the atomic paths).  Output must match
 * glibc's (compare.sh).  Under the drop-in, any misuse qlock detects
 * (a word left with another owner, an unlock of a free word: what a
 * wrong plain store would cause) is printed, so the outputs differ.
 *
 *	single_thread [rounds]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter; /* plain: protected by m */
static int contender_tid; /* atomic: set just before it locks */

#define CHECK(c) do {                                                   \
	if (!(c)) {                                                     \
		fprintf(stderr, "single_thread: %s:%d: %s\n", __FILE__, \
			__LINE__, #c);                                  \
		exit(1);                                                \
	}                                                               \
} while (0)

/* qlock's misuse reports (the drop-in counts them silently otherwise). */
static void on_misuse(const char *fn, const char *what, const void *lock)
{
	(void)lock;
	printf("qlock misuse: %s: %s\n", fn, what);
}

static void watch_misuse(void)
{
	typedef void (*misuse_fn)(const char *, const char *, const void *);
	misuse_fn (*set)(misuse_fn) = (misuse_fn (*)(misuse_fn))
		dlsym(RTLD_DEFAULT, "qlock_set_misuse_handler");

	if (set)
		set(on_misuse);
}

/* Is thread `tid` of this process asleep (state S in its stat)? */
static int task_sleeps(int tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the name may hold spaces */
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Waits until the contender sleeps in its lock call (it spins first on
 * qlock's mutex), at most 10 s. */
static void await_contender_asleep(void)
{
	struct timespec t = { 0, 1000000L };
	int tid;

	for (int i = 0; i < 10000; i++) {
		tid = __atomic_load_n(&contender_tid, __ATOMIC_ACQUIRE);
		if (tid && task_sleeps(tid))
			return;
		nanosleep(&t, NULL);
	}
	CHECK(!"the contender never slept on the mutex");
}

/* With one thread: the answers glibc gives. */
static void alone(void)
{
	pthread_mutex_t e;
	pthread_mutexattr_t a;

	for (int i = 0; i < 1000; i++) {
		CHECK(pthread_mutex_lock(&m) == 0);
		counter++;
		CHECK(pthread_mutex_trylock(&m) == EBUSY);
		CHECK(pthread_mutex_unlock(&m) == 0);
	}
	CHECK(pthread_mutex_trylock(&m) == 0);
	CHECK(pthread_mutex_unlock(&m) == 0);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&e, &a);
	CHECK(pthread_mutex_lock(&e) == 0);
	CHECK(pthread_mutex_lock(&e) == EDEADLK);
	CHECK(pthread_mutex_unlock(&e) == 0);
	CHECK(pthread_mutex_unlock(&e) == EPERM);
	pthread_mutex_destroy(&e);
	pthread_mutexattr_destroy(&a);
	printf("one thread: %ld\n", counter);
}

static void *contender(void *arg)
{
	(void)arg;
	__atomic_store_n(&contender_tid, (int)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	CHECK(pthread_mutex_lock(&m) == 0);
	counter++;
	CHECK(pthread_mutex_unlock(&m) == 0);
	return NULL;
}

/* Held from before the first thread exists until it waits on it. */
static void handover(void)
{
	pthread_t t;
	long before;

	CHECK(pthread_mutex_lock(&m) == 0);
	before = counter;
	__atomic_store_n(&contender_tid, 0, __ATOMIC_RELAXED);
	CHECK(pthread_create(&t, NULL, contender, NULL) == 0);
	await_contender_asleep();
	CHECK(counter == before);
	CHECK(pthread_mutex_unlock(&m) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(counter == before + 1);
	printf("handed over: %ld\n", counter - before);
}

/* A fork child has one thread again. */
static void child(void)
{
	pid_t p = fork();
	int st;

	CHECK(p >= 0);
	if (p == 0) {
		alone();
		handover();
		fflush(stdout);
		_exit(0);
	}
	CHECK(waitpid(p, &st, 0) == p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;

	watch_misuse();
	alone();
	handover();
	fflush(stdout);
	for (int i = 0; i < rounds; i++) {
		counter = 0;
		child();
	}
	printf("done\n");
	return 0;
}
