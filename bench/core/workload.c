/* SPDX-License-Identifier: MIT */
/*
 * One benchmark run: one lock, one thread count, one repetition.
 *
 * The lock and the data it protects live in one 64-byte-aligned object
 * allocated per run, lock at offset 0 and data either right behind the
 * lock in its cache line or two lines further (seed 001's two cases).
 * Workers are cache-line aligned, start together on a flag (a pthread
 * barrier would release them one by one through the futex, skewing the
 * first milliseconds), and stop on a flag for timed runs.  The loop
 * workload checks the stop flag every iteration too, so the per-run guard
 * (--max-time) can end a run that crawls (spinlocks oversubscribed).
 *
 * Verification: writers keep data.a == data.b (a is bumped, the critical
 * section load runs, then b is bumped), readers and writers check it on
 * entry; at the end a == b == completed writes (mod 2^32).  A violation is
 * reported loudly and ends lockbench with LB_EXIT_VERIFY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"
#include "lb.h"
#include "waittime.h"

#define LB_LINE 64
/* How long joined threads get after the stop flag before the run counts
 * as hung (a lost wake-up: the lock is broken, not slow). */
#define LB_HANG_GRACE_S 10.0

/* The protected data.  32-bit so it fits behind a 56-byte lock
 * (pthread_rwlock_t) in the same 64-byte line. */
struct lb_data {
	uint32_t a, b;
};

struct lb_shared;

struct lb_worker {
	struct lb_shared *sh;
	pthread_t tid;
	unsigned id;
	bool reader_only, writer_only;
	uint64_t reads, writes;
	uint64_t violations;
	uint64_t end_ns;
	uint32_t rng;
	struct lb_wait_hist *hist; /* NULL unless wait_times */
} __attribute__((aligned(LB_LINE)));

/* State every worker reads; the flags sit in their own line so workers
 * polling them do not share a line with the lock or their counters. */
struct lb_shared {
	uint32_t start __attribute__((aligned(LB_LINE)));
	uint32_t stop;
	uint32_t ready;
	uint32_t finished;
	const struct lr_lock *lk __attribute__((aligned(LB_LINE)));
	void *lock;
	struct lb_data *data;
	const struct lb_params *p;
	bool readers_ok;
};

const char *lb_workload_name(enum lb_workload w)
{
	static const char *const names[] = { "loop", "rate", "futex" };

	return names[w];
}

const char *lb_data_name(enum lb_data_place d)
{
	return d == LB_DATA_SAME_LINE ? "same-line" : "other-line";
}

bool lb_higher_is_better(enum lb_workload w)
{
	return w != LB_W_LOOP;
}

/* ---- the critical section and the work around it ------------------------ */

static inline uint32_t lb_rand(uint32_t *s)
{
	/* xorshift32: cheap, per thread, good enough to pick sleeps. */
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static inline void lb_relax(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		qa_cpu_relax();
}

/* perf bench futex's load(): cs_relax pauses, or with --sleep-ratio a
 * 1 us sleep for that share of operations (exercises the park paths). */
static inline void lb_cs_load(struct lb_worker *w, const struct lb_params *p)
{
	if (p->sleep_per_1024 && (lb_rand(&w->rng) & 1023) < p->sleep_per_1024)
		usleep(1);
	else
		lb_relax(p->cs_relax);
}

/* Plain (non-atomic) accesses: volatile only so the compiler keeps each
 * load and store where the critical section puts it. */
static inline uint32_t lb_get(uint32_t *x)
{
	return *(volatile uint32_t *)x;
}

static inline void lb_set(uint32_t *x, uint32_t v)
{
	*(volatile uint32_t *)x = v;
}

/* Calls lock_fn, timing the call when the run records wait times. */
static inline void lb_acquire(struct lb_worker *w, void (*lock_fn)(void *))
{
	uint64_t t0;

	if (!w->hist) {
		lock_fn(w->sh->lock);
		return;
	}
	t0 = lb_stamp();
	lock_fn(w->sh->lock);
	lb_wait_add(w->hist, lb_stamp() - t0);
}

static inline void lb_write_op(struct lb_worker *w)
{
	struct lb_shared *sh = w->sh;
	struct lb_data *d = sh->data;
	uint32_t a;

	lb_acquire(w, sh->lk->lock);
	a = lb_get(&d->a);
	if (a != lb_get(&d->b))
		w->violations++;
	lb_set(&d->a, a + 1);
	lb_cs_load(w, sh->p);
	lb_set(&d->b, a + 1);
	sh->lk->unlock(sh->lock);
	w->writes++;
}

static inline void lb_read_op(struct lb_worker *w)
{
	struct lb_shared *sh = w->sh;
	struct lb_data *d = sh->data;
	uint32_t a;

	lb_acquire(w, sh->lk->rdlock);
	a = lb_get(&d->a);
	lb_cs_load(w, sh->p);
	if (a != lb_get(&d->b))
		w->violations++;
	sh->lk->rdunlock(sh->lock);
	w->reads++;
}

/* Op k of a thread that mixes: the first wr of every rd + wr ops are
 * writes, as perf bench futex rwlock interleaves per 100 ops. */
static inline bool lb_op_is_read(const struct lb_worker *w, uint64_t k)
{
	const struct lb_params *p = w->sh->p;

	if (!w->sh->readers_ok || w->writer_only)
		return false;
	if (w->reader_only)
		return true;
	return k % (p->rd + p->wr) >= p->wr;
}

static void lb_wait_start(struct lb_worker *w)
{
	struct lb_shared *sh = w->sh;

	qa_fetch_add_relaxed(&sh->ready, 1);
	/* Spin, but yield: oversubscribed, the spinners must not keep the
	 * main thread (which sets the flag) off the CPU. */
	while (!qa_read_acquire(&sh->start))
		sched_yield();
}

static void *lb_worker_main(void *arg)
{
	struct lb_worker *w = arg;
	struct lb_shared *sh = w->sh;
	const struct lb_params *p = sh->p;
	uint64_t limit = p->workload == LB_W_LOOP ? p->iters : UINT64_MAX;

	lb_wait_start(w);
	for (uint64_t k = 0; k < limit; k++) {
		if (qa_read(&sh->stop))
			break;
		if (lb_op_is_read(w, k))
			lb_read_op(w);
		else
			lb_write_op(w);
		lb_relax(p->gap_relax);
	}
	w->end_ns = qc_now_ns();
	qa_fetch_add_release(&sh->finished, 1);
	return NULL;
}

/* ---- setting up and tearing down a run ---------------------------------- */

static size_t lb_round_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

/* Offset of the data inside the run object.  other-line skips a whole
 * line after the lock's lines: the adjacent-line prefetcher works on
 * 128-byte pairs, so the next line alone would still be coupled. */
static size_t lb_data_offset(const struct lr_lock *lk, enum lb_data_place d)
{
	if (d == LB_DATA_SAME_LINE)
		return lb_round_up(lk->size ? lk->size : 1, sizeof(uint32_t));
	return lb_round_up(lk->size ? lk->size : 1, LB_LINE) + LB_LINE;
}

static void lb_fatal(const char *what, int err)
{
	fprintf(stderr, "lockbench: %s: %s\n", what, strerror(err));
	exit(LB_EXIT_RUNTIME);
}

static void *lb_alloc_object(const struct lr_lock *lk, enum lb_data_place d,
			     struct lb_data **data)
{
	size_t off = lb_data_offset(lk, d);
	size_t sz = lb_round_up(off + sizeof(struct lb_data), LB_LINE);
	void *obj = aligned_alloc(LB_LINE, sz);
	int err;

	if (!obj)
		lb_fatal("allocating the lock object", errno);
	memset(obj, 0, sz);
	err = lk->init ? lk->init(obj) : 0;
	if (err)
		lb_fatal(lk->name, err);
	*data = (struct lb_data *)((char *)obj + off);
	return obj;
}

static void lb_set_affinity(pthread_attr_t *attr, unsigned id)
{
	cpu_set_t avail, one;
	unsigned n = 0, want;

	if (sched_getaffinity(0, sizeof(avail), &avail))
		return;
	want = id % (unsigned)CPU_COUNT(&avail);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &avail))
			continue;
		if (n++ == want) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			pthread_attr_setaffinity_np(attr, sizeof(one), &one);
			return;
		}
	}
}

/* Readers for -x: (pct * N + 50) / 100 as perf bench futex rwlock. */
static unsigned lb_reader_threads(const struct lb_params *p, unsigned n)
{
	return (unsigned)(((uint64_t)p->rd * n + (p->rd + p->wr) / 2) /
			  (p->rd + p->wr));
}

static void lb_spawn(struct lb_shared *sh, struct lb_worker *w, unsigned n)
{
	const struct lb_params *p = sh->p;
	unsigned nrd = p->xthread ? lb_reader_threads(p, n) : 0;

	for (unsigned i = 0; i < n; i++) {
		pthread_attr_t attr;
		int err;

		w[i].sh = sh;
		w[i].id = i;
		w[i].rng = 2463534242u + i * 7919u;
		w[i].reader_only = p->xthread && i < nrd;
		w[i].writer_only = p->xthread && i >= nrd;
		if (p->wait_times) {
			w[i].hist = calloc(1, sizeof(*w[i].hist));
			if (!w[i].hist)
				lb_fatal("allocating wait histograms", ENOMEM);
		}
		pthread_attr_init(&attr);
		if (p->pin)
			lb_set_affinity(&attr, i);
		err = pthread_create(&w[i].tid, &attr, lb_worker_main, &w[i]);
		pthread_attr_destroy(&attr);
		if (err)
			lb_fatal("pthread_create", err);
	}
}

static void lb_sleep_until(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Wait for the loop workload's threads; false if the guard fired. */
static bool lb_wait_finished(struct lb_shared *sh, unsigned n,
			     uint64_t deadline)
{
	while (qa_read_acquire(&sh->finished) < n) {
		uint64_t now = qc_now_ns();

		if (now >= deadline)
			return false;
		/* Polling granularity does not bias the result: workers
		 * stamp their own end times. */
		lb_sleep_until(now + 5000000u < deadline ? now + 5000000u
							 : deadline);
	}
	return true;
}

static void lb_join_or_die(struct lb_worker *w, unsigned n,
			   const char *lock, unsigned rep)
{
	struct timespec abs;

	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += (time_t)LB_HANG_GRACE_S;
	for (unsigned i = 0; i < n; i++) {
		if (pthread_timedjoin_np(w[i].tid, NULL, &abs) == 0)
			continue;
		fprintf(stderr,
			"\nlockbench: VERIFICATION FAILED: lock %s, %u threads, "
			"rep %u: thread %u did not return %.0f s after the stop "
			"flag (lost wake-up or deadlock)\n",
			lock, n, rep + 1, i, LB_HANG_GRACE_S);
		exit(LB_EXIT_VERIFY);
	}
}

/* ---- results ------------------------------------------------------------ */

/* CPU time of every thread of the process, the exited ones included. */
static int64_t lb_process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double lb_cpu_busy(int64_t cpu0, uint64_t t0)
{
	int64_t cpu1 = lb_process_cpu_ns();
	uint64_t wall = qc_now_ns() - t0;

	return cpu0 < 0 || cpu1 < 0 || !wall ? -1
					     : (double)(cpu1 - cpu0) / (double)wall;
}

static void lb_collect_threads(const struct lb_worker *w, unsigned n,
			       uint64_t t0, uint64_t tstop, bool timed,
			       struct lb_run *out)
{
	double rsum = 0, wsum = 0;
	unsigned rn = 0, wn = 0;
	uint64_t tend = t0;

	out->thr_min = -1;
	out->thr_max = 0;
	out->thr_avg = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t end = timed ? tstop : w[i].end_ns;
		double secs = (double)(end > t0 ? end - t0 : 1) / 1e9;
		double ops = (double)(w[i].reads + w[i].writes);

		out->reads += w[i].reads;
		out->writes += w[i].writes;
		if (out->thr_min < 0 || ops / secs < out->thr_min)
			out->thr_min = ops / secs;
		if (ops / secs > out->thr_max)
			out->thr_max = ops / secs;
		out->thr_avg += ops / secs / n;
		if (w[i].reads) {
			rsum += (double)w[i].reads / secs;
			rn++;
		}
		if (w[i].writes || w[i].writer_only) {
			wsum += (double)w[i].writes / secs;
			wn++;
		}
		if (end > tend)
			tend = end;
	}
	out->ops = out->reads + out->writes;
	out->elapsed_ms = (double)(tend - t0) / 1e6;
	out->kops = (double)out->ops / ((double)(tend - t0) / 1e9) / 1000.0;
	out->rd_rate = rn ? rsum / rn : -1;
	out->wr_rate = wn ? wsum / wn : -1;
}

/* Merges the workers' wait histograms into the run's percentiles and
 * frees them. */
static void lb_collect_waits(struct lb_worker *w, unsigned n,
			     struct lb_run *out)
{
	struct lb_wait_hist *all;

	out->wait_p50_ns = out->wait_p99_ns = out->wait_max_ns = -1;
	if (!n || !w[0].hist)
		return;
	all = w[0].hist;
	for (unsigned i = 1; i < n; i++) {
		lb_wait_merge(all, w[i].hist);
		free(w[i].hist);
	}
	out->wait_p50_ns = lb_wait_quantile_ns(all, 0.50);
	out->wait_p99_ns = lb_wait_quantile_ns(all, 0.99);
	out->wait_max_ns = lb_wait_max_ns(all);
	free(all);
}

static void lb_collect_stats(const struct lr_lock *lk, struct lb_run *out)
{
	struct qc_class_stats s;
	int c = lk->stats_class ? qc_class_lookup(lk->stats_class) : -1;

	out->has_stats = c >= 0;
	if (c < 0)
		return;
	qc_stats_read((enum qc_class)c, &s);
	for (int op = 0; op < QC_NR_OPS; op++)
		out->fx_calls[op] = s.fx[op][QC_FX_WAIT] + s.fx[op][QC_FX_WAKE];
	memcpy(out->ev, s.ev, sizeof(out->ev));
}

static void lb_verify(const struct lb_shared *sh, const struct lb_worker *w,
		      unsigned n, unsigned rep, const struct lb_run *r)
{
	uint64_t bad = 0;

	for (unsigned i = 0; i < n; i++)
		bad += w[i].violations;
	if (!bad && sh->data->a == sh->data->b &&
	    sh->data->a == (uint32_t)r->writes)
		return;
	fprintf(stderr,
		"\nlockbench: VERIFICATION FAILED: lock %s, %u threads, rep %u, "
		"%s workload: %llu critical sections saw a torn invariant; "
		"data a=%u b=%u, completed writes %llu (mod 2^32 %u)\n",
		sh->lk->name, n, rep + 1, lb_workload_name(sh->p->workload),
		(unsigned long long)bad, sh->data->a, sh->data->b,
		(unsigned long long)r->writes, (uint32_t)r->writes);
	exit(LB_EXIT_VERIFY);
}

void lb_run_once(const struct lb_experiment *e, const struct lr_lock *lk,
		 unsigned nthreads, unsigned rep, struct lb_run *out)
{
	const struct lb_params *p = &e->p;
	struct lb_shared *sh = aligned_alloc(LB_LINE, sizeof(*sh));
	struct lb_worker *w = aligned_alloc(LB_LINE, sizeof(*w) * nthreads);
	uint64_t t0, tstop = 0;
	int64_t cpu0;
	void *obj;
	bool timed = p->workload != LB_W_LOOP;

	if (!sh || !w)
		lb_fatal("allocating workers", ENOMEM);
	memset(sh, 0, sizeof(*sh));
	memset(w, 0, sizeof(*w) * nthreads);
	memset(out, 0, sizeof(*out));
	obj = lb_alloc_object(lk, p->data, &sh->data);
	sh->lk = lk;
	sh->lock = obj;
	sh->p = p;
	sh->readers_ok = lb_lock_has_readers(lk) && p->rd > 0;

	/* No worker counts yet: this is the moment to zero the counters. */
	qc_stats_reset();
	lb_spawn(sh, w, nthreads);
	while (qa_read_acquire(&sh->ready) < nthreads)
		sched_yield();
	cpu0 = lb_process_cpu_ns();
	t0 = qc_now_ns();
	qa_write_release(&sh->start, 1);

	if (timed) {
		lb_sleep_until(t0 + (uint64_t)(p->duration_s * 1e9));
		tstop = qc_now_ns();
		qa_write_release(&sh->stop, 1);
	} else if (!lb_wait_finished(sh, nthreads,
				     t0 + (uint64_t)(p->max_time_s * 1e9))) {
		qa_write_release(&sh->stop, 1);
		out->status = LB_RUN_DNF;
	}
	lb_join_or_die(w, nthreads, lk->name, rep);
	out->cpu_busy = lb_cpu_busy(cpu0, t0);

	lb_collect_threads(w, nthreads, t0, tstop, timed, out);
	lb_collect_stats(lk, out);
	lb_collect_waits(w, nthreads, out);
	lb_verify(sh, w, nthreads, rep, out);

	if (lk->destroy)
		lk->destroy(obj);
	free(obj);
	free(w);
	free(sh);
}
