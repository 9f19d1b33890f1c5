/* SPDX-License-Identifier: MIT */
/*
 * lockbench internals shared by its modules:
 *   cli.c      options, validation, usage          (lb_parse_*)
 *   locks.c    lock lookup on top of the registry   (lb_lock_*)
 *   workload.c one run: threads, verification       (lb_run_once)
 *   runner.c   an experiment: reps interleaved      (lb_experiment_run)
 *   summary.c  median, spread, paired ratios        (lb_summary_*)
 *   out_table.c / out_data.c  table, CSV and JSON   (lb_out_*)
 *   presets.c  the seed presets, one table entry each
 *   host.c     the machine description in JSON output   (host.h)
 *   json.c     JSON values for every JSON document      (json.h)
 *   report.c   `lockbench report`: runs bench/report/qlock_report.py
 */
#ifndef QLOCK_BENCH_LB_H
#define QLOCK_BENCH_LB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/lockevent.h"
#include "qlock/qlock.h"
#include "lockreg.h"

#define LB_VERSION QLOCK_VERSION_STRING /* lockbench is versioned with qlock */
#define LB_MAX_LOCKS 32
#define LB_MAX_THREAD_COUNTS 32
#define LB_MAX_THREADS 1024
#define LB_MAX_REPS 100

/* Exit statuses (documented in docs/lockbench.md). */
enum { LB_EXIT_OK = 0, LB_EXIT_RUNTIME = 1, LB_EXIT_USAGE = 2,
       LB_EXIT_VERIFY = 3 };

enum lb_workload { LB_W_LOOP, LB_W_RATE, LB_W_FUTEX };
enum lb_data_place { LB_DATA_OTHER_LINE, LB_DATA_SAME_LINE }; /* 0: the default */
enum lb_format { LB_FMT_TABLE, LB_FMT_CSV, LB_FMT_JSON };

/* What one run does; shared by every lock and thread count of an
 * experiment so the locks are compared on identical work. */
struct lb_params {
	enum lb_workload workload;
	uint64_t iters;         /* loop: lock/unlock iterations per thread */
	double duration_s;      /* rate, futex: run time */
	unsigned rd, wr;        /* read:write mix (futex: pct, 100 - pct) */
	bool xthread;           /* separate reader and writer threads */
	unsigned cs_relax;      /* cpu_relax()es inside the critical section */
	unsigned gap_relax;     /* cpu_relax()es between two lock operations */
	unsigned sleep_per_1024;/* CS loads replaced by usleep(1), n/1024 */
	enum lb_data_place data;
	bool pin;
	double max_time_s;      /* per-run guard: DNF past it */
	bool wait_times;        /* time each lock call (map: waittime.h) */
};

/* An experiment: some locks at some thread counts, reps interleaved. */
struct lb_experiment {
	const char *name;       /* "cli", "baseline/rate", "seed-000", ... */
	const char *title;      /* heading printed above the tables */
	struct lb_params p;
	const struct lr_lock *locks[LB_MAX_LOCKS];
	size_t nlocks;
	const struct lr_lock *base; /* ratio reference, or NULL */
	/* Optional column labels ("before", "after"), parallel to locks. */
	const char *labels[LB_MAX_LOCKS];
	unsigned threads[LB_MAX_THREAD_COUNTS];
	size_t nthreads;
	unsigned reps;
	/* The A/A control: locks[aa] is the baseline run a second time in
	 * the same interleaving, named aa_name in the output ("<lock>#2");
	 * 0: none. */
	size_t aa;
	char aa_name[80];
};

/* The name lock l of e has in the output: the A/A copy's own name. */
static inline const char *lb_lock_id(const struct lb_experiment *e, size_t l)
{
	return l && l == e->aa ? e->aa_name : e->locks[l]->name;
}

/* Global output settings. */
struct lb_output {
	enum lb_format fmt;
	bool progress;
};

enum lb_status { LB_RUN_OK, LB_RUN_DNF };

/* Everything one run measured. */
struct lb_run {
	enum lb_status status;
	double elapsed_ms;      /* loop: until the last thread finished */
	uint64_t ops, reads, writes;
	double kops;            /* total ops per second / 1000 */
	double thr_min, thr_avg, thr_max; /* per-thread ops/s */
	double rd_rate, wr_rate;/* per-thread read / write ops/s, averaged
				   over threads that did any; -1 if none */
	bool has_stats;         /* lock has a qc stats class */
	uint64_t fx_calls[QC_NR_OPS]; /* futex wait + wake calls per op */
	uint64_t ev[QC_NR_EVENTS];
	/* Acquisition wait over all threads, ns; -1 unless wait_times. */
	double wait_p50_ns, wait_p99_ns, wait_max_ns;
	/* CPU-seconds the process used per second of the run, from the
	 * start flag to the last join: 2.0 = two CPUs busy throughout.  A
	 * lock whose waiters sleep leaves CPUs idle; one whose waiters spin
	 * or yield keeps them busy (-1: the clock failed). */
	double cpu_busy;
};

/* The results of one experiment: run[lock][thread count][rep]. */
struct lb_results {
	const struct lb_experiment *e;
	struct lb_run *runs;
};

static inline struct lb_run *lb_res_at(const struct lb_results *r, size_t l,
				       size_t t, size_t rep)
{
	const struct lb_experiment *e = r->e;

	return &r->runs[(l * e->nthreads + t) * e->reps + rep];
}

/* Median and min-max of one figure over the reps of a point. */
struct lb_spread {
	double med, min, max;
	unsigned n;             /* reps that finished (DNF excluded) */
};

/* Everything the command line says. */
struct lb_cli {
	struct lb_params p;
	struct lb_output o;
	const char *locks;      /* -l or positional, comma separated */
	const char *threads;    /* -t */
	const char *base;       /* -b */
	unsigned reps;
	bool reps_set, short_mode, list, help, version;
	char shaping_opt[32];   /* first option that shapes an experiment
				   (rejected for presets), or "" */
};

/* cli.c */
void lb_params_default(struct lb_params *p);
int lb_main_cli(int argc, char **argv);
/* Parses argv[first..]; preset mode allows positional preset names only
 * (returned through names/nnames) and no experiment-shaping options. */
void lb_parse_args(int argc, char **argv, int first, bool preset_mode,
		   struct lb_cli *c, const char **names, size_t *nnames);
/* Fills e->locks from a comma list; exits 2 on unknown names. */
void lb_parse_locks(const char *list, struct lb_experiment *e);
void lb_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2),
							 noreturn));
bool lb_parse_thread_list(const char *s, unsigned *out, size_t *n);

/* locks.c */
size_t lb_lock_count(void);
const struct lr_lock *lb_lock_at(size_t i);
const struct lr_lock *lb_lock_find(const char *name);
/* Does this lock support the shared side? */
static inline bool lb_lock_has_readers(const struct lr_lock *lk)
{
	return lk->kind == LR_RWLOCK && lk->rdlock && lk->rdunlock;
}

/* workload.c: one run; exits with LB_EXIT_VERIFY on a violation. */
void lb_run_once(const struct lb_experiment *e, const struct lr_lock *lk,
		 unsigned nthreads, unsigned rep, struct lb_run *out);
const char *lb_workload_name(enum lb_workload w);
const char *lb_data_name(enum lb_data_place d);
/* Is a larger primary figure better (rate, futex) or smaller (loop)? */
bool lb_higher_is_better(enum lb_workload w);
/* The primary figure of a run: ms (loop), kops/s (rate), ops (futex). */
double lb_primary(enum lb_workload w, const struct lb_run *r);
const char *lb_primary_unit(enum lb_workload w);

/* runner.c */
int lb_experiment_run(const struct lb_experiment *e,
		      const struct lb_output *o, struct lb_results *res);
void lb_results_free(struct lb_results *res);
void lb_progress_begin(const struct lb_output *o, double est_total_s);
double lb_experiment_estimate_s(const struct lb_experiment *e);

/* summary.c */
typedef double (*lb_figure_fn)(const struct lb_run *r);
struct lb_spread lb_summary_figure(const struct lb_results *r, size_t l,
				   size_t t, lb_figure_fn f);
/* Ratio of lock l to lock b: ratio of medians, min/max of the per-rep
 * ratios (reps are paired: rep i of both ran back to back). */
struct lb_spread lb_summary_ratio(const struct lb_results *r, size_t l,
				  size_t b, size_t t, lb_figure_fn f);
double lb_median(double *v, unsigned n);
size_t lb_base_index(const struct lb_experiment *e);

/* Output: the document is opened once, experiments added, then closed. */
void lb_out_begin(const struct lb_output *o);
void lb_out_experiment(const struct lb_output *o, const struct lb_results *r);
void lb_out_note(const struct lb_output *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void lb_out_end(const struct lb_output *o);
void lb_out_table(FILE *f, const struct lb_results *r);
void lb_out_csv_header(FILE *f);
void lb_out_csv(FILE *f, const struct lb_results *r);
void lb_out_json_begin(FILE *f);
void lb_out_json_experiment(FILE *f, const struct lb_results *r, bool first);
void lb_out_json_end(FILE *f, const char *notes);
/* Figure accessors used by tables and summaries. */
double lb_fig_ms(const struct lb_run *r);
double lb_fig_kops(const struct lb_run *r);
double lb_fig_ops(const struct lb_run *r);
double lb_fig_thr_min(const struct lb_run *r);
double lb_fig_thr_avg(const struct lb_run *r);
double lb_fig_thr_max(const struct lb_run *r);
double lb_fig_rd_rate(const struct lb_run *r);
double lb_fig_wr_rate(const struct lb_run *r);
lb_figure_fn lb_primary_fn(enum lb_workload w);

/* report.c: `lockbench report`, the seed reproduction report */
int lb_report_main(int argc, char **argv, int first);
/* map.c: `lockbench map` (docs/performance.md) */
int lb_map_main(int argc, char **argv, int first);

/* presets.c */
int lb_preset_main(int argc, char **argv, int first);
void lb_preset_list(FILE *f);

#endif /* QLOCK_BENCH_LB_H */
