/* SPDX-License-Identifier: MIT */
/*
 * Presets: the seed experiments as data.  A preset is a list of parts;
 * each part is one experiment (workload, locks, thread list, params, and
 * the scaled-down values --short uses).  Adding a preset is adding an
 * entry to lb_presets[] below.
 *
 * Table layout follows the lock order: with two locks, the first is the
 * "before" column, the second the "after" column, and the table gets a
 * "% change" column (after vs before); labels name the columns.
 *
 * A preset whose `needs` locks are not all registered is skipped with a
 * note (a build without that lock family); inside a preset that
 * runs, individual unregistered locks are skipped with a note.
 */
#include <stdlib.h>
#include <string.h>

#include "lb.h"

struct lb_preset_part {
	const char *name, *title;
	enum lb_workload workload;
	const char *locks;      /* comma list, in column order */
	const char *labels;     /* comma list parallel to locks, or NULL */
	const char *base;       /* ratio reference, NULL: first lock */
	const char *threads, *threads_short;
	uint64_t iters, iters_short;          /* loop */
	double duration_s, duration_short_s;  /* rate, futex */
	unsigned rd, wr;        /* R:W (futex: read pct, 100 - pct) */
	bool xthread;
	unsigned load, lock_lat;
	unsigned sleep_per_1024; /* --sleep-ratio */
	enum lb_data_place data;
	unsigned reps, reps_short;
	/* Run the baseline a second time in the same interleaving (the A/A
	 * control of the report's verdict, docs/bench-report.md): set on the
	 * parts whose rows carry a seed's verdict. */
	bool aa;
};

#define LB_MAX_PARTS 8 /* seed 004 has 8 tables */

struct lb_preset {
	const char *name, *desc;
	const char *needs;      /* comma list; all registered or skip */
	struct lb_preset_part parts[LB_MAX_PARTS];
};

#define BASELINE_MUTEXES "pthread-mutex,pthread-mutex-adaptive," \
	"pthread-spinlock,ticket,ttas,ww-mutex,ck-mcs,ck-ticket"
#define BASELINE_RWLOCKS "pthread-rwlock,pthread-rwlock-wpref," \
	"ww-rwlock-rpref,ww-rwlock-wpref,ck-rwlock"

/* Seed 002's two tables differ only in --sleep-ratio. */
#define SEED002_RUN                                                         \
	.workload = LB_W_RATE,                                              \
	.locks = "rwsem-wake-front,rwsem,pthread-rwlock,qrwlock",           \
	.labels = "Pre-patch,Post-patch,glibc rwlock,qrwlock",              \
	.base = "rwsem-wake-front",                                         \
	.threads = "4,8,16,32,64,240", .threads_short = "4,16,64",            \
	.duration_s = 2, .duration_short_s = 0.5,                           \
	.rd = 1, .wr = 1, .xthread = true, .load = 50, .lock_lat = 50,      \
	.reps = 5, .reps_short = 3

static const struct lb_preset lb_presets[] = {
	/* ---- seed 000: qrwlock, byte cmpxchg for _QW_WAITING (2015) ----
	 * Columns: the seed's before/after (the 2015 layout, WAITING set by a
	 * whole-word cmpxchg loop vs a byte cmpxchg), then today's qrwlock and
	 * the glibc and Concurrency Kit rwlocks for scale (ck-rwlock only when
	 * libck-dev is installed).  "% change" of the seed = the after/before
	 * ratio.  5M iterations per thread as the seed; for another length run
	 * the plain command the heading describes with -n.  --short runs the
	 * rows where the patch saw an effect (2-6 threads) and 10 and 20. */
	{ "000", "qrwlock 2015: byte cmpxchg for _QW_WAITING (loop, R:W 5:1, ms)",
	  "qrwlock-2015-cmpxchg-loop,qrwlock-2015-byte",
	  { { .name = "seed-000", .title = "seed 000: qrwlock _QW_WAITING byte "
	      "cmpxchg, 5M read/write lock loop, R:W 5:1",
	      .workload = LB_W_LOOP,
	      .locks = "qrwlock-2015-cmpxchg-loop,qrwlock-2015-byte,qrwlock,"
		       "pthread-rwlock,pthread-rwlock-wpref,ck-rwlock",
	      .labels = "before,after,qrwlock,pthread-rwlock,"
			"pthread-rwlock-wpref,ck-rwlock",
	      .threads = "2-10,15,20", .threads_short = "2-6,10,20",
	      .iters = 5000000, .iters_short = 200000,
	      .rd = 5, .wr = 1, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3,
	      .aa = true } } },

	/* ---- seed 001: qspinlock, cmpxchg wait for the pending owner ----
	 * Slot: needs qspinlock-cmpxchg-wait (the RFC) and qspinlock.  5 reps
	 * in short mode too: the RFC lists 5 runs of each and their total. */
	{ "001", "qspinlock RFC: cmpxchg-wait vs load-acquire, data in/out of "
	  "the lock line (loop, 2 threads, ms)",
	  "qspinlock,qspinlock-cmpxchg-wait",
	  { { .name = "seed-001-same-line", .title = "seed 001 A: data in the "
	      "lock's cache line, 2 threads",
	      .workload = LB_W_LOOP, .locks = "qspinlock,qspinlock-cmpxchg-wait",
	      .labels = "load version,lock cmpxchg version",
	      .threads = "2", .threads_short = "2",
	      .iters = 5000000, .iters_short = 500000,
	      .rd = 0, .wr = 1, .load = 1, .lock_lat = 1,
	      .data = LB_DATA_SAME_LINE, .reps = 5, .reps_short = 5,
	      .aa = true },
	    { .name = "seed-001-other-line", .title = "seed 001 B: data in a "
	      "different cache line, 2 threads",
	      .workload = LB_W_LOOP, .locks = "qspinlock,qspinlock-cmpxchg-wait",
	      .labels = "load version,lock cmpxchg version",
	      .threads = "2", .threads_short = "2",
	      .iters = 5000000, .iters_short = 500000,
	      .rd = 0, .wr = 1, .load = 1, .lock_lat = 1,
	      .data = LB_DATA_OTHER_LINE, .reps = 5, .reps_short = 5,
	      .aa = true } } },

	/* ---- seed 002: rwsem wakes almost all readers (2019) ----
	 * Columns: the seed's before/after (rwsem-wake-front: wake only the
	 * readers in front of the first queued writer; rwsem: up to 256
	 * readers from the whole queue), then glibc's rwlock and the queued
	 * rwlock for scale.  Equal numbers of separate reader and writer
	 * threads at the patch's rows, 4 to 240 (oversubscribed on small
	 * machines; --short: 4, 16, 64).  The critical
	 * section and the gap between operations are 50 cpu_relax() each
	 * (~1.5-2 us here): long enough that waiters queue and sleep, short
	 * enough that the lock stays contended.  Other values: run the plain
	 * command the heading describes with -L/-D. */
	{ "002", "rwsem: wake up almost all readers (rate, 1:1, kops/s)",
	  "rwsem,rwsem-wake-front",
	  { { .name = "seed-002", .title = "seed 002: rwsem reader wake-up, "
	      "equal readers and writers",
	      SEED002_RUN, .aa = true },
	    /* What an rwsem is for: critical sections that block now and
	     * then (an I/O under the lock).  1 in 8 of them sleeps (usleep(1),
	     * ~60 us here), so waiters outlast any spin and queue. */
	    { .name = "seed-002-sleep", .title = "seed 002: rwsem reader "
	      "wake-up, equal readers and writers, 1 in 8 critical sections "
	      "sleep",
	      SEED002_RUN, .sleep_per_1024 = 128 } } },

	/* ---- seed 003: qspinlock, simple write to grab the lock ----
	 * Slot: needs qspinlock-cmpxchg-grab (before) and qspinlock. */
	{ "003", "qspinlock: simple write to grab the lock (loop, ms)",
	  "qspinlock,qspinlock-cmpxchg-grab",
	  { { .name = "seed-003", .title = "seed 003: qspinlock set_locked() "
	      "instead of cmpxchg, 5M loop",
	      .workload = LB_W_LOOP,
	      .locks = "qspinlock-cmpxchg-grab,qspinlock",
	      .labels = "Before patch,After patch",
	      .threads = "3-8", .threads_short = "3-8",
	      .iters = 5000000, .iters_short = 100000,
	      .rd = 0, .wr = 1, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 5,
	      .aa = true } } },

	/* ---- seed 004: TP-futex, readers grouped (perf bench futex) ----
	 * All of the seed's tables: mutex totals; rwlock 1:1 totals with
	 * futex calls and per-thread rates against thread count (+ the
	 * no-group "before"); 90/95/100% readers; separate reader and
	 * writer threads at L = 1, 5, 50.  Both preference kinds of the WW
	 * and glibc baselines sit in the same tables.  Thread counts are the
	 * patch's rows (1 thread per core of its 36-core machine: 9, 18, 27,
	 * 36; the sweeps at 36), oversubscribed on smaller machines. */
	{ "004", "TP futex: mutex and rwlock vs WW futex and glibc (futex)",
	  "tp-mutex,tp-rwlock,tp-rwlock-nogroup",
	  {
	    { .name = "seed-004-mutex", .title = "seed 004: TP futex mutex "
	      "(totals, futex calls, per-thread rates), load 5",
	      .workload = LB_W_FUTEX, .locks = "ww-mutex,tp-mutex,pthread-mutex",
	      .labels = "WW futex,TP futex,Glibc", .base = "pthread-mutex",
	      .threads = "2,4,8,16", .threads_short = "8",
	      .duration_s = 10, .duration_short_s = 1,
	      .rd = 0, .wr = 100, .load = 5, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "seed-004-rwlock", .title = "seed 004: TP futex rwlock, "
	      "1:1 readers/writers: totals, futex calls, per-thread rates vs "
	      "threads; readers grouped vs not",
	      .workload = LB_W_FUTEX,
	      .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,"
		       "pthread-rwlock,pthread-rwlock-wpref,tp-rwlock-nogroup",
	      .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref,"
			"TP no group",
	      .base = "ww-rwlock-rpref",
	      .threads = "9,18,27,36", .threads_short = "9,36",
	      .duration_s = 10, .duration_short_s = 1,
	      .rd = 50, .wr = 50, .load = 1, .lock_lat = 1,
	      /* 5 short reps: the table with the TP targets, and one run
	       * swings 2x here (docs/tp-locks.md) */
	      .reps = 5, .reps_short = 5, .aa = true },
	    { .name = "seed-004-read90", .title = "seed 004: 90% readers, reader- and writer-preferring baselines",
	      .workload = LB_W_FUTEX, .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,pthread-rwlock,pthread-rwlock-wpref", .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref",
	      .base = "ww-rwlock-rpref",
	      .threads = "36", .threads_short = "36",
	      .duration_s = 10, .duration_short_s = 0.5,
	      .rd = 90, .wr = 10, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "seed-004-read95", .title = "seed 004: 95% readers, reader- and writer-preferring baselines",
	      .workload = LB_W_FUTEX, .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,pthread-rwlock,pthread-rwlock-wpref", .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref",
	      .base = "ww-rwlock-rpref",
	      .threads = "36", .threads_short = "36",
	      .duration_s = 10, .duration_short_s = 0.5,
	      .rd = 95, .wr = 5, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "seed-004-read100", .title = "seed 004: 100% readers, reader- and writer-preferring baselines",
	      .workload = LB_W_FUTEX, .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,pthread-rwlock,pthread-rwlock-wpref", .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref",
	      .base = "ww-rwlock-rpref",
	      .threads = "36", .threads_short = "36",
	      .duration_s = 10, .duration_short_s = 0.5,
	      .rd = 100, .wr = 0, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "seed-004-xthread-L1", .title = "seed 004: separate reader and writer threads, L=1",
	      .workload = LB_W_FUTEX, .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,pthread-rwlock,pthread-rwlock-wpref", .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref",
	      .base = "ww-rwlock-rpref",
	      .threads = "36", .threads_short = "36",
	      .duration_s = 10, .duration_short_s = 0.5,
	      .rd = 50, .wr = 50, .xthread = true, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "seed-004-xthread-L5", .title = "seed 004: separate reader and writer threads, L=5",
	      .workload = LB_W_FUTEX, .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,pthread-rwlock,pthread-rwlock-wpref", .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref",
	      .base = "ww-rwlock-rpref",
	      .threads = "36", .threads_short = "36",
	      .duration_s = 10, .duration_short_s = 0.5,
	      .rd = 50, .wr = 50, .xthread = true, .load = 5, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "seed-004-xthread-L50", .title = "seed 004: separate reader and writer threads, L=50",
	      .workload = LB_W_FUTEX, .locks = "ww-rwlock-rpref,ww-rwlock-wpref,tp-rwlock,pthread-rwlock,pthread-rwlock-wpref", .labels = "WW rpref,WW wpref,TP futex,Glibc rpref,Glibc wpref",
	      .base = "ww-rwlock-rpref",
	      .threads = "36", .threads_short = "36",
	      .duration_s = 10, .duration_short_s = 0.5,
	      .rd = 50, .wr = 50, .xthread = true, .load = 50, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 } } },

	/* ---- baseline: what exists today ---- */
	{ "baseline", "baseline mutexes and rwlocks: rate at 1-16 threads, "
	  "futex 1:1 readers/writers", "",
	  { { .name = "baseline-mutex", .title = "baseline mutexes, rate",
	      .workload = LB_W_RATE, .locks = BASELINE_MUTEXES,
	      .base = "pthread-mutex",
	      .threads = "1,2,4,8,16", .threads_short = "1,2,8,16",
	      .duration_s = 2, .duration_short_s = 0.4,
	      .rd = 0, .wr = 1, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "baseline-rwlock", .title = "baseline rwlocks, rate, "
	      "R:W 1:1",
	      .workload = LB_W_RATE, .locks = BASELINE_RWLOCKS,
	      .base = "pthread-rwlock",
	      .threads = "1,2,4,8,16", .threads_short = "1,2,8,16",
	      .duration_s = 2, .duration_short_s = 0.4,
	      .rd = 1, .wr = 1, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 },
	    { .name = "baseline-futex", .title = "baseline rwlocks, perf bench "
	      "futex style, 1:1 separate readers/writers",
	      .workload = LB_W_FUTEX, .locks = BASELINE_RWLOCKS,
	      .base = "pthread-rwlock",
	      .threads = "2,4", .threads_short = "2",
	      .duration_s = 5, .duration_short_s = 1,
	      .rd = 50, .wr = 50, .xthread = true, .load = 1, .lock_lat = 1,
	      .reps = 5, .reps_short = 3 } } },
};

#define LB_NPRESETS (sizeof(lb_presets) / sizeof(lb_presets[0]))

void lb_preset_list(FILE *f)
{
	for (size_t i = 0; i < LB_NPRESETS; i++)
		fprintf(f, "%-9s %s\n", lb_presets[i].name, lb_presets[i].desc);
}

static const struct lb_preset *lb_preset_find(const char *name)
{
	for (size_t i = 0; i < LB_NPRESETS; i++)
		if (!strcmp(lb_presets[i].name, name))
			return &lb_presets[i];
	return NULL;
}

/* First lock of a comma list that is not registered, or NULL. */
static const char *lb_first_missing(const char *list, char *buf, size_t n)
{
	const char *s = list;

	while (s && *s) {
		size_t len = strcspn(s, ",");

		snprintf(buf, n, "%.*s", (int)len, s);
		if (!lb_lock_find(buf))
			return buf;
		s += len + (s[len] == ',');
	}
	return NULL;
}

static void lb_label_at(const char *labels, size_t idx, char *buf, size_t n)
{
	const char *s = labels;

	*buf = 0;
	for (size_t i = 0; s && *s; i++) {
		size_t len = strcspn(s, ",");

		if (i == idx) {
			snprintf(buf, n, "%.*s", (int)len, s);
			return;
		}
		s += len + (s[len] == ',');
	}
}

/* Appends the A/A copy of the baseline: the same lock, run last in every
 * round, named "<lock>#2" and labelled "<its label> A/A". */
static void lb_part_aa(struct lb_experiment *e, char (*store)[64])
{
	size_t b = lb_base_index(e);

	snprintf(e->aa_name, sizeof(e->aa_name), "%s#2", e->base->name);
	snprintf(store[e->nlocks], 64, "%s A/A",
		 e->labels[b] ? e->labels[b] : e->base->name);
	e->labels[e->nlocks] = store[e->nlocks];
	e->aa = e->nlocks;
	e->locks[e->nlocks++] = e->base;
}

/* Builds the experiment of a part, dropping unregistered locks (noted).
 * Labels and strings live in `store` so e stays valid.  Returns false when
 * fewer than one lock remains. */
static bool lb_part_experiment(const struct lb_preset_part *pt,
			       const struct lb_cli *c, const struct lb_output *o,
			       struct lb_experiment *e, char (*store)[64])
{
	char name[64];
	const char *s = pt->locks;
	size_t idx = 0;

	memset(e, 0, sizeof(*e));
	e->name = pt->name;
	e->title = pt->title;
	lb_params_default(&e->p);
	e->p.workload = pt->workload;
	e->p.iters = c->short_mode ? pt->iters_short : pt->iters;
	e->p.duration_s = c->short_mode ? pt->duration_short_s : pt->duration_s;
	e->p.rd = pt->rd;
	e->p.wr = pt->wr;
	e->p.xthread = pt->xthread;
	e->p.cs_relax = pt->load;
	e->p.gap_relax = pt->lock_lat;
	e->p.sleep_per_1024 = pt->sleep_per_1024;
	e->p.data = pt->data;
	e->p.pin = c->p.pin;
	e->p.max_time_s = c->p.max_time_s;
	e->reps = c->reps_set ? c->reps : (c->short_mode ? pt->reps_short
							 : pt->reps);
	lb_parse_thread_list(c->short_mode ? pt->threads_short : pt->threads,
			     e->threads, &e->nthreads);
	for (; *s; idx++) {
		size_t len = strcspn(s, ",");
		const struct lr_lock *lk;

		snprintf(name, sizeof(name), "%.*s", (int)len, s);
		s += len + (s[len] == ',');
		lk = lb_lock_find(name);
		if (!lk) {
			lb_out_note(o, "%s: lock %s is not registered, skipped",
				    pt->name, name);
			continue;
		}
		if (pt->labels) {
			lb_label_at(pt->labels, idx, store[e->nlocks], 64);
			e->labels[e->nlocks] = store[e->nlocks];
		}
		e->locks[e->nlocks++] = lk;
	}
	e->base = pt->base ? lb_lock_find(pt->base) : NULL;
	if (!e->base && e->nlocks)
		e->base = e->locks[0];
	if (pt->aa && e->base && e->nlocks < LB_MAX_LOCKS)
		lb_part_aa(e, store);
	return e->nlocks > 0;
}

static bool lb_preset_runnable(const struct lb_preset *ps,
			       const struct lb_output *o)
{
	char buf[64];
	const char *miss = lb_first_missing(ps->needs, buf, sizeof(buf));

	if (miss)
		lb_out_note(o, "seed %s skipped: lock %s is not registered yet",
			    ps->name, miss);
	return !miss;
}

struct lb_plan {
	struct lb_experiment e[LB_NPRESETS * LB_MAX_PARTS];
	char labels[LB_NPRESETS * LB_MAX_PARTS][LB_MAX_LOCKS][64];
	size_t n;
};

static void lb_plan_preset(const struct lb_preset *ps, const struct lb_cli *c,
			   struct lb_plan *plan)
{
	if (!lb_preset_runnable(ps, &c->o))
		return;
	for (size_t i = 0; i < LB_MAX_PARTS && ps->parts[i].name; i++) {
		struct lb_experiment *e = &plan->e[plan->n];

		if (lb_part_experiment(&ps->parts[i], c, &c->o, e,
				       plan->labels[plan->n]))
			plan->n++;
		else
			lb_out_note(&c->o, "%s: no registered lock, skipped",
				    ps->parts[i].name);
	}
}

int lb_preset_main(int argc, char **argv, int first)
{
	struct lb_cli c;
	const char *names[LB_MAX_LOCKS];
	size_t nnames;
	struct lb_plan *plan = calloc(1, sizeof(*plan));
	double est = 0;

	lb_parse_args(argc, argv, first, true, &c, names, &nnames);
	if (c.help || (nnames == 1 && !strcmp(names[0], "list"))) {
		lb_preset_list(stdout);
		free(plan);
		return LB_EXIT_OK;
	}
	if (nnames != 1)
		lb_usage_error("seed: name one preset or 'all' ('lockbench seed "
			       "list' shows them)");
	if (strcmp(names[0], "all") && !lb_preset_find(names[0]))
		lb_usage_error("seed: unknown preset '%s' ('lockbench seed list' "
			       "shows them)", names[0]);
	if (!plan)
		return LB_EXIT_RUNTIME;

	lb_out_begin(&c.o);
	for (size_t i = 0; i < LB_NPRESETS; i++)
		if (!strcmp(names[0], "all") ||
		    !strcmp(names[0], lb_presets[i].name))
			lb_plan_preset(&lb_presets[i], &c, plan);
	for (size_t i = 0; i < plan->n; i++)
		est += lb_experiment_estimate_s(&plan->e[i]);
	lb_progress_begin(&c.o, est);
	for (size_t i = 0; i < plan->n; i++) {
		struct lb_results res;

		if (lb_experiment_run(&plan->e[i], &c.o, &res))
			return LB_EXIT_RUNTIME;
		lb_out_experiment(&c.o, &res);
		lb_results_free(&res);
	}
	lb_out_end(&c.o);
	free(plan);
	return LB_EXIT_OK;
}
