/* SPDX-License-Identifier: MIT */
/*
 * lockbench map: a grid of workloads, every cell run for a set of locks
 * with interleaved repetitions, each lock compared to glibc's in the same
 * cell (docs/performance.md).
 *   map.c         options, the grid, running the cells
 *   map_out.c     the heat table and the JSON document
 *   map_dropin.c  --dropin: each run in a child process, with or without
 *                 LD_PRELOAD of libqlock-pthread.so
 *   map_apps.c    the application cells (--family apps): a mutex and its
 *                 condition variables as real programs use them
 */
#ifndef QLOCK_BENCH_MAP_H
#define QLOCK_BENCH_MAP_H

#include "lb.h"

#define MAP_MAX_AXIS 8
#define MAP_MAX_CELLS 512

/* The application cells' patterns (map_apps.c); MAP_GRID: a grid cell. */
enum map_pattern {
	MAP_GRID,
	MAP_HOLDER_YIELDS,      /* lock, sched_yield(), unlock; two mutexes */
	MAP_HOLDER_SLEEPS,      /* lock, nanosleep(20-50 us), unlock */
	MAP_COND_QUEUE,         /* producers and consumers, bounded queue */
	MAP_TIMED_HANDOFF,      /* CPython's GIL: timed waits, drop requests */
	MAP_NR_PATTERNS
};

/* The groups of cells, as --family names them and the output orders them. */
enum map_group { MAP_G_MUTEX, MAP_G_RWLOCK, MAP_G_APPS, MAP_NR_GROUPS };

/* One point of the grid, or one application cell. */
struct map_cell {
	bool rw;                /* rwlock family (else mutex) */
	unsigned threads, cs, gap;
	unsigned read_pct;      /* rw: share of read operations */
	bool split;             /* rw: separate reader and writer threads */
	unsigned pattern;       /* enum map_pattern; not MAP_GRID: an app cell
				   of the mutex family (cs, gap unused) */
};

static inline enum map_group map_group_of(const struct map_cell *c)
{
	return c->pattern != MAP_GRID ? MAP_G_APPS
				      : c->rw ? MAP_G_RWLOCK : MAP_G_MUTEX;
}

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
	unsigned hogs;          /* busy processes beside every cell */
	double duration_s;
	const char *json_path;  /* NULL: no JSON */
	const char *shim;       /* --dropin: path of libqlock-pthread.so */
	const char *self;       /* --dropin: this executable */
	struct map_family fam[2]; /* [0] mutex, [1] rwlock */
	bool group_on[MAP_NR_GROUPS];
};

/* Everything measured in one cell, per lock. */
struct map_result {
	struct map_cell cell;
	struct lb_experiment e; /* e.locks parallel to the family's locks */
	struct lb_results res;
	/* Locks the cell does not run (an app cell needs a mutex with a
	 * condition variable): no figures, left out of the output. */
	bool skip[LB_MAX_LOCKS];
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

/* map.c: --hogs, N processes that spin at the caller's priority until
 * map_hogs_stop() (they also die with the caller). */
void map_hogs_start(unsigned n);
void map_hogs_stop(void);

/* map_dropin.c */
void map_dropin_paths(struct map_cfg *c);
/* glibc, the drop-in, the drop-in forwarding to glibc, the library's lock,
 * then each built-in peer of PEERS (NULL-terminated), run in a plain child. */
void map_dropin_family(struct map_family *f, bool rw,
		       const char *const *peers);
void map_dropin_run(const struct map_cfg *c, const struct map_lock *ml,
		    const struct map_cell *cell, struct lb_run *out);
int map_cell_child_main(const char *spec);

/* map_apps.c */
/* "holder-yields", ... (NULL for MAP_GRID) */
const char *map_pattern_name(unsigned pattern);
/* Does the cell run this lock?  Grid cells run every lock of the family,
 * app cells the mutexes that have a condition variable to go with them
 * (glibc's, the TP mutex). */
bool map_app_runs(const struct map_cell *cell, const struct lr_lock *lk);
/* Seconds per run of an app cell (twice map_run_s: the hand-off cell
 * switches every 5 ms). */
double map_app_run_s(const struct map_cfg *c, const struct map_cell *cell);
/* One run of an app cell with this lock, in this process; exits with
 * LB_EXIT_VERIFY on a broken invariant or a thread that does not stop. */
void map_app_run(const struct map_cell *cell, const struct lr_lock *lk,
		 double run_s, unsigned rep, struct lb_run *out);
/* The app cells in run order (at most MAP_APP_CELLS). */
#define MAP_APP_CELLS 12
size_t map_app_cells(struct map_cell *cells);
/* The pattern's fixed set-up as JSON members ("mutexes": 2, ...). */
void map_app_setup_json(FILE *f, const struct map_cell *cell);

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
double map_fig_ops_per_cpu(const struct lb_run *r);

#endif /* QLOCK_BENCH_MAP_H */
