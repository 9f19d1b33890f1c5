/* SPDX-License-Identifier: MIT */
/*
 * lockbench map --dropin: the grid through the pthread drop-in.
 *
 * Every run is a child process, `lockbench map --cell SPEC`, whose lock
 * calls are plain pthread_mutex_lock/unlock or pthread_rwlock_* on a
 * default-initialised object (the pthread-mutex / pthread-rwlock entries
 * of the registry).  The baseline child runs on glibc; the others get
 * LD_PRELOAD=libqlock-pthread.so, so the shim's own path (its dispatch,
 * its object layout) is in their figures.  `dropin-forward` preloads the
 * shim but asks it to forward to glibc (QLOCK_MUTEX/RWLOCK=glibc): the
 * interposition cost alone.  `library` runs the same workload on the
 * library's own lock (tp-mutex / qrwlock, the drop-in's defaults) in the
 * same kind of child, without the shim: dropin against library is what the
 * shim's path costs (the target: at most 1 ns uncontended).  The built-in
 * peers (TBB, absl, CK, when built) follow, each in a plain child too, so a
 * program that could link a peer's lock instead is compared in the same
 * cells.  An app cell's
 * child runs its pattern (map_apps.c) with the same lock, which there
 * names the condition variables too: glibc's pthread_cond_*, through the
 * shim in a preloaded child, or the TP condvar for `library`.  The child
 * prints its lb_run on one line.
 */
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "map.h"

void map_dropin_family(struct map_family *f, bool rw,
		       const char *const *peers)
{
	const struct lr_lock *lk = lb_lock_find(rw ? "pthread-rwlock"
						   : "pthread-mutex");

	const struct lr_lock *lib = lb_lock_find(rw ? "qrwlock" : "tp-mutex");

	f->nlocks = lib ? 4 : 3;
	f->locks[0] = (struct map_lock){ .lk = lk, .name = lk->name };
	if (lib)
		f->locks[3] = (struct map_lock){ .lk = lib, .name = "library" };
	f->locks[1] = (struct map_lock){ .lk = lk, .preload = true,
		.name = rw ? "dropin-rwlock" : "dropin-mutex" };
	f->locks[2] = (struct map_lock){ .lk = lk, .preload = true,
		.name = "dropin-forward",
		.env = rw ? "QLOCK_RWLOCK=glibc" : "QLOCK_MUTEX=glibc" };
	for (size_t i = 0; peers && peers[i] && f->nlocks < LB_MAX_LOCKS; i++) {
		const struct lr_lock *p = lb_lock_find(peers[i]);

		if (p && (!rw || lb_lock_has_readers(p)))
			f->locks[f->nlocks++] =
				(struct map_lock){ .lk = p, .name = p->name };
	}
}

#ifndef LB_BIN_TO_LIB
#define LB_BIN_TO_LIB "../lib"
#endif

/* This executable and, unless --shim names it, the shim: next to it in the
 * build tree (bench/lockbench, shim/libqlock-pthread.so), else in the
 * library directory of the prefix it is installed in. */
void map_dropin_paths(struct map_cfg *c)
{
	static char self[PATH_MAX], shim[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		lb_usage_error("--dropin: cannot find this executable");
	self[n] = 0;
	c->self = self;
	if (!c->shim) {
		char dir[PATH_MAX];
		const char *d;

		memcpy(dir, self, (size_t)n + 1);
		d = dirname(dir);
		snprintf(shim, sizeof(shim), "%s/../shim/libqlock-pthread.so", d);
		if (access(shim, R_OK))
			snprintf(shim, sizeof(shim), "%s/" LB_BIN_TO_LIB
				 "/libqlock-pthread.so", d);
		c->shim = shim;
	}
	if (access(c->shim, R_OK))
		lb_usage_error("--dropin: no shim at '%s' (build it, or give "
			       "--shim PATH)", c->shim);
	if (strchr(c->shim, '\'') || strchr(c->self, '\''))
		lb_usage_error("--dropin: paths with a quote are not supported");
}

/* The run a child does, on one line: what map_cell_child_main parses
 * (then ",LOCK": the registry's lock the child runs). */
#define MAP_CELL_FMT "%d,%u,%u,%u,%u,%d,%u,%lf"

void map_dropin_run(const struct map_cfg *c, const struct map_lock *ml,
		    const struct map_cell *cell, struct lb_run *out)
{
	char cmd[3 * PATH_MAX];
	FILE *p;
	int st, ok;

	snprintf(cmd, sizeof(cmd),
		 "exec env -u LD_PRELOAD %s%s%s%s%s '%s' map --cell "
		 MAP_CELL_FMT ",%s", ml->preload ? "LD_PRELOAD='" : "",
		 ml->preload ? c->shim : "", ml->preload ? "' " : "",
		 ml->env ? ml->env : "", ml->env ? " " : "", c->self, cell->rw,
		 cell->threads, cell->cs, cell->gap, cell->read_pct,
		 cell->split, cell->pattern,
		 cell->pattern ? map_app_run_s(c, cell)
			       : map_run_s(c, cell->threads), ml->lk->name);
	memset(out, 0, sizeof(*out));
	p = popen(cmd, "r");
	if (!p) {
		perror("lockbench: popen");
		exit(LB_EXIT_RUNTIME);
	}
	ok = fscanf(p, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %" SCNu64 " %" SCNu64
		    " %lf", &out->kops, &out->thr_min, &out->thr_avg,
		    &out->thr_max, &out->rd_rate, &out->wr_rate,
		    &out->wait_p50_ns, &out->wait_p99_ns, &out->wait_max_ns,
		    &out->elapsed_ms, &out->reads, &out->writes,
		    &out->cpu_busy);
	st = pclose(p);
	if (ok != 13 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "lockbench: map --dropin: child for %s failed "
			"(status %d): %s\n", ml->name, st, cmd);
		exit(WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st)
						       : LB_EXIT_RUNTIME);
	}
	out->ops = out->reads + out->writes;
	out->status = LB_RUN_OK;
}

int map_cell_child_main(const char *spec)
{
	struct map_cell cell = { 0 };
	struct lb_experiment e;
	struct lb_run r;
	const struct lr_lock *lk;
	char name[64] = "";
	int rw, split;
	double dur;

	if (sscanf(spec, MAP_CELL_FMT ",%63s", &rw, &cell.threads, &cell.cs,
		   &cell.gap, &cell.read_pct, &split, &cell.pattern, &dur,
		   name) < 8 ||
	    !cell.threads || cell.threads > LB_MAX_THREADS ||
	    cell.read_pct > 100 || dur <= 0 ||
	    cell.pattern >= MAP_NR_PATTERNS || (cell.pattern && rw))
		lb_usage_error("--cell: malformed '%s'", spec);
	lk = lb_lock_find(*name ? name
				: rw ? "pthread-rwlock" : "pthread-mutex");
	if (!lk)
		lb_usage_error("--cell: no lock '%s'", name);
	if (!map_app_runs(&cell, lk))
		lb_usage_error("--cell: %s has no condition variable for %s",
			       name, map_pattern_name(cell.pattern));
	memset(&e, 0, sizeof(e));
	lb_params_default(&e.p);
	e.p.workload = LB_W_RATE;
	e.p.duration_s = dur;
	e.p.cs_relax = cell.cs;
	e.p.gap_relax = cell.gap;
	e.p.rd = rw ? cell.read_pct : 0;
	e.p.wr = rw ? 100 - cell.read_pct : 1;
	e.p.xthread = split;
	e.p.wait_times = true;
	e.locks[0] = lk;
	e.nlocks = 1;
	e.reps = 1;
	if (cell.pattern)
		map_app_run(&cell, lk, dur, 0, &r);
	else
		lb_run_once(&e, e.locks[0], cell.threads, 0, &r);
	printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g "
	       "%" PRIu64 " %" PRIu64 " %.17g\n", r.kops, r.thr_min, r.thr_avg,
	       r.thr_max, r.rd_rate, r.wr_rate, r.wait_p50_ns, r.wait_p99_ns,
	       r.wait_max_ns, r.elapsed_ms, r.reads, r.writes, r.cpu_busy);
	return LB_EXIT_OK;
}
