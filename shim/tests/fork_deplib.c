/* SPDX-License-Identifier: MIT */
/*
 * fork() repair must not depend on the order of pthread_atfork handlers:
 * forklib (linked as DT_NEEDED) registers its handlers before the
 * preloaded shim is set up, so its child handler unlocks its mutex first.
 * Threads hammer that mutex while the main thread forks; every child uses
 * it from a new thread and must exit 0.  A child that hangs is killed by
 * its own watchdog (alarm) and fails the run.  Run with
 * QLOCK_HANDOFF_NS=0 so the TP mutex hands off at every contended unlock.
 *
 *	fork_deplib [CHILDREN]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void forklib_work(void);

static volatile int stop;

static void *hammer(void *arg)
{
	(void)arg;
	while (!stop)
		forklib_work();
	return NULL;
}

static void *child_user(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		forklib_work();
	return NULL;
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 40, ok = 0;
	pthread_t t[3], c;

	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, hammer, NULL);
	for (int i = 0; i < children; i++) {
		pid_t p = fork();
		if (p == 0) {
			alarm(600); /* a bound on a hang, not an expectation */
			pthread_create(&c, NULL, child_user, NULL);
			forklib_work();
			pthread_join(c, NULL);
			_exit(0);
		}
		int st;
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			ok++;
		else
			break; /* one hung child is enough; the rest would too */
	}
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("fork_deplib: children ok %d of %d\n", ok, children);
	return ok != children;
}
