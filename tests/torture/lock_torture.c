/* SPDX-License-Identifier: MIT */
/*
 * Lock torture, in the spirit of the kernel's locktorture: for a given
 * time, rounds of random shape run one after another, each on one lock:
 *
 *   - a registered qlock lock (qspinlock, qrwlock, rwsem, TP mutex and
 *     rwlock, and their variants), 1..16 threads, a random mix of lock,
 *     trylock and timed lock (deadlines already past, a few us or a few
 *     ms ahead), shared and exclusive for rwlocks, random hold times
 *     (none, a spin, a yield);
 *   - the TP condition variable: producers and consumers of a bounded
 *     queue under a TP mutex, with wait, timed wait, signal, broadcast.
 *
 * Invariants on plain data: a writer finds nobody else inside and keeps
 * a == b; a reader finds no writer inside and a == b; the final count
 * equals the completed writes; every item produced is consumed once.
 * A watchdog fails the run, with each thread's last step, when no thread
 * completes an operation for QLOCK_TORTURE_HANG_S seconds (default 60: a
 * bound on hangs, not an expectation).
 *
 *	lock_torture [SECONDS [SEED]]    default 20 s (QLOCK_TORTURE_SECONDS)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "lockreg.h"
#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"

#define MAX_THREADS 16
#define QUEUE_SLOTS 4

/* ---- what each thread is doing, for the watchdog ---------------------- */

struct step {
	const char *what;   /* "timedrdlock", "cond wait", ... */
	unsigned long ops;  /* completed operations */
};

static struct step steps[MAX_THREADS];
static const char *round_lock = "-";
static unsigned round_threads;
static unsigned long progress;  /* operations completed, all threads */
static int round_over;

static void at(unsigned id, const char *what)
{
	qa_write(&steps[id].what, what);
}

static void done_op(unsigned id)
{
	qa_write(&steps[id].ops, steps[id].ops + 1);
	qa_fetch_add(&progress, 1);
}

__attribute__((noreturn, format(printf, 1, 2)))
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL torture/%s (%u threads): ", round_lock,
		round_threads);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double env_seconds(const char *name, double dflt)
{
	const char *s = getenv(name);
	double v = s ? strtod(s, NULL) : 0;

	return v > 0 ? v : dflt;
}

static void *watchdog(void *arg)
{
	double hang_s = *(double *)arg, quiet_since = now_s();
	unsigned long seen = qa_read(&progress);

	for (;;) {
		struct timespec nap = { 0, 100 * 1000 * 1000 };

		nanosleep(&nap, NULL); /* polling a counter, not a test wait */
		unsigned long p = qa_read(&progress);
		if (p != seen || qa_read(&round_over)) {
			seen = p;
			quiet_since = now_s();
			qa_write(&round_over, 0);
			continue;
		}
		if (now_s() - quiet_since < hang_s)
			continue;
		fprintf(stderr, "FAIL torture/%s: no operation completed for "
			"%.0f s; threads:\n", round_lock, hang_s);
		for (unsigned i = 0; i < round_threads; i++)
			fprintf(stderr, "  thread %2u: %lu ops, at %s\n", i,
				qa_read(&steps[i].ops), qa_read(&steps[i].what));
		abort();
	}
	return NULL;
}

/* ---- randomness (per thread, seeded from the run's seed) ---------------- */

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned pick(uint64_t *s, unsigned n)
{
	return (unsigned)(next_rand(s) % n);
}

/* A deadline already past, a few microseconds or a few ms ahead. */
static struct timespec random_deadline(uint64_t *s)
{
	struct timespec t;
	long ns[] = { -1000000, 0, 2000, 50000, 2000000 };

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += ns[pick(s, 5)];
	while (t.tv_nsec >= 1000000000) { t.tv_nsec -= 1000000000; t.tv_sec++; }
	while (t.tv_nsec < 0) { t.tv_nsec += 1000000000; t.tv_sec--; }
	return t;
}

static void hold(uint64_t *s)
{
	switch (pick(s, 8)) {
	case 0: sched_yield(); break;
	case 1: case 2:
		for (unsigned i = pick(s, 400); i; i--)
			qa_cpu_relax();
		break;
	default: break;
	}
}

/* ---- registered locks ---------------------------------------------------- */

struct data {              /* plain data the lock protects */
	long a, b;
	unsigned writers, readers; /* inside now (atomics: checked racily) */
};

struct lock_round {
	const struct lr_lock *lk;
	void *l;
	struct data d;
	double end;
	uint64_t seed;
	pthread_barrier_t go;
	long writes[MAX_THREADS];
};

struct worker {
	void *round;       /* struct lock_round or struct queue */
	unsigned id;
};

/* Take the lock in the chosen mode and way; false if try/timed failed. */
static bool take(const struct lr_lock *lk, void *l, bool rd, uint64_t *s,
		 unsigned id)
{
	struct timespec t;

	switch (pick(s, 4)) {
	case 0:
		if (rd ? lk->tryrdlock : lk->trylock) {
			at(id, rd ? "tryrdlock" : "trylock");
			return rd ? lk->tryrdlock(l) : lk->trylock(l);
		}
		break;
	case 1:
		if (rd ? lk->timedrdlock : lk->timedlock) {
			t = random_deadline(s);
			at(id, rd ? "timedrdlock" : "timedlock");
			int e = rd ? lk->timedrdlock(l, &t) : lk->timedlock(l, &t);
			if (e && e != ETIMEDOUT)
				fail("timed lock returned %d", e);
			return e == 0;
		}
		break;
	}
	at(id, rd ? "rdlock" : "lock");
	if (rd)
		lk->rdlock(l);
	else
		lk->lock(l);
	return true;
}

static void write_section(struct lock_round *r, unsigned id, uint64_t *s)
{
	struct data *d = &r->d;

	if (qa_fetch_add(&d->writers, 1) != 0 || qa_read(&d->readers))
		fail("a writer is not alone (%u writers, %u readers)",
		     qa_read(&d->writers), qa_read(&d->readers));
	if (d->a != d->b)
		fail("writer found a=%ld b=%ld", d->a, d->b);
	d->a++;
	hold(s);
	d->b++;
	r->writes[id]++;
	qa_fetch_add(&d->writers, -1);
}

static void read_section(struct lock_round *r, uint64_t *s)
{
	struct data *d = &r->d;

	qa_fetch_add(&d->readers, 1);
	if (qa_read(&d->writers))
		fail("a reader is inside with a writer");
	long a = d->a;
	hold(s);
	if (d->b != a)
		fail("reader saw a=%ld b=%ld", a, d->b);
	qa_fetch_add(&d->readers, -1);
}

static void *lock_worker(void *arg)
{
	struct worker *w = arg;
	struct lock_round *r = w->round;
	const struct lr_lock *lk = r->lk;
	uint64_t s = r->seed * 0x9e3779b97f4a7c15ull + w->id + 1;
	unsigned read_pct = lk->kind == LR_RWLOCK ? pick(&s, 100) : 0;

	pthread_barrier_wait(&r->go);
	while (now_s() < r->end) {
		bool rd = pick(&s, 100) < read_pct;

		if (take(lk, r->l, rd, &s, w->id)) {
			at(w->id, rd ? "read section" : "write section");
			if (rd) {
				read_section(r, &s);
				at(w->id, "rdunlock");
				lk->rdunlock(r->l);
			} else {
				write_section(r, w->id, &s);
				at(w->id, "unlock");
				lk->unlock(r->l);
			}
		}
		at(w->id, "between operations");
		done_op(w->id);
		hold(&s);
	}
	at(w->id, "finished");
	return NULL;
}

static void run_lock_round(const struct lr_lock *lk, unsigned nthreads,
			   double secs, uint64_t seed)
{
	struct lock_round r = { .lk = lk, .end = now_s() + secs, .seed = seed };
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	long total = 0;

	r.l = lr_new(lk);
	if (!r.l)
		fail("cannot create the lock: %s", strerror(errno));
	pthread_barrier_init(&r.go, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ &r, i };
		if (pthread_create(&t[i], NULL, lock_worker, &w[i]))
			fail("pthread_create");
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += r.writes[i];
	}
	if (r.d.a != total || r.d.b != total)
		fail("%ld writes completed, data says a=%ld b=%ld", total,
		     r.d.a, r.d.b);
	pthread_barrier_destroy(&r.go);
	lr_free(lk, r.l);
}

/* ---- the TP condition variable: a bounded queue ------------------------- */

struct queue {
	qlock_tp_mutex_t m;
	qlock_tp_cond_t not_empty, not_full;
	unsigned items[QUEUE_SLOTS], head, count;
	unsigned long produced, consumed, sum_in, sum_out, target;
	uint64_t seed;
	pthread_barrier_t go;
	unsigned nproducers;
};

static void cond_wait(qlock_tp_cond_t *c, struct queue *q, uint64_t *s,
		      unsigned id)
{
	if (pick(s, 2)) {
		at(id, "cond wait");
		qlock_tp_cond_wait(c, &q->m);
		return;
	}
	struct timespec t = random_deadline(s);
	at(id, "cond timedwait");
	int e = qlock_tp_cond_timedwait(c, &q->m, &t, CLOCK_MONOTONIC);
	if (e && e != ETIMEDOUT)
		fail("cond timedwait returned %d", e);
}

static void wake(qlock_tp_cond_t *c, uint64_t *s)
{
	if (pick(s, 3))
		qlock_tp_cond_signal(c);
	else
		qlock_tp_cond_broadcast(c);
}

static void *producer(void *arg)
{
	struct worker *w = arg;
	struct queue *q = w->round;
	uint64_t s = q->seed * 0x9e3779b97f4a7c15ull + w->id + 1;

	pthread_barrier_wait(&q->go);
	for (;;) {
		at(w->id, "lock (producer)");
		qlock_tp_mutex_lock(&q->m);
		while (q->count == QUEUE_SLOTS && q->produced < q->target)
			cond_wait(&q->not_full, q, &s, w->id);
		if (q->produced == q->target) {
			qlock_tp_mutex_unlock(&q->m);
			at(w->id, "finished");
			return NULL;
		}
		unsigned v = (unsigned)q->produced++ + 1;
		q->items[(q->head + q->count++) % QUEUE_SLOTS] = v;
		q->sum_in += v;
		if (q->produced == q->target) /* waiting producers are done */
			qlock_tp_cond_broadcast(&q->not_full);
		wake(&q->not_empty, &s);
		qlock_tp_mutex_unlock(&q->m);
		at(w->id, "between items");
		done_op(w->id);
		hold(&s);
	}
}

static void *consumer(void *arg)
{
	struct worker *w = arg;
	struct queue *q = w->round;
	uint64_t s = q->seed * 0x9e3779b97f4a7c15ull + w->id + 1;

	pthread_barrier_wait(&q->go);
	for (;;) {
		at(w->id, "lock (consumer)");
		qlock_tp_mutex_lock(&q->m);
		while (q->count == 0 && q->consumed < q->target)
			cond_wait(&q->not_empty, q, &s, w->id);
		if (q->consumed == q->target) {
			/* the last item's consumer woke everyone */
			qlock_tp_mutex_unlock(&q->m);
			at(w->id, "finished");
			return NULL;
		}
		q->sum_out += q->items[q->head];
		q->head = (q->head + 1) % QUEUE_SLOTS;
		q->count--;
		if (++q->consumed == q->target)
			qlock_tp_cond_broadcast(&q->not_empty);
		wake(&q->not_full, &s);
		qlock_tp_mutex_unlock(&q->m);
		at(w->id, "between items");
		done_op(w->id);
		hold(&s);
	}
}

static void run_cond_round(unsigned nthreads, unsigned long items,
			   uint64_t seed)
{
	struct queue q = { .target = items, .seed = seed };
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	unsigned np = 1 + pick(&seed, nthreads - 1);

	qlock_tp_mutex_init(&q.m);
	qlock_tp_cond_init(&q.not_empty);
	qlock_tp_cond_init(&q.not_full);
	pthread_barrier_init(&q.go, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ &q, i };
		if (pthread_create(&t[i], NULL, i < np ? producer : consumer,
				   &w[i]))
			fail("pthread_create");
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	if (q.consumed != items || q.sum_in != q.sum_out || q.count)
		fail("%lu items: %lu consumed, sums %lu in / %lu out, %u left",
		     items, q.consumed, q.sum_in, q.sum_out, q.count);
	pthread_barrier_destroy(&q.go);
}

/* ---- the run ------------------------------------------------------------- */

/* The public qlock locks and their variants; baselines are not tortured. */
static bool is_qlock(const struct lr_lock *lk)
{
	static const char *const families[] = { "qspinlock", "qrwlock",
						"rwsem", "tp-" };

	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strncmp(lk->name, families[i], strlen(families[i])))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? strtod(argv[1], NULL)
			       : env_seconds("QLOCK_TORTURE_SECONDS", 20);
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0)
				 : (uint64_t)time(NULL);
	double hang_s = env_seconds("QLOCK_TORTURE_HANG_S", 60);
	const struct lr_lock *locks[64];
	unsigned nlocks = 0, rounds = 0;
	pthread_t dog;

	if (!(secs > 0)) {
		fprintf(stderr, "usage: lock_torture [SECONDS [SEED]]\n");
		return 2;
	}
	for (size_t i = 0; i < lr_count() && nlocks < 64; i++)
		if (is_qlock(lr_at(i)))
			locks[nlocks++] = lr_at(i);
	if (!nlocks)
		fail("no qlock lock registered");
	seed |= 1;
	printf("lock_torture: %.0f s, seed %llu (rerun: lock_torture %.0f %llu)\n",
	       secs, (unsigned long long)seed, secs, (unsigned long long)seed);
	fflush(stdout);
	pthread_create(&dog, NULL, watchdog, &hang_s);

	double end = now_s() + secs;
	while (now_s() < end) {
		unsigned n = 1 + pick(&seed, pick(&seed, 4) ? 8 : MAX_THREADS);
		unsigned which = pick(&seed, nlocks + 1);
		uint64_t round_seed = next_rand(&seed);

		memset(steps, 0, sizeof(steps));
		if (which == nlocks) {
			n = n < 2 ? 2 : n;
			qa_write(&round_lock, "tp-cond");
			qa_write(&round_threads, n);
			run_cond_round(n, 200 + pick(&seed, 2000), round_seed);
		} else {
			const struct lr_lock *lk = locks[which];

			if ((lk->flags & LR_SPIN_ONLY) && n > 4)
				n = 4;  /* oversubscribed pure spinners crawl */
			qa_write(&round_lock, lk->name);
			qa_write(&round_threads, n);
			run_lock_round(lk, n, 0.05 + pick(&seed, 300) / 1000.0,
				       round_seed);
		}
		qa_write(&round_over, 1);
		rounds++;
	}
	printf("lock_torture: ok, %u rounds on %u locks + tp-cond, %lu operations\n",
	       rounds, nlocks, qa_read(&progress));
	return 0;
}
