/* SPDX-License-Identifier: MIT */
/*
 * lockbench map, the application cells (--family apps): four ways real
 * programs use a mutex that the grid's lock-work-unlock loop does not
 * show, each run like a grid cell (interleaved repetitions, glibc's
 * figures beside each lock's, the A/A column):
 *
 *   holder-yields  lock, sched_yield() while holding, unlock, again;
 *                  thread i on mutex i % 2 (sysbench threads
 *                  --thread-locks=2): 2, 4, 16 threads
 *   holder-sleeps  lock, nanosleep() of 20-50 us while holding, unlock
 *                  (blocking I/O under a lock): 2, 4, 8 threads
 *   cond-queue     N producers and N consumers on a bounded queue of 16
 *                  items, one mutex and two condition variables
 *                  (not full, not empty; signalled under the mutex):
 *                  N = 1, 2, 4
 *   timed-handoff  CPython's GIL: a flag under a mutex and a condition
 *                  variable; a thread wanting it waits with a 5 ms timed
 *                  wait and, when that times out with no switch meanwhile,
 *                  sets a drop request; the holder, which checks the
 *                  request between slices of work, releases the flag,
 *                  signals, and waits on a second condition variable until
 *                  another thread took it (forced switching): 2, 4, 8
 *                  threads, all wanting to run
 *
 * The calls are pthread_mutex_* and pthread_cond_* on glibc's objects (in
 * a --dropin child with the shim preloaded: the drop-in's), or
 * qlock_tp_mutex_* and qlock_tp_cond_* for the TP mutex, with the
 * condition variables on CLOCK_MONOTONIC as CPython sets them up.  So an
 * app cell runs the columns whose lock has a condition variable: glibc's
 * mutexes and the TP mutex.  The yields and sleeps are plain calls: in the
 * drop-in they pass through its off-CPU hint, in the library they do not
 * (a program would call qlock_tp_off_cpu_begin/end itself).
 *
 * An operation is one critical section (cond-queue: one item put or
 * taken; timed-handoff: one slice of work done holding the GIL).  Its wait
 * is the time spent in the pattern's mutex lock calls, as in the grid (the
 * mutex a condition wait takes back is part of that wait, not timed).
 *
 * Every cell checks itself: the critical sections keep an invariant on
 * plain data as the grid's do (the GIL's slices too: the flag is the
 * lock there), the queue's items put and taken add up, and at the end
 * every count matches the operations done; a thread that does not stop
 * within 10 s of the stop flag is a lost wake-up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "map.h"
#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"
#include "waittime.h"

#define APP_LINE 64
/* Two lines: the adjacent-line prefetcher pairs 128-byte blocks. */
#define APP_APART __attribute__((aligned(2 * APP_LINE)))
#define APP_QCAP 16                   /* cond-queue: items the queue holds */
#define APP_SLEEP_US_MIN 20           /* holder-sleeps: requested sleep */
#define APP_SLEEP_US_MAX 50
#define APP_GIL_INTERVAL_NS 5000000   /* CPython's default switch interval */
#define APP_GIL_SLICE 32              /* pauses of work between checks */
#define APP_HANG_GRACE_S 10

static const struct {
	const char *name;
	unsigned threads[3];
} app_patterns[MAP_NR_PATTERNS] = {
	[MAP_HOLDER_YIELDS] = { "holder-yields", { 2, 4, 16 } },
	[MAP_HOLDER_SLEEPS] = { "holder-sleeps", { 2, 4, 8 } },
	[MAP_COND_QUEUE] = { "cond-queue", { 2, 4, 8 } },   /* N = 1, 2, 4 */
	[MAP_TIMED_HANDOFF] = { "timed-handoff", { 2, 4, 8 } },
};

const char *map_pattern_name(unsigned pattern)
{
	return pattern > MAP_GRID && pattern < MAP_NR_PATTERNS
		       ? app_patterns[pattern].name : NULL;
}

size_t map_app_cells(struct map_cell *cells)
{
	size_t n = 0;

	for (unsigned p = MAP_GRID + 1; p < MAP_NR_PATTERNS; p++)
		for (size_t t = 0; t < 3; t++)
			cells[n++] = (struct map_cell){
				.pattern = p,
				.threads = app_patterns[p].threads[t] };
	return n;
}

double map_app_run_s(const struct map_cfg *c, const struct map_cell *cell)
{
	return 2 * map_run_s(c, cell->threads);
}

void map_app_setup_json(FILE *f, const struct map_cell *cell)
{
	switch (cell->pattern) {
	case MAP_HOLDER_YIELDS:
		fputs("\"mutexes\": 2", f);
		break;
	case MAP_HOLDER_SLEEPS:
		fprintf(f, "\"sleep_us_min\": %d, \"sleep_us_max\": %d",
			APP_SLEEP_US_MIN, APP_SLEEP_US_MAX);
		break;
	case MAP_COND_QUEUE:
		fprintf(f, "\"producers\": %u, \"consumers\": %u, "
			"\"capacity\": %d", cell->threads / 2,
			cell->threads / 2, APP_QCAP);
		break;
	case MAP_TIMED_HANDOFF:
		fprintf(f, "\"interval_us\": %d, \"slice_pauses\": %d",
			APP_GIL_INTERVAL_NS / 1000, APP_GIL_SLICE);
		break;
	}
}

/* ---- the mutex and condition variable of a column ----------------------- */

struct app_impl {
	const char *lock;       /* the registry's name for the mutex */
	bool tp;                /* TP mutex + TP condvar, else pthread's */
	int type;               /* pthread mutex type */
};

static const struct app_impl app_impls[] = {
	{ "pthread-mutex", false, PTHREAD_MUTEX_NORMAL },
	{ "pthread-mutex-adaptive", false, PTHREAD_MUTEX_ADAPTIVE_NP },
	{ "tp-mutex", true, 0 },
};

static const struct app_impl *app_impl_of(const struct lr_lock *lk)
{
	for (size_t i = 0; i < sizeof(app_impls) / sizeof(app_impls[0]); i++)
		if (!strcmp(app_impls[i].lock, lk->name))
			return &app_impls[i];
	return NULL;
}

bool map_app_runs(const struct map_cell *cell, const struct lr_lock *lk)
{
	return cell->pattern == MAP_GRID || app_impl_of(lk) != NULL;
}

union app_mutex {
	pthread_mutex_t p;
	qlock_tp_mutex_t tp;
};

union app_cond {
	pthread_cond_t p;
	qlock_tp_cond_t tp;
};

/* A mutex and the data its critical sections check, a line apart. */
struct app_lockset {
	union app_mutex m APP_APART;
	uint32_t a APP_APART, b;
};

struct app_shared {
	uint32_t start APP_APART;
	uint32_t stop, ready;
	const struct app_impl *im;
	unsigned pattern, nthreads;

	/* holder-yields: both; holder-sleeps, cond-queue: [0];
	 * timed-handoff: [0] the GIL's mutex, [1] the switch mutex, and
	 * [1]'s data is what the GIL protects. */
	struct app_lockset set[2];
	/* cond-queue: [0] not full, [1] not empty;
	 * timed-handoff: [0] the GIL's, [1] the switch condition. */
	union app_cond cv[2] APP_APART;

	/* cond-queue, under set[0].m */
	struct {
		uint32_t head, count;
		uint64_t put_sum, got_sum;
		uint64_t item[APP_QCAP];
	} q APP_APART;

	/* timed-handoff: locked under the GIL's mutex; holder and switches
	 * under both mutexes (written holding both, read holding either). */
	struct {
		uint32_t locked, holder; /* holder: last holder's id + 1 */
		uint64_t switches;
	} gil APP_APART;
	uint32_t drop_request APP_APART; /* read without a lock, as CPython's */
};

struct app_worker {
	struct app_shared *sh;
	pthread_t tid;
	unsigned id;
	uint64_t ops, violations;
	uint32_t rng;
	struct lb_wait_hist *hist;
} __attribute__((aligned(APP_LINE)));

static void app_fatal(const char *what, int err)
{
	fprintf(stderr, "lockbench: %s: %s\n", what, strerror(err));
	exit(LB_EXIT_RUNTIME);
}

static void app_mutex_init(const struct app_impl *im, union app_mutex *m)
{
	pthread_mutexattr_t a;
	int err;

	if (im->tp) {
		qlock_tp_mutex_init(&m->tp);
		return;
	}
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, im->type);
	err = pthread_mutex_init(&m->p, &a);
	pthread_mutexattr_destroy(&a);
	if (err)
		app_fatal("pthread_mutex_init", err);
}

static void app_cond_init(const struct app_impl *im, union app_cond *c)
{
	pthread_condattr_t a;
	int err;

	if (im->tp) {
		qlock_tp_cond_init(&c->tp);
		return;
	}
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	err = pthread_cond_init(&c->p, &a);
	pthread_condattr_destroy(&a);
	if (err)
		app_fatal("pthread_cond_init", err);
}

static void app_destroy(const struct app_impl *im, struct app_shared *sh)
{
	for (int i = 0; i < 2; i++) {
		if (im->tp) {
			qlock_tp_cond_destroy(&sh->cv[i].tp);
			continue;
		}
		pthread_cond_destroy(&sh->cv[i].p);
		pthread_mutex_destroy(&sh->set[i].m.p);
	}
}

static inline void app_lock_untimed(const struct app_impl *im,
				    union app_mutex *m)
{
	if (im->tp)
		qlock_tp_mutex_lock(&m->tp);
	else
		pthread_mutex_lock(&m->p);
}

static inline void app_unlock(const struct app_impl *im, union app_mutex *m)
{
	if (im->tp)
		qlock_tp_mutex_unlock(&m->tp);
	else
		pthread_mutex_unlock(&m->p);
}

/* A lock call of the pattern, its wait recorded. */
static inline void app_lock(struct app_worker *w, union app_mutex *m)
{
	uint64_t t0 = lb_stamp();

	app_lock_untimed(w->sh->im, m);
	lb_wait_add(w->hist, lb_stamp() - t0);
}

static inline void app_wait(const struct app_impl *im, union app_cond *c,
			    union app_mutex *m)
{
	if (im->tp)
		qlock_tp_cond_wait(&c->tp, &m->tp);
	else
		pthread_cond_wait(&c->p, &m->p);
}

/* 0, or ETIMEDOUT once the CLOCK_MONOTONIC deadline passed. */
static inline int app_timedwait(const struct app_impl *im, union app_cond *c,
				union app_mutex *m, const struct timespec *abs)
{
	return im->tp ? qlock_tp_cond_timedwait(&c->tp, &m->tp, abs,
						CLOCK_MONOTONIC)
		      : pthread_cond_timedwait(&c->p, &m->p, abs);
}

static inline void app_signal(const struct app_impl *im, union app_cond *c)
{
	if (im->tp)
		qlock_tp_cond_signal(&c->tp);
	else
		pthread_cond_signal(&c->p);
}

static void app_broadcast(const struct app_impl *im, union app_cond *c)
{
	if (im->tp)
		qlock_tp_cond_broadcast(&c->tp);
	else
		pthread_cond_broadcast(&c->p);
}

/* ---- the patterns ------------------------------------------------------- */

static inline uint32_t app_rand(uint32_t *s)
{
	uint32_t x = *s; /* xorshift32 */

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* Plain accesses, kept in place (the grid's lb_get / lb_set). */
static inline uint32_t app_get(uint32_t *x) { return *(volatile uint32_t *)x; }
static inline void app_set(uint32_t *x, uint32_t v) { *(volatile uint32_t *)x = v; }

static inline bool app_stopping(const struct app_shared *sh)
{
	return qa_read(&sh->stop) != 0;
}

/* Half of the invariant: checks a == b and bumps a; app_leave bumps b. */
static inline uint32_t app_enter(struct app_worker *w, struct app_lockset *s)
{
	uint32_t a = app_get(&s->a);

	if (a != app_get(&s->b))
		w->violations++;
	app_set(&s->a, a + 1);
	return a + 1;
}

static inline void app_leave(struct app_lockset *s, uint32_t a)
{
	app_set(&s->b, a);
}

/* holder-yields, holder-sleeps */
static void app_hold(struct app_worker *w, bool sleeps)
{
	struct app_shared *sh = w->sh;
	struct app_lockset *s = &sh->set[sleeps ? 0 : w->id % 2];

	while (!app_stopping(sh)) {
		uint32_t a;

		app_lock(w, &s->m);
		a = app_enter(w, s);
		if (sleeps) {
			unsigned us = APP_SLEEP_US_MIN +
				      app_rand(&w->rng) %
					      (APP_SLEEP_US_MAX - APP_SLEEP_US_MIN + 1);
			struct timespec ts = { 0, (long)us * 1000 };

			nanosleep(&ts, NULL);
		} else {
			sched_yield();
		}
		app_leave(s, a);
		app_unlock(sh->im, &s->m);
		w->ops++;
	}
}

/* cond-queue: ids below nthreads / 2 produce, the others consume. */
static void app_queue(struct app_worker *w)
{
	struct app_shared *sh = w->sh;
	const struct app_impl *im = sh->im;
	union app_mutex *m = &sh->set[0].m;
	bool producer = w->id < sh->nthreads / 2;
	union app_cond *mine = &sh->cv[producer ? 0 : 1];
	union app_cond *theirs = &sh->cv[producer ? 1 : 0];
	uint64_t next = (uint64_t)w->id << 40;

	for (;;) {
		app_lock(w, m);
		while ((producer ? sh->q.count == APP_QCAP : sh->q.count == 0) &&
		       !app_stopping(sh))
			app_wait(im, mine, m);
		if (app_stopping(sh)) {
			app_unlock(im, m);
			break;
		}
		if (sh->q.count > APP_QCAP)
			w->violations++;
		if (producer) {
			sh->q.item[(sh->q.head + sh->q.count) % APP_QCAP] = ++next;
			sh->q.count++;
			sh->q.put_sum += next;
		} else {
			sh->q.got_sum += sh->q.item[sh->q.head];
			sh->q.head = (sh->q.head + 1) % APP_QCAP;
			sh->q.count--;
		}
		app_signal(im, theirs);
		app_unlock(im, m);
		w->ops++;
	}
}

/* timed-handoff: take the GIL; false when the run is stopping. */
static bool app_take_gil(struct app_worker *w)
{
	struct app_shared *sh = w->sh;
	const struct app_impl *im = sh->im;
	union app_mutex *gm = &sh->set[0].m, *sm = &sh->set[1].m;

	app_lock(w, gm);
	while (sh->gil.locked && !app_stopping(sh)) {
		uint64_t seen = sh->gil.switches;
		uint64_t due = qc_now_ns() + APP_GIL_INTERVAL_NS;
		struct timespec abs = { (time_t)(due / 1000000000u),
					(long)(due % 1000000000u) };

		/* No switch for a whole interval: ask the holder to drop. */
		if (app_timedwait(im, &sh->cv[0], gm, &abs) == ETIMEDOUT &&
		    sh->gil.locked && sh->gil.switches == seen)
			qa_write(&sh->drop_request, 1);
	}
	if (app_stopping(sh)) {
		app_unlock(im, gm);
		return false;
	}
	app_lock(w, sm);
	sh->gil.locked = 1;
	if (sh->gil.holder != w->id + 1) {
		sh->gil.holder = w->id + 1;
		sh->gil.switches++;
	}
	app_signal(im, &sh->cv[1]); /* a holder that dropped on request */
	app_unlock(im, sm);
	qa_write(&sh->drop_request, 0);
	app_unlock(im, gm);
	return true;
}

static void app_drop_gil(struct app_worker *w, bool requested)
{
	struct app_shared *sh = w->sh;
	const struct app_impl *im = sh->im;
	union app_mutex *gm = &sh->set[0].m, *sm = &sh->set[1].m;

	app_lock(w, gm);
	sh->gil.locked = 0;
	app_signal(im, &sh->cv[0]);
	app_unlock(im, gm);
	if (!requested)
		return;
	/* Forced switching: let a waiter have it before wanting it back (one
	 * wait, as CPython's; a spurious wake-up just competes again). */
	app_lock(w, sm);
	if (sh->gil.holder == w->id + 1 && !app_stopping(sh)) {
		qa_write(&sh->drop_request, 0);
		app_wait(im, &sh->cv[1], sm);
	}
	app_unlock(im, sm);
}

static void app_gil(struct app_worker *w)
{
	struct app_shared *sh = w->sh;
	struct app_lockset *s = &sh->set[1];

	if (!app_take_gil(w))
		return;
	for (;;) {
		uint32_t a = app_enter(w, s);

		for (unsigned i = 0; i < APP_GIL_SLICE; i++)
			qa_cpu_relax();
		app_leave(s, a);
		w->ops++;
		if (app_stopping(sh)) {
			app_drop_gil(w, false);
			return;
		}
		if (qa_read(&sh->drop_request)) {
			app_drop_gil(w, true);
			if (!app_take_gil(w))
				return;
		}
	}
}

static void *app_worker_main(void *arg)
{
	struct app_worker *w = arg;
	struct app_shared *sh = w->sh;

	qa_fetch_add_relaxed(&sh->ready, 1);
	while (!qa_read_acquire(&sh->start))
		sched_yield();
	switch (sh->pattern) {
	case MAP_HOLDER_YIELDS: app_hold(w, false); break;
	case MAP_HOLDER_SLEEPS: app_hold(w, true); break;
	case MAP_COND_QUEUE: app_queue(w); break;
	case MAP_TIMED_HANDOFF: app_gil(w); break;
	}
	return NULL;
}

/* Wakes every thread that may wait on a condition variable: the stop
 * flag is set before, so a thread that checks it under the mutex either
 * sees it or is already waiting when the broadcast comes. */
static void app_stop(struct app_shared *sh)
{
	qa_write_release(&sh->stop, 1);
	if (sh->pattern != MAP_COND_QUEUE && sh->pattern != MAP_TIMED_HANDOFF)
		return;
	for (int i = 0; i < 2; i++) {
		union app_mutex *m = &sh->set[sh->pattern == MAP_COND_QUEUE ? 0
									     : i].m;

		app_lock_untimed(sh->im, m);
		app_broadcast(sh->im, &sh->cv[i]);
		app_unlock(sh->im, m);
	}
}

/* ---- one run ------------------------------------------------------------ */

static void app_fail(const struct app_shared *sh, const struct lr_lock *lk,
		     unsigned rep, const char *what)
{
	fprintf(stderr, "\nlockbench: VERIFICATION FAILED: lock %s, %s, %u "
		"threads, rep %u: %s\n", lk->name, map_pattern_name(sh->pattern),
		sh->nthreads, rep + 1, what);
	exit(LB_EXIT_VERIFY);
}

static void app_join(struct app_shared *sh, struct app_worker *w,
		     const struct lr_lock *lk, unsigned rep)
{
	struct timespec abs;

	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += APP_HANG_GRACE_S;
	for (unsigned i = 0; i < sh->nthreads; i++)
		if (pthread_timedjoin_np(w[i].tid, NULL, &abs))
			app_fail(sh, lk, rep, "a thread did not return 10 s "
				 "after the stop flag (lost wake-up or "
				 "deadlock)");
}

static void app_verify(struct app_shared *sh, const struct app_worker *w,
		       const struct lr_lock *lk, unsigned rep)
{
	uint64_t bad = 0, ops[2] = { 0, 0 };
	char msg[256];

	for (unsigned i = 0; i < sh->nthreads; i++) {
		bad += w[i].violations;
		switch (sh->pattern) {
		case MAP_HOLDER_YIELDS: ops[i % 2] += w[i].ops; break;
		case MAP_HOLDER_SLEEPS: ops[0] += w[i].ops; break;
		case MAP_COND_QUEUE: ops[i >= sh->nthreads / 2] += w[i].ops; break;
		case MAP_TIMED_HANDOFF: ops[1] += w[i].ops; break;
		}
	}
	if (bad) {
		snprintf(msg, sizeof(msg), "%llu critical sections saw a torn "
			 "invariant or an overfull queue", (unsigned long long)bad);
		app_fail(sh, lk, rep, msg);
	}
	if (sh->pattern == MAP_COND_QUEUE) {
		uint64_t left = 0;

		for (uint32_t k = 0; k < sh->q.count && k < APP_QCAP; k++)
			left += sh->q.item[(sh->q.head + k) % APP_QCAP];
		if (ops[0] - ops[1] != sh->q.count ||
		    sh->q.put_sum - sh->q.got_sum != left) {
			snprintf(msg, sizeof(msg), "%llu items put, %llu taken, "
				 "%u left in the queue; the sums do not add up "
				 "either: %s", (unsigned long long)ops[0],
				 (unsigned long long)ops[1], sh->q.count,
				 sh->q.put_sum - sh->q.got_sum != left ? "yes"
									: "no");
			app_fail(sh, lk, rep, msg);
		}
		return;
	}
	for (int i = 0; i < 2; i++)
		if (sh->set[i].a != sh->set[i].b ||
		    sh->set[i].a != (uint32_t)ops[i]) {
			snprintf(msg, sizeof(msg), "data a=%u b=%u, completed "
				 "critical sections %llu", sh->set[i].a,
				 sh->set[i].b, (unsigned long long)ops[i]);
			app_fail(sh, lk, rep, msg);
		}
}

static int64_t app_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void app_collect(const struct app_shared *sh, struct app_worker *w,
			uint64_t t0, uint64_t tstop, struct lb_run *out)
{
	double secs = (double)(tstop > t0 ? tstop - t0 : 1) / 1e9;
	struct lb_wait_hist *all = w[0].hist;

	out->thr_min = -1;
	for (unsigned i = 0; i < sh->nthreads; i++) {
		double rate = (double)w[i].ops / secs;

		out->writes += w[i].ops;
		if (out->thr_min < 0 || rate < out->thr_min)
			out->thr_min = rate;
		if (rate > out->thr_max)
			out->thr_max = rate;
		out->thr_avg += rate / sh->nthreads;
		if (i) {
			lb_wait_merge(all, w[i].hist);
			free(w[i].hist);
		}
	}
	out->ops = out->writes;
	out->elapsed_ms = secs * 1e3;
	out->kops = (double)out->ops / secs / 1000.0;
	out->rd_rate = -1;
	out->wr_rate = out->thr_avg;
	out->wait_p50_ns = lb_wait_quantile_ns(all, 0.50);
	out->wait_p99_ns = lb_wait_quantile_ns(all, 0.99);
	out->wait_max_ns = lb_wait_max_ns(all);
	free(all);
}

void map_app_run(const struct map_cell *cell, const struct lr_lock *lk,
		 double run_s, unsigned rep, struct lb_run *out)
{
	const struct app_impl *im = app_impl_of(lk);
	unsigned n = cell->threads;
	struct app_shared *sh = aligned_alloc(2 * APP_LINE, sizeof(*sh));
	struct app_worker *w = aligned_alloc(APP_LINE, sizeof(*w) * n);
	uint64_t t0, tstop;
	int64_t cpu0, cpu1;

	if (!im || cell->pattern == MAP_GRID || !n)
		app_fatal(lk->name, EINVAL);
	if (!sh || !w)
		app_fatal("allocating an app cell", ENOMEM);
	memset(sh, 0, sizeof(*sh));
	memset(w, 0, sizeof(*w) * n);
	memset(out, 0, sizeof(*out));
	sh->im = im;
	sh->pattern = cell->pattern;
	sh->nthreads = n;
	for (int i = 0; i < 2; i++) {
		app_mutex_init(im, &sh->set[i].m);
		app_cond_init(im, &sh->cv[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		int err;

		w[i].sh = sh;
		w[i].id = i;
		w[i].rng = 2463534242u + i * 7919u;
		w[i].hist = calloc(1, sizeof(*w[i].hist));
		if (!w[i].hist)
			app_fatal("allocating wait histograms", ENOMEM);
		err = pthread_create(&w[i].tid, NULL, app_worker_main, &w[i]);
		if (err)
			app_fatal("pthread_create", err);
	}
	while (qa_read_acquire(&sh->ready) < n)
		sched_yield();
	cpu0 = app_cpu_ns();
	t0 = qc_now_ns();
	qa_write_release(&sh->start, 1);
	{
		uint64_t end = t0 + (uint64_t)(run_s * 1e9);
		struct timespec ts = { (time_t)(end / 1000000000u),
				       (long)(end % 1000000000u) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	tstop = qc_now_ns();
	app_stop(sh);
	app_join(sh, w, lk, rep);
	cpu1 = app_cpu_ns();
	out->cpu_busy = cpu0 < 0 || cpu1 < 0
				? -1
				: (double)(cpu1 - cpu0) / (double)(qc_now_ns() - t0);
	app_verify(sh, w, lk, rep);
	app_collect(sh, w, t0, tstop, out);
	out->status = LB_RUN_OK;
	app_destroy(im, sh);
	free(w);
	free(sh);
}
