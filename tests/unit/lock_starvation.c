/* SPDX-License-Identifier: MIT */
/*
 * Starvation: with 4 and 8 threads (oversubscribed on small machines)
 * looping on one lock, every thread must get the lock at least TARGET
 * times before a generous bound.  rwlocks run half reader threads and
 * half writer threads and require both sides to progress, except the
 * side the lock's flags say it may starve by design
 * (LR_MAY_STARVE_WRITERS / LR_MAY_STARVE_READERS).
 *
 * This asserts behaviour, not speed: the bound (BOUND_S) is minutes
 * beyond what any correct lock needs; the main thread waits for the
 * progress on a condition variable, never by sleeping.
 */
#include "rig.h"

#define TARGET 3
#define BOUND_S 120

struct board {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int reached;  /* required threads that reached TARGET */
};

struct run {
	const struct lr_lock *lk;
	void *l;
	uint64_t data;       /* plain, touched under the lock */
	int stop;            /* set by main once every thread progressed */
	struct board board;
	pthread_barrier_t go;
};

struct worker {
	struct run *r;
	bool reader;
	bool required;       /* must progress (not a side that may starve) */
	uint64_t acquired;   /* read by main after join only */
};

static void report_progress(struct run *r)
{
	pthread_mutex_lock(&r->board.mu);
	r->board.reached++;
	pthread_cond_signal(&r->board.cv);
	pthread_mutex_unlock(&r->board.mu);
}

static void acquire_once(struct worker *w)
{
	const struct lr_lock *lk = w->r->lk;

	if (w->reader) {
		lk->rdlock(w->r->l);
		(void)*(volatile uint64_t *)&w->r->data;
		lk->rdunlock(w->r->l);
	} else {
		lk->lock(w->r->l);
		w->r->data++;
		lk->unlock(w->r->l);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&w->r->go);
	/* Relaxed: stop is only a request to leave; join orders the rest. */
	while (!qa_read(&w->r->stop)) {
		acquire_once(w);
		if (++w->acquired == TARGET && w->required)
			report_progress(w->r);
		for (int k = 0; k < 16; k++) /* lock-to-lock gap */
			qa_cpu_relax();
	}
	return NULL;
}

/* Wait until `required` threads reached TARGET; false past the bound.
 * The condition variable runs on CLOCK_MONOTONIC (see run_threads). */
static bool wait_for_progress(struct run *r, int required)
{
	struct timespec bound = rig_deadline_ms(BOUND_S * 1000L);
	bool ok = true;

	pthread_mutex_lock(&r->board.mu);
	while (r->board.reached < required && ok)
		ok = pthread_cond_timedwait(&r->board.cv, &r->board.mu,
					    &bound) != ETIMEDOUT
		     || r->board.reached >= required;
	pthread_mutex_unlock(&r->board.mu);
	return ok;
}

static void run_threads(const struct lr_lock *lk, int nthreads)
{
	struct run r = { .lk = lk };
	struct worker w[8];
	pthread_t t[8];
	bool rw = lk->kind == LR_RWLOCK;
	int required = 0;

	r.l = rig_new_lock(lk);
	pthread_mutex_init(&r.board.mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&r.board.cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_barrier_init(&r.go, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		bool reader = rw && i % 2 == 1;
		unsigned may_starve = reader ? LR_MAY_STARVE_READERS
					     : LR_MAY_STARVE_WRITERS;

		w[i] = (struct worker){ .r = &r, .reader = reader,
					.required = !(rw && (lk->flags & may_starve)) };
		required += w[i].required;
	}
	for (int i = 0; i < nthreads; i++)
		t[i] = rig_spawn(worker_main, &w[i]);

	bool ok = wait_for_progress(&r, required);

	qa_write(&r.stop, 1);
	for (int i = 0; i < nthreads; i++)
		rig_join(t[i]);
	if (!ok) {
		for (int i = 0; i < nthreads; i++)
			fprintf(stderr, "  thread %d (%s%s): %llu acquisitions\n",
				i, w[i].reader ? "reader" : "writer",
				w[i].required ? "" : ", may starve",
				(unsigned long long)w[i].acquired);
		RIG_FAIL("%d threads: a thread made fewer than %d acquisitions in %d s",
			 nthreads, TARGET, BOUND_S);
	}
	pthread_barrier_destroy(&r.go);
	pthread_cond_destroy(&r.board.cv);
	pthread_mutex_destroy(&r.board.mu);
	lr_free(lk, r.l);
}

static void run(const struct lr_lock *lk)
{
	run_threads(lk, 4);
	printf("  %s: 4 threads progressed\n", lk->name);
	run_threads(lk, 8);
	printf("  %s: 8 threads progressed\n", lk->name);
}

int main(int argc, char **argv)
{
	return rig_main(argc, argv, "starvation", run);
}
