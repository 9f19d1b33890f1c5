/* SPDX-License-Identifier: MIT */
/*
 * Plain-text tables laid out like the seed patches' tables:
 *   loop/rate: one row per thread count, one column per lock, and a
 *              "% change" column for two locks (seeds 000-003) or a ratio
 *              table to the baseline for more;
 *   futex:     one row per metric, one column per lock (seed 004).
 * Every figure is the median over the reps with [min-max]; fairness
 * (per-thread min/avg/max, reader vs writer rates) follows each table.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lb.h"

#define LB_CELL 48
#define LB_MAX_ROWS 64
#define LB_MAX_COLS (LB_MAX_LOCKS + 2)

struct lb_table {
	char cell[LB_MAX_ROWS][LB_MAX_COLS][LB_CELL];
	size_t rows, cols;
};

static void lb_cellf(struct lb_table *t, size_t r, size_t c, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));

static void lb_cellf(struct lb_table *t, size_t r, size_t c, const char *fmt,
		     ...)
{
	va_list ap;

	if (r >= LB_MAX_ROWS || c >= LB_MAX_COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(t->cell[r][c], LB_CELL, fmt, ap);
	va_end(ap);
	if (r >= t->rows)
		t->rows = r + 1;
	if (c >= t->cols)
		t->cols = c + 1;
}

/* Row 0 is the header; a dashed rule goes under it, as in the seeds. */
static void lb_table_print(FILE *f, const struct lb_table *t)
{
	size_t w[LB_MAX_COLS] = { 0 };

	for (size_t r = 0; r < t->rows; r++)
		for (size_t c = 0; c < t->cols; c++)
			if (strlen(t->cell[r][c]) > w[c])
				w[c] = strlen(t->cell[r][c]);
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++)
			fprintf(f, c ? " | %*s" : "%-*s", (int)w[c],
				t->cell[r][c]);
		fputc('\n', f);
		if (r)
			continue;
		for (size_t c = 0; c < t->cols; c++) {
			fputs(c ? " | " : "", f);
			for (size_t i = 0; i < w[c]; i++)
				fputc('-', f);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* 1234567.8 -> "1,234,568"; small values keep a decimal or two. */
static char *lb_fmt_num(char *buf, size_t n, double v)
{
	char digits[40];
	int prec = v >= 100 || v <= -100 || v == (double)(int64_t)v
		   ? 0 : (v >= 10 || v <= -10 ? 1 : 2);
	size_t len, lead, o = 0;
	const char *s = digits;

	snprintf(digits, sizeof(digits), "%.*f", prec, v);
	if (*s == '-')
		buf[o++] = *s++;
	len = strcspn(s, ".");
	lead = len % 3 ? len % 3 : 3;
	for (size_t i = 0; i < len && o + 2 < n; i++) {
		if (i && (i - lead) % 3 == 0 && i >= lead)
			buf[o++] = ',';
		buf[o++] = s[i];
	}
	snprintf(buf + o, n - o, "%s", s + len);
	return buf;
}

/* Compact form for fairness cells: 3 significant digits with k/M/G. */
static char *lb_fmt_si(char *buf, size_t n, double v)
{
	const char *unit = "";

	if (v < 0) {
		snprintf(buf, n, "-");
		return buf;
	}
	if (v >= 1e9) { v /= 1e9; unit = "G"; }
	else if (v >= 1e6) { v /= 1e6; unit = "M"; }
	else if (v >= 1e3) { v /= 1e3; unit = "k"; }
	snprintf(buf, n, "%.*f%s", v >= 100 ? 0 : (v >= 10 ? 1 : 2), v, unit);
	return buf;
}

static void lb_cell_spread(struct lb_table *t, size_t r, size_t c,
			   struct lb_spread s)
{
	char m[32], lo[32], hi[32];

	if (!s.n) {
		lb_cellf(t, r, c, "DNF");
		return;
	}
	lb_cellf(t, r, c, "%s [%s-%s]", lb_fmt_num(m, sizeof(m), s.med),
		 lb_fmt_num(lo, sizeof(lo), s.min),
		 lb_fmt_num(hi, sizeof(hi), s.max));
}

static void lb_cell_change(struct lb_table *t, size_t r, size_t c,
			   struct lb_spread s)
{
	if (!s.n)
		lb_cellf(t, r, c, "-");
	else
		lb_cellf(t, r, c, "%+.1f%% [%+.1f..%+.1f]", (s.med - 1) * 100,
			 (s.min - 1) * 100, (s.max - 1) * 100);
}

static void lb_cell_ratio(struct lb_table *t, size_t r, size_t c,
			  struct lb_spread s)
{
	if (!s.n)
		lb_cellf(t, r, c, "-");
	else
		/* Starved spinlocks give ratios far below 0.01: keep digits. */
		lb_cellf(t, r, c, s.min < 0.1 ? "%.3f [%.3f-%.3f]" : "%.2f [%.2f-%.2f]",
			 s.med, s.min, s.max);
}

static void lb_print_heading(FILE *f, const struct lb_experiment *e)
{
	const struct lb_params *p = &e->p;

	fprintf(f, "== %s ==\n", e->title ? e->title : e->name);
	fprintf(f, "workload %s: ", lb_workload_name(p->workload));
	if (p->workload == LB_W_LOOP)
		fprintf(f, "%llu iterations per thread, ",
			(unsigned long long)p->iters);
	else
		fprintf(f, "%.3g s per run, ", p->duration_s);
	if (p->workload == LB_W_FUTEX)
		fprintf(f, "%u%% readers%s, ", 100 * p->rd / (p->rd + p->wr),
			p->xthread ? " (separate threads)" : "");
	else if (!p->rd)
		fprintf(f, "writes only, ");
	else
		fprintf(f, "R:W %u:%u%s (mutexes: writes only), ", p->rd, p->wr,
			p->xthread ? " (separate threads)" : "");
	fprintf(f, "load L=%u, lock-to-lock D=%u, ", p->cs_relax, p->gap_relax);
	if (p->sleep_per_1024)
		fprintf(f, "sleep %u/1024, ", p->sleep_per_1024);
	fprintf(f, "data %s%s, %u reps interleaved\n", lb_data_name(p->data),
		p->pin ? ", pinned" : "", e->reps);
	for (size_t l = 0; l < e->nlocks; l++)
		if (e->labels[l])
			fprintf(f, "%s = %s\n", e->labels[l], lb_lock_id(e, l));
	fprintf(f, "cells: median [min-max] over reps; ratios: ratio of medians "
		"[min-max of per-rep ratios]\n\n");
}

/* Column header of lock l: its label when the experiment has one. */
static const char *lb_col_name(const struct lb_experiment *e, size_t l)
{
	return e->labels[l] ? e->labels[l] : lb_lock_id(e, l);
}

static bool lb_any_readers(const struct lb_experiment *e)
{
	for (size_t l = 0; l < e->nlocks; l++)
		if (lb_lock_has_readers(e->locks[l]) && e->p.rd)
			return true;
	return false;
}

/*
 * Seeds 000-003: Threads | lockA | lockB | % change [| more locks ...].
 * With two locks the change is the other lock against the baseline; with
 * more, in a seed table (its columns are labelled), the seed's "after"
 * (second column) against its "before" (first), and the other locks follow
 * for scale (their ratios in the next table).
 */
static size_t lb_primary_col(size_t l)
{
	return l < 2 ? l + 1 : l + 2;
}

static void lb_print_primary(FILE *f, const struct lb_results *r)
{
	const struct lb_experiment *e = r->e;
	lb_figure_fn fig = lb_primary_fn(e->p.workload);
	size_t b = lb_base_index(e);
	bool two = e->nlocks == 2;
	bool change = two || (e->nlocks > 2 && e->labels[0] && e->labels[1]);
	size_t from = two ? b : 0, to = two ? (b == 0 ? 1 : 0) : 1;
	struct lb_table *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	fprintf(f, "%s (%s is better)\n",
		e->p.workload == LB_W_LOOP ? "Total execution time in ms"
					   : "Total locking rate in kops/s",
		lb_higher_is_better(e->p.workload) ? "higher" : "lower");
	lb_cellf(t, 0, 0, "Threads");
	for (size_t l = 0; l < e->nlocks; l++)
		lb_cellf(t, 0, change ? lb_primary_col(l) : l + 1, "%s",
			 lb_col_name(e, l));
	if (change)
		lb_cellf(t, 0, 3, "%% change (%s vs %s)", lb_col_name(e, to),
			 lb_col_name(e, from));
	for (size_t th = 0; th < e->nthreads; th++) {
		lb_cellf(t, th + 1, 0, "%u", e->threads[th]);
		for (size_t l = 0; l < e->nlocks; l++)
			lb_cell_spread(t, th + 1,
				       change ? lb_primary_col(l) : l + 1,
				       lb_summary_figure(r, l, th, fig));
		if (change)
			lb_cell_change(t, th + 1, 3,
				       lb_summary_ratio(r, to, from, th, fig));
	}
	lb_table_print(f, t);
	free(t);
}

/* More than two locks: each one's ratio to the baseline. */
static void lb_print_ratios(FILE *f, const struct lb_results *r)
{
	const struct lb_experiment *e = r->e;
	lb_figure_fn fig = lb_primary_fn(e->p.workload);
	size_t b = lb_base_index(e), c = 1;
	struct lb_table *t;

	if (e->nlocks <= 2 || !(t = calloc(1, sizeof(*t))))
		return;
	fprintf(f, "Ratio to %s (%s)\n", e->locks[b]->name,
		lb_primary_unit(e->p.workload));
	lb_cellf(t, 0, 0, "Threads");
	for (size_t l = 0; l < e->nlocks; l++)
		if (l != b)
			lb_cellf(t, 0, c++, "%s", lb_col_name(e, l));
	for (size_t th = 0; th < e->nthreads; th++) {
		lb_cellf(t, th + 1, 0, "%u", e->threads[th]);
		c = 1;
		for (size_t l = 0; l < e->nlocks; l++)
			if (l != b)
				lb_cell_ratio(t, th + 1, c++,
					      lb_summary_ratio(r, l, b, th, fig));
	}
	lb_table_print(f, t);
	free(t);
}

/* One fairness cell: "min/avg/max" per-thread ops/s, plus the reader and
 * writer rates for a lock that has readers in this experiment. */
static void lb_cell_fairness(struct lb_table *t, size_t row, size_t col,
			     const struct lb_results *r, size_t l, size_t th,
			     bool rw)
{
	struct lb_spread mn = lb_summary_figure(r, l, th, lb_fig_thr_min);
	struct lb_spread av = lb_summary_figure(r, l, th, lb_fig_thr_avg);
	struct lb_spread mx = lb_summary_figure(r, l, th, lb_fig_thr_max);
	struct lb_spread rd = lb_summary_figure(r, l, th, lb_fig_rd_rate);
	struct lb_spread wr = lb_summary_figure(r, l, th, lb_fig_wr_rate);
	char a[16], b[16], c[16], d[16], e[16];

	if (!av.n) {
		lb_cellf(t, row, col, "DNF");
		return;
	}
	lb_fmt_si(a, sizeof(a), mn.med);
	lb_fmt_si(b, sizeof(b), av.med);
	lb_fmt_si(c, sizeof(c), mx.med);
	if (!rw) {
		lb_cellf(t, row, col, "%s/%s/%s", a, b, c);
		return;
	}
	lb_fmt_si(d, sizeof(d), rd.n ? rd.med : -1);
	lb_fmt_si(e, sizeof(e), wr.n ? wr.med : -1);
	lb_cellf(t, row, col, "%s/%s/%s rd %s wr %s", a, b, c, d, e);
}

/* Fairness next to throughput: per-thread min/avg/max, rd/wr rates. */
static void lb_print_fairness(FILE *f, const struct lb_results *r)
{
	const struct lb_experiment *e = r->e;
	bool rw = lb_any_readers(e);
	struct lb_table *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	fprintf(f, "Fairness: per-thread ops/s min/avg/max%s (medians over "
		"reps)\n", rw ? "; rd/wr: reader and writer ops/s per thread" : "");
	lb_cellf(t, 0, 0, "Threads");
	for (size_t l = 0; l < e->nlocks; l++)
		lb_cellf(t, 0, l + 1, "%s", lb_col_name(e, l));
	for (size_t th = 0; th < e->nthreads; th++) {
		lb_cellf(t, th + 1, 0, "%u", e->threads[th]);
		for (size_t l = 0; l < e->nlocks; l++)
			lb_cell_fairness(t, th + 1, l + 1, r, l, th,
					 rw && lb_lock_has_readers(e->locks[l]));
	}
	lb_table_print(f, t);
	free(t);
}

/* ---- futex workload: seed 004's metric-per-row layout ------------------- */

/* need_stats: a counter row; counts print as integers ("-" when the lock
 * keeps no counters). */
static void lb_futex_row(struct lb_table *t, size_t row, const char *label,
			 const struct lb_results *r, size_t th, lb_figure_fn fig,
			 bool need_stats)
{
	const struct lb_experiment *e = r->e;
	char m[32];

	lb_cellf(t, row, 0, "%s", label);
	for (size_t l = 0; l < e->nlocks; l++) {
		struct lb_spread s = lb_summary_figure(r, l, th, fig);

		if (need_stats && !lb_res_at(r, l, th, 0)->has_stats)
			lb_cellf(t, row, l + 1, "-");
		else if (!s.n)
			lb_cellf(t, row, l + 1, "-");
		else if (need_stats || fig == lb_fig_ops || s.med >= 100)
			lb_cellf(t, row, l + 1, "%s", lb_fmt_num(m, sizeof(m),
							  (double)(uint64_t)(s.med + 0.5)));
		else
			lb_cellf(t, row, l + 1, "%s", lb_fmt_num(m, sizeof(m), s.med));
	}
}

/* Figures picked by index need a thread-local selector: the table code
 * passes plain function pointers around. */
static _Thread_local int lb_sel;
static double lb_fig_fx(const struct lb_run *r) { return (double)r->fx_calls[lb_sel]; }
static double lb_fig_ev(const struct lb_run *r) { return (double)r->ev[lb_sel]; }

static bool lb_event_seen(const struct lb_results *r, size_t th, int ev)
{
	for (size_t l = 0; l < r->e->nlocks; l++)
		for (unsigned rep = 0; rep < r->e->reps; rep++)
			if (lb_res_at(r, l, th, rep)->ev[ev])
				return true;
	return false;
}

static void lb_print_futex_point(FILE *f, const struct lb_results *r, size_t th)
{
	static const char *const fx_label[] = {
		"Write lock futex calls", "Write unlock futex calls",
		"Read lock futex calls", "Read unlock futex calls",
	};
	const struct lb_experiment *e = r->e;
	struct lb_table *t = calloc(1, sizeof(*t));
	size_t row = 1, b = lb_base_index(e);
	char label[64];

	if (!t)
		return;
	fprintf(f, "%u threads\n", e->threads[th]);
	lb_cellf(t, 0, 0, "%s", "");
	for (size_t l = 0; l < e->nlocks; l++)
		lb_cellf(t, 0, l + 1, "%s", lb_col_name(e, l));
	lb_futex_row(t, row++, "Total locking ops", r, th, lb_fig_ops, false);
	lb_futex_row(t, row++, "Per-thread avg/sec", r, th, lb_fig_thr_avg, false);
	lb_futex_row(t, row++, "Per-thread min/sec", r, th, lb_fig_thr_min, false);
	lb_futex_row(t, row++, "Per-thread max/sec", r, th, lb_fig_thr_max, false);
	lb_futex_row(t, row++, "Reader rate/sec", r, th, lb_fig_rd_rate, false);
	lb_futex_row(t, row++, "Writer rate/sec", r, th, lb_fig_wr_rate, false);
	for (lb_sel = 0; lb_sel < 4; lb_sel++)
		lb_futex_row(t, row++, fx_label[lb_sel], r, th, lb_fig_fx, true);
	for (lb_sel = 0; lb_sel < QC_NR_EVENTS; lb_sel++) {
		if (!lb_event_seen(r, th, lb_sel))
			continue;
		snprintf(label, sizeof(label), "Lock events: %s",
			 qc_event_name((enum qc_event)lb_sel));
		lb_futex_row(t, row++, label, r, th, lb_fig_ev, true);
	}
	lb_cellf(t, row, 0, "Total ops [min-max]");
	for (size_t l = 0; l < e->nlocks; l++)
		lb_cell_spread(t, row, l + 1, lb_summary_figure(r, l, th, lb_fig_ops));
	row++;
	lb_cellf(t, row, 0, "Total ops ratio to %s", e->locks[b]->name);
	for (size_t l = 0; l < e->nlocks; l++)
		lb_cell_ratio(t, row, l + 1,
			      lb_summary_ratio(r, l, b, th, lb_fig_ops));
	lb_table_print(f, t);
	free(t);
}

void lb_out_table(FILE *f, const struct lb_results *r)
{
	const struct lb_experiment *e = r->e;

	lb_print_heading(f, e);
	if (e->p.workload == LB_W_FUTEX) {
		fprintf(f, "Medians over reps; futex calls are wait + wake "
			"system calls per operation kind (\"-\": lock keeps no "
			"counters)\n");
		for (size_t th = 0; th < e->nthreads; th++)
			lb_print_futex_point(f, r, th);
		return;
	}
	lb_print_primary(f, r);
	lb_print_ratios(f, r);
	lb_print_fairness(f, r);
}
