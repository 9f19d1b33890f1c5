/* SPDX-License-Identifier: MIT */
/*
 * A mutex held by the forking thread across fork() belongs, in the
 * child, to the child's thread: unlocking it there is not misuse.  The
 * pthread_atfork pattern (lock in prepare, unlock in the parent and child
 * handlers), with the handlers registered after the process first used a
 * lock (so they run after any the lock library registered itself), and
 * the plain pattern (lock, fork, unlock in the child), also two forks
 * deep; three mutex kinds, and with the drop-in a write-held rwlock
 * (which glibc leaves write-locked in the child).  Preloaded, the drop-in's misuse handler is replaced by one that
 * counts (qlock_set_misuse_handler, looked up at run time); the count
 * must stay 0.  Output identical with and without the drop-in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t mtx[3]; /* normal, default, adaptive */
static pthread_mutex_t atf = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int misuse;
static bool dropin; /* preloaded, rwlocks not forwarded: the rwlock too */

static void on_misuse(const char *fn, const char *what, const void *lock)
{
	(void)lock;
	if (misuse++ == 0)
		fprintf(stderr, "misuse: %s: %s\n", fn, what);
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: watchdog\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static void prepare(void) { pthread_mutex_lock(&atf); }
static void parent(void) { pthread_mutex_unlock(&atf); }
static void child(void) { pthread_mutex_unlock(&atf); }

static const char *err(int e)
{
	return e == 0 ? "0" : e == EPERM ? "EPERM" : strerror(e);
}

/* In a child: unlock what the forking thread held, use it again. */
static int child_side(const char *who)
{
	int bad = 0;

	for (int i = 0; i < 3; i++) {
		int r = pthread_mutex_unlock(&mtx[i]);
		int t = pthread_mutex_trylock(&mtx[i]);

		printf("%s: mutex %d unlock %s, trylock %s\n", who, i, err(r), err(t));
		bad |= r != 0 || t != 0;
		pthread_mutex_unlock(&mtx[i]);
	}
	/* The rwlock the forking thread write-held (the drop-in only: glibc
	 * takes the child's unlock for a read unlock, the tid it compares
	 * having changed, and the write lock stays held; silent, so that
	 * the output stays the same). */
	if (dropin) {
		int r = pthread_rwlock_unlock(&rw);
		int w = pthread_rwlock_trywrlock(&rw);

		if (r != 0 || w != 0) {
			printf("%s: rwlock unlock %s, trywrlock %s\n", who, err(r), err(w));
			bad = 1;
		}
		pthread_rwlock_unlock(&rw);
	}
	/* The atfork mutex, released by the child handler. */
	int t = pthread_mutex_trylock(&atf);
	bad |= t != 0;
	printf("%s: atfork mutex trylock %s\n", who, err(t));
	pthread_mutex_unlock(&atf);
	printf("%s: misuse %d\n", who, misuse);
	return bad || misuse != 0;
}

static int wait_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("FAIL: child status %#x\n", st);
		return 1;
	}
	return 0;
}

static void lock_all(void)
{
	for (int i = 0; i < 3; i++)
		pthread_mutex_lock(&mtx[i]);
	if (dropin)
		pthread_rwlock_wrlock(&rw);
}

static int unlock_all(void)
{
	int bad = 0;

	for (int i = 0; i < 3; i++)
		bad |= pthread_mutex_unlock(&mtx[i]) != 0;
	if (dropin)
		bad |= pthread_rwlock_unlock(&rw) != 0;
	return bad;
}

int main(void)
{
	pthread_mutexattr_t a;
	static const int kinds[3] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_DEFAULT,
				      PTHREAD_MUTEX_ADAPTIVE_NP };
	void (*(*set)(void (*)(const char *, const char *, const void *)))(
		const char *, const char *, const void *);
	const char *(*alg)(const char *);
	int bad = 0;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(300);
	*(void **)&set = dlsym(RTLD_DEFAULT, "qlock_set_misuse_handler");
	if (set)
		set(on_misuse);
	*(void **)&alg = dlsym(RTLD_DEFAULT, "qlock_pthread_algorithm");
	dropin = alg && strcmp(alg("rwlock"), "glibc") != 0;
	for (int i = 0; i < 3; i++) {
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, kinds[i]);
		pthread_mutex_init(&mtx[i], &a);
		pthread_mutexattr_destroy(&a);
	}
	/* First lock use, then the handlers (they run after the library's). */
	pthread_mutex_lock(&atf);
	pthread_mutex_unlock(&atf);
	pthread_atfork(prepare, parent, child);

	/* lock, fork, unlock on both sides */
	lock_all();
	pid = fork();
	if (pid == 0) {
		alarm(300);
		_exit(child_side("child"));
	}
	bad |= wait_child(pid);
	bad |= unlock_all();

	/* held across two forks, unlocked in the grandchild */
	lock_all();
	pid = fork();
	if (pid == 0) {
		pid_t g;

		alarm(300);
		g = fork();
		if (g == 0) {
			alarm(300);
			_exit(child_side("grandchild"));
		}
		_exit(wait_child(g));
	}
	bad |= wait_child(pid);
	bad |= unlock_all();
	printf("parent: misuse %d\n", misuse);
	bad |= misuse != 0;
	printf(bad ? "FAIL\n" : "ok\n");
	return bad;
}
