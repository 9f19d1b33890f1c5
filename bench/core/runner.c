/* SPDX-License-Identifier: MIT */
/*
 * Runs an experiment.  Repetitions are interleaved across locks
 * (A B C A B C ...) at each thread count, so slow drifts of a noisy
 * machine hit every lock alike and rep i of two locks forms a pair.
 */
#include <stdlib.h>
#include <unistd.h>

#include "core/futex.h"
#include "lb.h"

/* Progress is shown only when the whole job is expected to take longer
 * than this: short runs should not flicker. */
#define LB_PROGRESS_MIN_S 3.0

static struct {
	bool on;
	uint64_t t0;
	double est_total_s; /* the whole invocation, for the ETA */
	double done_s;      /* estimated seconds of finished runs */
} lb_prog;

void lb_progress_begin(const struct lb_output *o, double est_total_s)
{
	lb_prog.on = o->progress && est_total_s >= LB_PROGRESS_MIN_S;
	lb_prog.t0 = qc_now_ns();
	lb_prog.est_total_s = est_total_s;
	lb_prog.done_s = 0;
}

static void lb_progress_show(const struct lb_experiment *e,
			     const struct lr_lock *lk, unsigned threads,
			     unsigned rep)
{
	double spent = (double)(qc_now_ns() - lb_prog.t0) / 1e9;
	double eta = lb_prog.est_total_s - lb_prog.done_s;

	/* Scale the estimate by how fast the job actually went so far. */
	if (lb_prog.done_s > 0)
		eta *= spent / lb_prog.done_s;
	if (!lb_prog.on)
		return;
	fprintf(stderr, "\r\033[K[%s] %s %u thr rep %u/%u | %.0f s elapsed, "
		"ETA %.0f s", e->name, lk->name, threads, rep + 1, e->reps,
		spent, eta > 0 ? eta : 0);
	fflush(stderr);
}

static void lb_progress_clear(void)
{
	if (lb_prog.on)
		fprintf(stderr, "\r\033[K");
}

/* A guess of one run's wall time, for the ETA (loop runs: unknowable up
 * front, so 1 s; the ETA rescales as runs finish). */
static double lb_run_estimate_s(const struct lb_params *p)
{
	return p->workload == LB_W_LOOP ? 1.0 : p->duration_s + 0.01;
}

double lb_experiment_estimate_s(const struct lb_experiment *e)
{
	return lb_run_estimate_s(&e->p) * (double)(e->nlocks * e->nthreads *
						   e->reps);
}

int lb_experiment_run(const struct lb_experiment *e,
		      const struct lb_output *o, struct lb_results *res)
{
	size_t n = e->nlocks * e->nthreads * e->reps;

	(void)o;
	res->e = e;
	res->runs = calloc(n ? n : 1, sizeof(*res->runs));
	if (!res->runs)
		return -1;
	for (size_t t = 0; t < e->nthreads; t++)
		for (unsigned rep = 0; rep < e->reps; rep++)
			for (size_t l = 0; l < e->nlocks; l++) {
				lb_progress_show(e, e->locks[l], e->threads[t],
						 rep);
				lb_run_once(e, e->locks[l], e->threads[t], rep,
					    lb_res_at(res, l, t, rep));
				lb_prog.done_s += lb_run_estimate_s(&e->p);
			}
	lb_progress_clear();
	return 0;
}

void lb_results_free(struct lb_results *res)
{
	free(res->runs);
	res->runs = NULL;
}
