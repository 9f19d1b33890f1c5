/* SPDX-License-Identifier: MIT */
/*
 * Realtime readers (POSIX, Thread Execution Scheduling): a SCHED_FIFO or
 * SCHED_RR thread shall get a read lock when no writer holds it and no
 * writer of higher or equal priority is blocked on it (Open POSIX Test
 * Suite pthread_rwlock_rdlock 2-1, 2-2, 2-3).  A reader holds the lock, a
 * SCHED_FIFO writer blocks on it, then a SCHED_FIFO reader of lower,
 * equal or higher priority tries tryrdlock, timedrdlock (deadline already
 * passed) and, when it must succeed, rdlock.  That a reader below or
 * equal to the writer, or an ordinary (SCHED_OTHER) one, waits is checked
 * only with the drop-in, on a PREFER_WRITER_NONRECURSIVE_NP rwlock (the
 * kind that keeps writer preference; glibc's default kind prefers readers,
 * and the drop-in's lets such a reader join the holders).  Only the must-succeed cases print, so
 * the output is the same with and without the drop-in.  Without the
 * privilege for SCHED_FIFO it says "skipped" and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static volatile pid_t writer_tid;

static const char *err(int e)
{
	return e == 0 ? "0" : e == EBUSY ? "EBUSY" : e == ETIMEDOUT ? "ETIMEDOUT" : strerror(e);
}

static int start(pthread_t *t, int policy, int prio, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	struct sched_param sp = { .sched_priority = prio };

	pthread_attr_init(&a);
	if (policy != SCHED_OTHER) {
		pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&a, policy);
		pthread_attr_setschedparam(&a, &sp);
	}
	int e = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return e;
}

static void *writer(void *arg)
{
	(void)arg;
	writer_tid = (pid_t)syscall(SYS_gettid);
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
	return NULL;
}

/* The writer is asleep in wrlock: its task state is S after it said
 * it was about to call it.  Polls /proc (a condition, not a delay). */
static void wait_writer_blocked(void)
{
	char path[64], buf[256];

	while (!writer_tid)
		sched_yield();
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)writer_tid);
	for (;;) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		char *p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
}

struct probe { int must_get; int ry, rt, rl; };

static void *reader(void *arg)
{
	struct probe *p = arg;
	struct timespec past = { 0, 0 };

	p->ry = pthread_rwlock_tryrdlock(&rw);
	if (p->ry == 0)
		pthread_rwlock_unlock(&rw);
	p->rt = pthread_rwlock_timedrdlock(&rw, &past);
	if (p->rt == 0)
		pthread_rwlock_unlock(&rw);
	p->rl = -1;
	if (p->must_get) {
		p->rl = pthread_rwlock_rdlock(&rw);
		if (p->rl == 0)
			pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void watchdog(int sig)
{
	static const char msg[] = "FAIL: a realtime reader blocked in rdlock\n";
	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof msg - 1);
	_exit(1);
}

/* One case: returns 0 when the writer could not be made realtime. */
static int one(const char *name, int wpol, int wprio, int rpol, int rprio,
	       int must_get)
{
	pthread_t w, r;
	struct probe p = { .must_get = must_get };

	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	if (!must_get) /* the kind that keeps writer preference */
		pthread_rwlockattr_setkind_np(&a,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rw, &a);
	pthread_rwlockattr_destroy(&a);
	writer_tid = 0;
	pthread_rwlock_rdlock(&rw);
	if (start(&w, wpol, wprio, writer, NULL) != 0) {
		pthread_rwlock_unlock(&rw);
		return 0;
	}
	wait_writer_blocked();
	alarm(300); /* a bound on a hang, not an expectation */
	start(&r, rpol, rprio, reader, &p);
	pthread_join(r, NULL);
	alarm(0);
	pthread_rwlock_unlock(&rw);
	pthread_join(w, NULL);
	if (must_get)
		printf("%-34s tryrdlock %s, timedrdlock %s, rdlock %s\n", name,
		       err(p.ry), err(p.rt), must_get ? err(p.rl) : "-");
	return must_get ? (p.ry == 0 && p.rt == 0 && p.rl == 0) + 1
			: (p.ry == EBUSY && p.rt == ETIMEDOUT) + 1;
}

int main(void)
{
	int lo = sched_get_priority_min(SCHED_FIFO), ok = 1, r;
	int shim = dlsym(RTLD_DEFAULT, "qlock_pthread_algorithm") != NULL;

	signal(SIGALRM, watchdog);
	r = one("fifo reader above the writer", SCHED_FIFO, lo + 1, SCHED_FIFO, lo + 2, 1);
	if (r == 0) {
		printf("rt_readers: skipped (no permission for SCHED_FIFO)\n");
		return 0;
	}
	ok &= r == 2;
	ok &= one("rr reader above the writer", SCHED_RR, lo + 1, SCHED_RR, lo + 3, 1) == 2;
	ok &= one("fifo reader above a sched_other writer", SCHED_OTHER, 0, SCHED_FIFO, lo, 1) == 2;
	if (shim) {
		ok &= one("below", SCHED_FIFO, lo + 2, SCHED_FIFO, lo + 1, 0) == 2;
		ok &= one("equal", SCHED_FIFO, lo + 1, SCHED_FIFO, lo + 1, 0) == 2;
		ok &= one("ordinary", SCHED_OTHER, 0, SCHED_OTHER, 0, 0) == 2;
	}
	printf("rt_readers: %s\n", ok ? "ok" : "FAIL");
	return !ok;
}
