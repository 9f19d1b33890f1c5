/* SPDX-License-Identifier: MIT */
/*
 * Process-shared objects, as glibc runs them:
 *   spin     a PTHREAD_PROCESS_SHARED spinlock in a MAP_SHARED page,
 *            taken by the parent and three forked children;
 *   cond     a process-shared condition variable with a process-private
 *            mutex, used by the threads of one process;
 *   procs    a process-shared condition variable and mutex, shared by
 *            a forked child, the parent and a parent thread that was
 *            already waiting on the condvar when the child was forked.
 * Every participant counts under the lock; the totals must be exact.
 * Output must be identical with and without the drop-in; a watchdog
 * turns a hang into a failure.
 *   pshared [ROUNDS [spin|cond|procs]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define WATCHDOG 300

static long rounds = 20000;

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: watchdog: a process-shared lock hangs\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static void watchdog(void)
{
	signal(SIGALRM, on_alarm);
	alarm(WATCHDOG);
}

static void *shared_page(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 0, size);
	return p;
}

static int wait_children(const pid_t *pid, int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int st;

		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			printf("FAIL: child %d did not exit 0 (status %#x)\n", i, st);
			bad = 1;
		}
	}
	return bad;
}

/* ---- spin ---------------------------------------------------------------- */

struct spin_shm {
	pthread_spinlock_t lock;
	long counter;
	long inside;
	long overlap;
};

static void spin_work(struct spin_shm *s)
{
	for (long i = 0; i < rounds; i++) {
		if (i % 4 == 3) {
			while (pthread_spin_trylock(&s->lock) != 0)
				;
		} else {
			pthread_spin_lock(&s->lock);
		}
		if (s->inside++)
			s->overlap++;
		s->counter++;
		s->inside--;
		if (i % 64 == 0)
			sched_yield(); /* let a preempted holder be seen */
		pthread_spin_unlock(&s->lock);
	}
}

static int test_spin(void)
{
	enum { CHILDREN = 3 };
	struct spin_shm *s = shared_page(sizeof(*s));
	pid_t pid[CHILDREN];

	if (pthread_spin_init(&s->lock, PTHREAD_PROCESS_SHARED) != 0) {
		printf("FAIL: pthread_spin_init(PTHREAD_PROCESS_SHARED)\n");
		return 1;
	}
	for (int i = 0; i < CHILDREN; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			watchdog();
			spin_work(s);
			_exit(0);
		}
	}
	spin_work(s);
	int bad = wait_children(pid, CHILDREN);
	printf("spin: %d processes x %ld: counter %s, overlaps %ld\n",
	       CHILDREN + 1, rounds,
	       s->counter == (CHILDREN + 1) * rounds ? "exact" : "WRONG",
	       s->overlap);
	bad |= s->counter != (CHILDREN + 1) * rounds || s->overlap != 0;
	if (pthread_spin_destroy(&s->lock) != 0)
		bad = 1;
	return bad;
}

/* ---- a round robin on one condvar --------------------------------------- */

struct ring {
	pthread_mutex_t m;
	pthread_cond_t c;
	int turn;      /* whose turn: 0 .. n-1 */
	int n;         /* participants */
	long count;    /* incremented by whoever has the turn */
	long passes;   /* per-participant passes, checked at the end */
};

struct member {
	struct ring *r;
	int id;
	long rounds;
};

static void *ring_run(void *arg)
{
	struct member *me = arg;
	struct ring *r = me->r;

	for (long i = 0; i < me->rounds; i++) {
		pthread_mutex_lock(&r->m);
		while (r->turn != me->id)
			pthread_cond_wait(&r->c, &r->m);
		r->count++;
		r->turn = (r->turn + 1) % r->n;
		/* broadcast: a signalled waiter may not be the next one */
		pthread_cond_broadcast(&r->c);
		pthread_mutex_unlock(&r->m);
	}
	return NULL;
}

static void ring_init(struct ring *r, int n, int mutex_pshared)
{
	pthread_condattr_t ca;
	pthread_mutexattr_t ma;

	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&r->c, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutexattr_init(&ma);
	if (mutex_pshared)
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&r->m, &ma);
	pthread_mutexattr_destroy(&ma);
	r->n = n;
}

/* A process-shared condvar with a process-private mutex, threads only. */
static int test_cond(void)
{
	enum { T = 4 };
	struct ring *r = shared_page(sizeof(*r));
	struct member mb[T];
	pthread_t t[T];
	long n = rounds / 4;

	ring_init(r, T, 0);
	for (int i = 0; i < T; i++) {
		mb[i] = (struct member){ r, i, n };
		pthread_create(&t[i], NULL, ring_run, &mb[i]);
	}
	for (int i = 0; i < T; i++)
		pthread_join(t[i], NULL);
	printf("cond: pshared condvar, private mutex, %d threads x %ld: count %s\n",
	       T, n, r->count == T * n ? "exact" : "WRONG");
	int bad = r->count != T * n;
	bad |= pthread_cond_destroy(&r->c) != 0;
	bad |= pthread_mutex_destroy(&r->m) != 0;
	return bad;
}

/* A process-shared condvar and mutex: participant 0 is a thread of the
 * parent that waits on the condvar before the fork, 1 the child, 2 the
 * parent's main thread. */
static int test_procs(void)
{
	struct ring *r = shared_page(sizeof(*r));
	struct member mb[3];
	pthread_t t;
	pid_t pid;
	long n = rounds / 8;

	ring_init(r, 3, 1);
	r->turn = -1; /* nobody yet: participant 0 waits */
	mb[0] = (struct member){ r, 0, n };
	pthread_create(&t, NULL, ring_run, &mb[0]);
	usleep(20000); /* participant 0 is (almost surely) asleep by now */
	pid = fork();
	if (pid == 0) {
		watchdog();
		mb[1] = (struct member){ r, 1, n };
		pthread_mutex_lock(&r->m);
		r->turn = 0; /* start the ring */
		pthread_cond_broadcast(&r->c);
		pthread_mutex_unlock(&r->m);
		ring_run(&mb[1]);
		_exit(0);
	}
	mb[2] = (struct member){ r, 2, n };
	ring_run(&mb[2]);
	pthread_join(t, NULL);
	int bad = wait_children(&pid, 1);
	printf("procs: pshared condvar and mutex, 2 processes, 3 members x %ld: count %s\n",
	       n, r->count == 3 * n ? "exact" : "WRONG");
	bad |= r->count != 3 * n;
	bad |= pthread_cond_destroy(&r->c) != 0;
	bad |= pthread_mutex_destroy(&r->m) != 0;
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc > 1)
		rounds = atol(argv[1]);
	setvbuf(stdout, NULL, _IONBF, 0);
	watchdog();
	const char *only = argc > 2 ? argv[2] : "";

	if (!*only || !strcmp(only, "spin"))
		bad |= test_spin();
	if (!*only || !strcmp(only, "cond"))
		bad |= test_cond();
	if (!*only || !strcmp(only, "procs"))
		bad |= test_procs();
	printf(bad ? "FAIL\n" : "ok\n");
	return bad;
}
