/* SPDX-License-Identifier: MIT */
/*
 * lockbench map: a grid of workloads, every cell run for a set of locks
 * with interleaved repetitions, each lock compared to glibc's in the same
 * cell (docs/performance.md).
 *   map.c         options, the grid, running the cells
 *   map_out.c     the heat table and the JSON document
 *   map_dropin.c  --dropin: each run in a child process, with or without
 *                 LD_PRELOAD of libqlock-pthread.so
 */
#ifndef QLOCK_BENCH_MAP_H
#define QLOCK_BENCH_MAP_H

#include "lb.h"

#define MAP_MAX_AXIS 8
#define MAP_MAX_CELLS 512

/* One point of the grid. */
struct map_cell {
	bool rw;                /* rwlock family (else mutex) */
	unsigned threads, cs, gap;
	unsigned read_pct;      /* rw: share of read operations */
	bool split;             /* rw: separate reader and writer threads */
};

/* A lock column: a registered lock, or (--dropin) pthread calls run in
 * a child process with `env` added to its environment. */
struct map_lock {
	const struct lr_lock *lk;
	const char *name;       /* as printed; lk->name unless --dropin */
	const char *env;        /* --dropin: "VAR=value VAR=value" or NULL */
	bool preload;           /* --dropin: LD_PRELOAD the shim */
};

struct map_family {
	struct map_lock locks[LB_MAX_LOCKS];
	size_t nlocks;          /* locks[0] is the baseline (glibc) */
};

struct map_cfg {
	bool short_mode, dropin;
	unsigned reps;
	double duration_s;
	const char *json_path;  /* NULL: no JSON */
	const char *shim;       /* --dropin: path of libqlock-pthread.so */
	const char *self;       /* --dropin: this executable */
	struct map_family fam[2]; /* [0] mutex, [1] rwlock */
	bool fam_on[2];
};

/* Everything measured in one cell, per lock. */
struct map_result {
	struct map_cell cell;
	struct lb_experiment e; /* e.locks parallel to the family's locks */
	struct lb_results res;
};

/* Runs of more threads than this are longer in proportion (map_run_s). */
#define MAP_RUN_THREADS 8

/*
 * A run's length: -d up to MAP_RUN_THREADS threads, and in proportion
 * beyond, so that an oversubscribed thread still gets several scheduler
 * slices per run.  (At 32 threads on 2 CPUs and 0.15 s, writers of a
 * split cell were still starting up when the run ended: ~1 operation
 * each, for every lock, a fairness figure of the start-up, not the lock.)
 */
static inline double map_run_s(const struct map_cfg *c, unsigned threads)
{
	return threads > MAP_RUN_THREADS
		       ? c->duration_s * threads / MAP_RUN_THREADS
		       : c->duration_s;
}

/* map_dropin.c */
void map_dropin_paths(struct map_cfg *c);
void map_dropin_family(struct map_family *f, bool rw);
void map_dropin_run(const struct map_cfg *c, const struct map_lock *ml,
		    const struct map_cell *cell, struct lb_run *out);
int map_cell_child_main(const char *spec);

/* map_out.c */
void map_out_heat(FILE *f, const struct map_cfg *c,
		  const struct map_result *r, size_t n, bool color);
int map_out_json(const char *path, const struct map_cfg *c,
		 const struct map_result *r, size_t n, double wall_s);
double map_fig_slowest(const struct lb_run *r);
double map_fig_p50(const struct lb_run *r);
double map_fig_p99(const struct lb_run *r);
double map_fig_max(const struct lb_run *r);
double map_fig_cpu(const struct lb_run *r);

#endif /* QLOCK_BENCH_MAP_H */
