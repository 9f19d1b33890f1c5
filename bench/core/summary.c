/* SPDX-License-Identifier: MIT */
/*
 * Medians, spreads and paired ratios over the repetitions of a point.
 * The median, not the mean: on 2 noisy vCPUs one rep can be 2-3x off,
 * and the median ignores it while min-max shows it.
 */
#include <stdlib.h>

#include "lb.h"

static int lb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v in place. */
double lb_median(double *v, unsigned n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), lb_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct lb_spread lb_spread_of(double *v, unsigned n)
{
	struct lb_spread s = { 0, 0, 0, n };

	if (!n)
		return s;
	s.med = lb_median(v, n);
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

struct lb_spread lb_summary_figure(const struct lb_results *r, size_t l,
				   size_t t, lb_figure_fn f)
{
	double v[LB_MAX_REPS];
	unsigned n = 0;

	for (unsigned rep = 0; rep < r->e->reps; rep++) {
		const struct lb_run *run = lb_res_at(r, l, t, rep);

		if (run->status == LB_RUN_OK && f(run) >= 0)
			v[n++] = f(run);
	}
	return lb_spread_of(v, n);
}

struct lb_spread lb_summary_ratio(const struct lb_results *r, size_t l,
				  size_t b, size_t t, lb_figure_fn f)
{
	struct lb_spread fl = lb_summary_figure(r, l, t, f);
	struct lb_spread fb = lb_summary_figure(r, b, t, f);
	struct lb_spread s = { 0, 0, 0, 0 };
	double v[LB_MAX_REPS];
	unsigned n = 0;

	for (unsigned rep = 0; rep < r->e->reps; rep++) {
		const struct lb_run *x = lb_res_at(r, l, t, rep);
		const struct lb_run *y = lb_res_at(r, b, t, rep);

		if (x->status == LB_RUN_OK && y->status == LB_RUN_OK &&
		    f(y) > 0 && f(x) >= 0)
			v[n++] = f(x) / f(y);
	}
	if (!n || fb.med <= 0)
		return s;
	s = lb_spread_of(v, n);
	s.med = fl.med / fb.med; /* ratio of medians, as documented */
	return s;
}

size_t lb_base_index(const struct lb_experiment *e)
{
	for (size_t i = 0; i < e->nlocks; i++)
		if (e->locks[i] == e->base)
			return i;
	return 0;
}

double lb_fig_ms(const struct lb_run *r) { return r->elapsed_ms; }
double lb_fig_kops(const struct lb_run *r) { return r->kops; }
double lb_fig_ops(const struct lb_run *r) { return (double)r->ops; }
double lb_fig_thr_min(const struct lb_run *r) { return r->thr_min; }
double lb_fig_thr_avg(const struct lb_run *r) { return r->thr_avg; }
double lb_fig_thr_max(const struct lb_run *r) { return r->thr_max; }
double lb_fig_rd_rate(const struct lb_run *r) { return r->rd_rate; }
double lb_fig_wr_rate(const struct lb_run *r) { return r->wr_rate; }

lb_figure_fn lb_primary_fn(enum lb_workload w)
{
	switch (w) {
	case LB_W_LOOP:
		return lb_fig_ms;
	case LB_W_RATE:
		return lb_fig_kops;
	default:
		return lb_fig_ops;
	}
}

double lb_primary(enum lb_workload w, const struct lb_run *r)
{
	return lb_primary_fn(w)(r);
}

const char *lb_primary_unit(enum lb_workload w)
{
	switch (w) {
	case LB_W_LOOP:
		return "ms";
	case LB_W_RATE:
		return "kops/s";
	default:
		return "ops";
	}
}
