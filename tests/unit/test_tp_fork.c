/* SPDX-License-Identifier: MIT */
/*
 * TP locks held by the forking thread across fork() are the child's: the
 * pthread_atfork pattern (lock in prepare, unlock in the parent and child
 * handlers; the handlers registered after the library's own, so they run
 * after it in the child), the plain one (lock, fork, unlock in the child),
 * two forks deep, a TP condvar waited on in the child with such a mutex,
 * and a TP rwlock write-held across the fork.  No misuse may be reported
 * and every lock must be usable afterwards.  A lock held by another thread
 * of the parent stays another thread's, and one the forking thread held is
 * not a new thread's of the child: their unlock is still misuse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qlock/qlock.h"
#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static qlock_tp_mutex_t atf = QLOCK_TP_MUTEX_INIT;
static qlock_tp_mutex_t other = QLOCK_TP_MUTEX_INIT;
static qlock_tp_mutex_t m2 = QLOCK_TP_MUTEX_INIT; /* unlocked by a new thread */
static qlock_tp_rwlock_t rw = QLOCK_TP_RWLOCK_INIT;
static qlock_tp_cond_t cv = QLOCK_TP_COND_INIT;
static int misuse;

static void on_misuse(const char *fn, const char *what, const void *lock)
{
	(void)lock;
	misuse++;
	fprintf(stderr, "misuse: %s: %s\n", fn, what);
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: watchdog\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static void prepare(void) { qlock_tp_mutex_lock(&atf); }
static void parent(void) { qlock_tp_mutex_unlock(&atf); }
static void child(void) { qlock_tp_mutex_unlock(&atf); }

static void *hold_other(void *arg)
{
	(void)arg;
	qlock_tp_mutex_lock(&other);
	return NULL; /* exits holding it */
}

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
	bad = 1; } } while (0)

static void *unlock_m2(void *arg)
{
	(void)arg;
	qlock_tp_mutex_unlock(&m2);
	return NULL;
}

/* In a child of the thread that held m, m2, atf (by the handler) and rw. */
static int child_side(void)
{
	pthread_t th;
	struct timespec t;
	int bad = 0;

	alarm(300);
	CHECK(qlock_tp_mutex_trylock(&atf)); /* the child handler freed it */
	qlock_tp_mutex_unlock(&atf);
	/* a timed wait on the condvar releases and re-takes m */
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += 1000000;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	CHECK(qlock_tp_cond_timedwait(&cv, &m, &t, CLOCK_MONOTONIC) == ETIMEDOUT);
	CHECK(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
	qlock_tp_mutex_unlock(&m);
	CHECK(qlock_tp_mutex_trylock(&m));
	qlock_tp_mutex_unlock(&m);
	qlock_tp_rwlock_wrunlock(&rw);
	CHECK(qlock_tp_rwlock_trywrlock(&rw));
	qlock_tp_rwlock_wrunlock(&rw);
	CHECK(misuse == 0);
	/* Held by a thread of the parent, not by the forking one. */
	qlock_tp_mutex_unlock(&other);
	CHECK(misuse == 1);
	/* Held by the forking thread, unlocked by a thread of the child. */
	pthread_create(&th, NULL, unlock_m2, NULL);
	pthread_join(th, NULL);
	CHECK(misuse == 2);
	return bad;
}

static int wait_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "FAIL: child status %#x\n", st);
		return 1;
	}
	return 0;
}

int main(void)
{
	pthread_t t;
	pid_t pid;
	int bad = 0;

	signal(SIGALRM, on_alarm);
	alarm(600);
	qlock_set_misuse_handler(on_misuse);
	/* The library registers its handler at its first lock. */
	qlock_tp_mutex_lock(&atf);
	qlock_tp_mutex_unlock(&atf);
	pthread_atfork(prepare, parent, child);
	pthread_create(&t, NULL, hold_other, NULL);
	pthread_join(t, NULL);

	for (int depth = 1; depth <= 2; depth++) {
		qlock_tp_mutex_lock(&m);
		qlock_tp_mutex_lock(&m2);
		qlock_tp_rwlock_wrlock(&rw);
		pid = fork();
		if (pid == 0) {
			if (depth == 2) {
				pid_t g = fork();

				if (g == 0)
					_exit(child_side());
				_exit(wait_child(g));
			}
			_exit(child_side());
		}
		bad |= wait_child(pid);
		qlock_tp_rwlock_wrunlock(&rw);
		qlock_tp_mutex_unlock(&m2);
		qlock_tp_mutex_unlock(&m);
		CHECK(misuse == 0);
	}
	printf("%s\n", bad ? "FAIL" : "ok");
	return bad;
}
