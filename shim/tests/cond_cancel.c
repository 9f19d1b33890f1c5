/* SPDX-License-Identifier: MIT */
/*
 * A thread cancelled in pthread_cond_wait/timedwait must not consume a
 * signal while another thread stays blocked on the condvar (POSIX).  Two
 * waiters, one token, one signal, and the first waiter is cancelled at
 * once: either it took the token and returned normally, or the other
 * waiter must get it.  A waiter that never wakes fails the run by the
 * watchdog instead of hanging.  Half the rounds use timedwait.
 *
 *	cond_cancel [ROUNDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_cond_t in_wait = PTHREAD_COND_INITIALIZER;
static int waiting, tokens, timed;
static int got[2];

static void unlock_mutex(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&m);
}

static void *waiter(void *arg)
{
	int me = (int)(long)arg;

	pthread_mutex_lock(&m);
	pthread_cleanup_push(unlock_mutex, NULL);
	waiting++;
	pthread_cond_signal(&in_wait);
	while (tokens == 0) {
		if (timed) {
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += 3600;
			pthread_cond_timedwait(&c, &m, &t);
		} else {
			pthread_cond_wait(&c, &m);
		}
	}
	tokens--;
	got[me] = 1;
	pthread_cleanup_pop(1);
	return NULL;
}

static void start_waiter(pthread_t *t, int me, int n)
{
	pthread_create(t, NULL, waiter, (void *)(long)me);
	pthread_mutex_lock(&m);
	while (waiting < n) /* it released m inside its wait */
		pthread_cond_wait(&in_wait, &m);
	pthread_mutex_unlock(&m);
}

static void watchdog(int sig)
{
	static const char msg[] = "FAIL: the second waiter was never woken "
		"(the cancelled waiter swallowed the signal)\n";
	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	int consumed = 0;

	signal(SIGALRM, watchdog);
	for (int r = 0; r < rounds; r++) {
		pthread_t a, b;
		void *res;

		alarm(300); /* a bound on a hang, not an expectation */
		waiting = tokens = 0;
		got[0] = got[1] = 0;
		timed = r & 1;
		start_waiter(&a, 0, 1);
		start_waiter(&b, 1, 2);
		pthread_mutex_lock(&m);
		tokens = 1;
		pthread_cond_signal(&c);
		pthread_cancel(a);
		pthread_mutex_unlock(&m);
		pthread_join(a, &res);
		if (got[0]) { /* a took the token and returned: b needs one */
			consumed++;
			pthread_mutex_lock(&m);
			tokens = 1;
			pthread_cond_signal(&c);
			pthread_mutex_unlock(&m);
		}
		pthread_join(b, NULL);
		if (!got[1] || (res == PTHREAD_CANCELED) == got[0]) {
			printf("FAIL: round %d: a %s, got %d %d\n", r,
			       res == PTHREAD_CANCELED ? "cancelled" : "returned",
			       got[0], got[1]);
			return 1;
		}
	}
	alarm(0);
	(void)consumed; /* varies from run to run; not printed */
	printf("cond_cancel: %d rounds, the second waiter always woke\n", rounds);
	return 0;
}
