/* SPDX-License-Identifier: MIT */
/*
 * Readers that depend on each other across threads while a writer waits.
 *
 * glibc's default rwlock kind (and PREFER_WRITER_NP, which glibc treats
 * alike) lets a reader in whenever the lock is read-held, even past a
 * waiting writer, and programs rely on it across threads: thread A
 * read-locks R and waits for thread B's answer; B read-locks R to compute
 * it; writer C asked for R in between.  Each case below must complete as
 * under glibc, and the writer must get the lock once the readers leave:
 *
 *   cross      A, C, then B with rdlock, timedrdlock, clockrdlock, tryrdlock
 *   two-locks  A holds R1 and R2, a writer waits on each, B reads R2
 *              then R1
 *   three      A holds R and waits for B, B reads R and waits for D, D
 *              reads R and answers
 *
 * for the default kind, PREFER_READER_NP and PREFER_WRITER_NP.  The
 * output must match glibc's (compare.sh).  A hang is turned into a
 * failure by alarm().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum mode { RD, TIMED, CLOCK, TRY };

static const char *mode_name[] = { "rdlock", "timedrdlock", "clockrdlock",
				   "tryrdlock" };

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

/* ---- writers that block, seen asleep ---------------------------------- */

struct writer {
	pthread_rwlock_t *rw;
	pthread_t t;
	volatile pid_t tid;
	volatile int done;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	w->tid = gettid();
	if (pthread_rwlock_wrlock(w->rw) != 0)
		abort();
	pthread_rwlock_unlock(w->rw);
	w->done = 1;
	return NULL;
}

/* The writer is blocked (sleeping) in wrlock: its task state is S. */
static void writer_start(struct writer *w, pthread_rwlock_t *rw)
{
	char path[64], buf[256];

	memset(w, 0, sizeof(*w));
	w->rw = rw;
	pthread_create(&w->t, NULL, writer_main, w);
	while (w->tid == 0)
		usleep(1000);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)w->tid);
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

static void writer_join(struct writer *w)
{
	pthread_join(w->t, NULL);
}

/* ---- a reader that answers --------------------------------------------- */

struct reader {
	pthread_rwlock_t *first, *second; /* read in this order */
	enum mode mode;
	struct reader *ask;               /* wait for its answer, if any */
	pthread_t t;
	volatile int answer, err;
};

static int read_lock(pthread_rwlock_t *rw, enum mode m)
{
	struct timespec abs;
	clockid_t clk = m == CLOCK ? CLOCK_MONOTONIC : CLOCK_REALTIME;

	if (m == RD)
		return pthread_rwlock_rdlock(rw);
	if (m == TRY)
		return pthread_rwlock_tryrdlock(rw);
	clock_gettime(clk, &abs);
	abs.tv_sec += 10; /* far past any deferral: succeeds or hangs */
	if (m == TIMED)
		return pthread_rwlock_timedrdlock(rw, &abs);
	return pthread_rwlock_clockrdlock(rw, clk, &abs);
}

static void reader_start(struct reader *r);

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	int e = 0, held = 0;

	if (r->second) {
		e = read_lock(r->first, r->mode);
		held += e == 0;
	}
	if (e == 0) {
		e = read_lock(r->second ? r->second : r->first, r->mode);
		held += e == 0;
	}
	r->err = e;
	if (e == 0 && r->ask) {
		reader_start(r->ask);
		while (!r->ask->answer)
			usleep(100);
		pthread_join(r->ask->t, NULL);
	}
	r->answer = e == 0 ? 42 : -1;
	if (held == 2)
		pthread_rwlock_unlock(r->second);
	if (held >= 1)
		pthread_rwlock_unlock(r->first);
	return NULL;
}

static void reader_start(struct reader *r)
{
	pthread_create(&r->t, NULL, reader_main, r);
}

/* ---- the cases ------------------------------------------------------------ */

static void rw_init(pthread_rwlock_t *rw, int kind)
{
	pthread_rwlockattr_t a;

	if (kind < 0) {
		pthread_rwlock_init(rw, NULL);
		return;
	}
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, kind);
	pthread_rwlock_init(rw, &a);
	pthread_rwlockattr_destroy(&a);
}

/* A holds R, writer C waits, B reads R (mode m) for A. */
static void cross(int kind, const char *name, enum mode m)
{
	pthread_rwlock_t rw;
	struct reader b = { 0 };
	struct writer c;

	rw_init(&rw, kind);
	if (pthread_rwlock_rdlock(&rw) != 0) /* A */
		abort();
	writer_start(&c, &rw);
	b.first = &rw;
	b.mode = m;
	reader_start(&b);
	while (!b.answer)
		usleep(100);
	printf("%s cross %s: B %s, answer %d, writer done while read-held: %s\n",
	       name, mode_name[m], err_name(b.err), b.answer,
	       c.done ? "yes" : "no");
	pthread_join(b.t, NULL);
	pthread_rwlock_unlock(&rw);
	writer_join(&c);
	printf("%s cross %s: writer done after unlock: %s\n", name,
	       mode_name[m], c.done ? "yes" : "no");
	pthread_rwlock_destroy(&rw);
}

/* A holds R1 and R2, a writer waits on each, B reads R2 then R1. */
static void two_locks(int kind, const char *name)
{
	pthread_rwlock_t r1, r2;
	struct reader b = { 0 };
	struct writer c1, c2;

	rw_init(&r1, kind);
	rw_init(&r2, kind);
	if (pthread_rwlock_rdlock(&r1) != 0 || pthread_rwlock_rdlock(&r2) != 0)
		abort();
	writer_start(&c1, &r1);
	writer_start(&c2, &r2);
	b.first = &r2;
	b.second = &r1;
	b.mode = RD;
	reader_start(&b);
	while (!b.answer)
		usleep(100);
	printf("%s two-locks: B %s, answer %d\n", name, err_name(b.err),
	       b.answer);
	pthread_join(b.t, NULL);
	pthread_rwlock_unlock(&r2);
	pthread_rwlock_unlock(&r1);
	writer_join(&c1);
	writer_join(&c2);
	printf("%s two-locks: writers done after unlock: %s\n", name,
	       c1.done && c2.done ? "yes" : "no");
	pthread_rwlock_destroy(&r1);
	pthread_rwlock_destroy(&r2);
}

/* A holds R and waits for B, B reads R and waits for D, D reads R. */
static void three(int kind, const char *name)
{
	pthread_rwlock_t rw;
	struct reader b = { 0 }, d = { 0 };
	struct writer c;

	rw_init(&rw, kind);
	if (pthread_rwlock_rdlock(&rw) != 0)
		abort();
	writer_start(&c, &rw);
	d.first = &rw;
	d.mode = RD;
	b.first = &rw;
	b.mode = RD;
	b.ask = &d;
	reader_start(&b);
	while (!b.answer)
		usleep(100);
	printf("%s three: B %s, D %s, answers %d %d\n", name, err_name(b.err),
	       err_name(d.err), b.answer, d.answer);
	pthread_join(b.t, NULL);
	pthread_rwlock_unlock(&rw);
	writer_join(&c);
	printf("%s three: writer done after unlock: %s\n", name,
	       c.done ? "yes" : "no");
	pthread_rwlock_destroy(&rw);
}

int main(void)
{
	static const struct { int kind; const char *name; } kinds[] = {
		{ -1, "default" },
		{ PTHREAD_RWLOCK_PREFER_READER_NP, "prefer-reader" },
		{ PTHREAD_RWLOCK_PREFER_WRITER_NP, "prefer-writer" },
	};

	alarm(300); /* a hang is a failure */
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (enum mode m = RD; m <= TRY; m++)
			cross(kinds[k].kind, kinds[k].name, m);
		two_locks(kinds[k].kind, kinds[k].name);
		three(kinds[k].kind, kinds[k].name);
	}
	return 0;
}
