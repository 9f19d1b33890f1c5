/* SPDX-License-Identifier: MIT */
/*
 * Recursive readers and the reader-count limit of pthread rwlocks.
 *
 *   rw_recursive            a thread holds a read lock, another blocks in
 *                           wrlock, the first reads again (rdlock, tryrdlock,
 *                           timedrdlock): granted with glibc's default kind
 *                           and with PREFER_WRITER_NP; with
 *                           PREFER_WRITER_NONRECURSIVE_NP the try and timed
 *                           forms answer EBUSY / ETIMEDOUT.  The output
 *                           must match glibc's (compare.sh).  A hang is
 *                           turned into a failure by alarm().
 *   rw_recursive overflow   one thread read-locks until the rwlock refuses
 *                           with EAGAIN (the reader count must never wrap):
 *                           then trywrlock is EBUSY, every unlock succeeds,
 *                           and afterwards a writer gets the lock.  Run
 *                           preloaded only (glibc's limit, ~2^29 readers,
 *                           takes too long); exit 77 without the drop-in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_rwlock_t rw;
static volatile pid_t writer_tid;
static volatile int writer_done;

static void *writer(void *arg)
{
	(void)arg;
	writer_tid = gettid();
	if (pthread_rwlock_wrlock(&rw) != 0)
		abort();
	pthread_rwlock_unlock(&rw);
	writer_done = 1;
	return NULL;
}

/* The writer is blocked (sleeping) in wrlock: its task state is S. */
static void wait_writer_blocked(void)
{
	char path[64], buf[256];

	while (writer_tid == 0)
		usleep(1000);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)writer_tid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		char *p = NULL;

		if (f) {
			p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			fclose(f);
		}
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
		usleep(1000);
	}
}

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

static void nested(int kind, const char *name)
{
	pthread_rwlockattr_t a;
	struct timespec abs;
	pthread_t t;
	int held = 1, e;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, kind);
	pthread_rwlock_init(&rw, &a);
	pthread_rwlockattr_destroy(&a);
	writer_tid = 0;
	writer_done = 0;

	if (pthread_rwlock_rdlock(&rw) != 0)
		abort();
	pthread_create(&t, NULL, writer, NULL);
	wait_writer_blocked();

	if (kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) {
		e = pthread_rwlock_rdlock(&rw);
		printf("%s: nested rdlock %s\n", name, err_name(e));
		held += e == 0;
	}
	e = pthread_rwlock_tryrdlock(&rw);
	printf("%s: nested tryrdlock %s\n", name, err_name(e));
	held += e == 0;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 50 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	e = pthread_rwlock_timedrdlock(&rw, &abs);
	printf("%s: nested timedrdlock %s\n", name, err_name(e));
	held += e == 0;
	printf("%s: writer done while read-held: %s\n", name,
	       writer_done ? "yes" : "no");
	while (held--)
		if (pthread_rwlock_unlock(&rw) != 0)
			abort();
	pthread_join(t, NULL);
	printf("%s: writer done after unlock: %s\n", name,
	       writer_done ? "yes" : "no");
	pthread_rwlock_destroy(&rw);
}

static int overflow(void)
{
	const unsigned long cap = 1ul << 26; /* above every limit */
	unsigned long n = 0;
	int e = 0, fails = 0;

	if (!dlsym(RTLD_DEFAULT, "qlock_set_misuse_handler")) {
		printf("not preloaded: skipped\n");
		return 77;
	}
	pthread_rwlock_init(&rw, NULL);
	while (n < cap && (e = pthread_rwlock_rdlock(&rw)) == 0)
		n++;
	printf("rdlock refused after %lu readers: %s\n", n, err_name(e));
	fails += e != EAGAIN;
	e = pthread_rwlock_tryrdlock(&rw);
	printf("tryrdlock at the limit: %s\n", err_name(e));
	fails += e != EAGAIN;
	e = pthread_rwlock_trywrlock(&rw);
	printf("trywrlock while read-held: %s\n", err_name(e));
	fails += e != EBUSY;
	for (unsigned long i = 0; i < n; i++)
		if (pthread_rwlock_unlock(&rw) != 0) {
			printf("unlock %lu failed\n", i);
			return 1;
		}
	e = pthread_rwlock_trywrlock(&rw);
	printf("trywrlock after every unlock: %s\n", err_name(e));
	fails += e != 0;
	if (e == 0)
		fails += pthread_rwlock_unlock(&rw) != 0;
	pthread_rwlock_destroy(&rw);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	alarm(600); /* a hang is a failure */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "overflow") == 0)
		return overflow();
	nested(PTHREAD_RWLOCK_PREFER_READER_NP, "default");
	nested(PTHREAD_RWLOCK_PREFER_WRITER_NP, "prefer-writer");
	nested(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, "nonrecursive");
	return 0;
}
