/* SPDX-License-Identifier: MIT */
/*
 * lockbench map: options, the grid and the run loop (map.h).
 *
 * A cell is one workload point; in it every lock of the family runs
 * `reps` times, interleaved (A B C A B C ...), so a slow phase of the
 * shared machine hits all of them alike and rep i of a lock pairs with
 * rep i of glibc for the ratio.  Grid runs are the rate workload of
 * workload.c with acquisition wait times on; app cells are map_apps.c's
 * patterns, run the same way.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "map.h"
#include "qlock/qlock.h"
#include "waittime.h"

/* The grids (docs/performance.md says why these points). */
static const unsigned map_threads_full[] = { 1, 2, 4, 8, 16, 32 };
static const unsigned map_threads_short[] = { 1, 2, 8, 32 };
static const unsigned map_cs_full[] = { 1, 20, 200 };
static const unsigned map_cs_short[] = { 1, 200 };
static const unsigned map_gap_full[] = { 0, 20, 200, 2000 };
static const unsigned map_gap_short[] = { 0, 200 };
/* Short rwlock cells: no gap only (where an rwlock's hand-overs cost most),
 * and the short sections of read-mostly data (1: a map lookup) beside the
 * longer one. */
static const unsigned map_rw_gap_short[] = { 0 };
static const unsigned map_rw_cs_short[] = { 1, 20 };
/* rwlocks: read shares; 0 = split 50%. */
static const unsigned map_shares[] = { 50, 90, 99, 0 };
#define MAP_MAX_HOGS 64

#define MAP_DEFAULT_MUTEX "pthread-mutex,tp-mutex,qspinlock"
#define MAP_DEFAULT_RWLOCK "pthread-rwlock,pthread-rwlock-wpref,tp-rwlock,qrwlock,rwsem"
/* Peers added when built in (optional dependencies). */
static const char *const map_peers_mutex[] = {
	"ck-mcs", "absl-mutex", "tbb-spin-mutex", "tbb-queuing-mutex", NULL };
static const char *const map_peers_rwlock[] = {
	"absl-mutex", "tbb-spin-rw-mutex", "tbb-queuing-rw-mutex",
	"ck-rwlock", NULL };

struct map_axis {
	unsigned v[MAP_MAX_AXIS];
	size_t n;
};

#define MAP_MAX_VARIANTS 8

struct map_opts {
	struct map_cfg c;
	const char *variants[MAP_MAX_VARIANTS];
	size_t nvariants;
	struct map_axis threads, cs, gap, rw_cs, rw_gap;
	bool threads_set, cs_set, gap_set;
	const char *mutex_list, *rwlock_list, *cell;
	bool help, no_control;
};

static void map_usage(FILE *f)
{
	fputs(
"usage: lockbench map [--short] [--dropin] [options]\n"
"  Sweeps threads x critical section x gap (mutexes) and threads x\n"
"  critical section x read share x gap (rwlocks), then the app cells (a mutex as programs use\n"
"  it: the holder yields, the holder sleeps, a producer/consumer queue on\n"
"  condition variables, CPython's GIL hand-off); per cell each lock's\n"
"  throughput ratio to glibc (median, min-max), ops per CPU-second,\n"
"  slowest thread as share of the mean, acquisition wait p50/p99/max.\n"
"  Heat table on stdout.\n"
"  --short               the small grid (about 3 minutes)\n"
"  --hogs N              N processes that only spin, at the same priority,\n"
"                        run beside every cell (a machine that also runs\n"
"                        other programs); 0 (the default): none\n"
"  --dropin              glibc's pthread locks against the same calls\n"
"                        through LD_PRELOAD=libqlock-pthread.so (each run\n"
"                        in a child process)\n"
"  --shim PATH           libqlock-pthread.so (default: ../shim/ next to\n"
"                        this executable, else the installed one in\n"
"                        the prefix's library directory)\n"
"  --json FILE           the whole map as JSON (machine info included)\n"
"  --family LIST         groups of cells: mutex, rwlock, apps, or both\n"
"                        (mutex,rwlock), all (the default)\n"
"  --mutex LIST, --rwlock LIST  locks per family; the first is the\n"
"                        baseline (defaults: " MAP_DEFAULT_MUTEX ";\n"
"                        " MAP_DEFAULT_RWLOCK "; plus the built-in peers)\n"
"  -t LIST, --cs LIST, --gap LIST   replace an axis of the grid (pauses;\n"
"                        0 allowed; the app cells keep their own; --cs\n"
"                        sets both families' sections: rwlocks default\n"
"                        to 1,20,200, short 1,20)\n"
"  -r N                  repetitions per cell (3)\n"
"  -d SEC                seconds per run up to 8 threads, longer in\n"
"                        proportion beyond (short 0.1, full 0.2); app\n"
"                        cells run twice as long\n"
"  --no-control          leave out the A/A column (glibc run twice: its\n"
"                        ratio to itself is the noise of each cell)\n"
"  --variant NAME=LOCK:VAR=V[:VAR=V...]\n"
"                        one more column: LOCK run with qlock tunables set\n"
"                        (QLOCK_SPIN_LIMIT, QLOCK_HANDOFF_NS,\n"
"                        QLOCK_OWNER_SPIN_NS, QLOCK_POLL_MAX,\n"
"                        QLOCK_SPIN_ADAPT); with\n"
"                        --dropin LOCK is 'dropin' and any VAR goes to the\n"
"                        child's environment (QLOCK_MUTEX=qspinlock, ...)\n", f);
}

static void map_parse_axis(const char *opt, const char *s, struct map_axis *a,
			   bool zero_ok)
{
	a->n = 0;
	while (*s) {
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)*s))
			lb_usage_error("%s: malformed list '%s'", opt, s);
		v = strtoul(s, &end, 10);
		if ((!zero_ok && v == 0) || v > 1000000 || a->n == MAP_MAX_AXIS)
			lb_usage_error("%s: bad value or too many in '%s'", opt,
				       s);
		if (!strcmp(opt, "-t") && v > LB_MAX_THREADS)
			lb_usage_error("-t: at most %d threads", LB_MAX_THREADS);
		a->v[a->n++] = (unsigned)v;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			lb_usage_error("%s: malformed list '%s'", opt, s);
		s = end;
	}
	if (!a->n)
		lb_usage_error("%s: empty list", opt);
}

static void map_axis_set(struct map_axis *a, const unsigned *v, size_t n)
{
	memcpy(a->v, v, n * sizeof(*v));
	a->n = n;
}

/* A family's locks from a list (first = baseline), plus the built-in
 * peers when the list is the default one. */
static void map_family_locks(struct map_family *f, const char *list,
			     const char *const *peers, bool rw)
{
	struct lb_experiment e;

	memset(&e, 0, sizeof(e));
	lb_parse_locks(list, &e);
	for (size_t i = 0; peers && peers[i]; i++)
		if (lb_lock_find(peers[i]) && e.nlocks < LB_MAX_LOCKS)
			e.locks[e.nlocks++] = lb_lock_find(peers[i]);
	f->nlocks = 0;
	for (size_t i = 0; i < e.nlocks; i++) {
		if (rw && !lb_lock_has_readers(e.locks[i]))
			lb_usage_error("'%s' is not an rwlock", e.locks[i]->name);
		f->locks[f->nlocks++] = (struct map_lock){
			.lk = e.locks[i], .name = e.locks[i]->name };
	}
}

/* --family: a comma list of mutex, rwlock, apps, both, all. */
static void map_parse_family(const char *list, bool *on)
{
	static const char *const names[MAP_NR_GROUPS] = { "mutex", "rwlock",
							  "apps" };
	const char *s = list;

	memset(on, 0, MAP_NR_GROUPS * sizeof(*on));
	while (*s) {
		size_t len = strcspn(s, ",");
		bool known = false;

		for (int g = 0; g < MAP_NR_GROUPS; g++)
			if (strlen(names[g]) == len && !strncmp(s, names[g], len))
				on[g] = known = true;
		if (len == 4 && !strncmp(s, "both", 4))
			on[MAP_G_MUTEX] = on[MAP_G_RWLOCK] = known = true;
		if (len == 3 && !strncmp(s, "all", 3))
			on[MAP_G_MUTEX] = on[MAP_G_RWLOCK] = on[MAP_G_APPS] =
				known = true;
		if (!known)
			lb_usage_error("--family: '%s' is not a list of mutex, "
				       "rwlock, apps, both or all", list);
		s += len;
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			lb_usage_error("--family: '%s' is not a list of mutex, "
				       "rwlock, apps, both or all", list);
	}
	if (!on[MAP_G_MUTEX] && !on[MAP_G_RWLOCK] && !on[MAP_G_APPS])
		lb_usage_error("--family: empty list");
}

enum { MO_SHORT = 300, MO_DROPIN, MO_SHIM, MO_JSON, MO_FAMILY, MO_MUTEX,
       MO_RWLOCK, MO_CS, MO_GAP, MO_CELL, MO_VARIANT, MO_NO_CONTROL,
       MO_HOGS };

static void map_parse(int argc, char **argv, int first, struct map_opts *o)
{
	static const struct option lo[] = {
		{ "short", no_argument, 0, MO_SHORT },
		{ "dropin", no_argument, 0, MO_DROPIN },
		{ "shim", required_argument, 0, MO_SHIM },
		{ "json", required_argument, 0, MO_JSON },
		{ "family", required_argument, 0, MO_FAMILY },
		{ "mutex", required_argument, 0, MO_MUTEX },
		{ "rwlock", required_argument, 0, MO_RWLOCK },
		{ "cs", required_argument, 0, MO_CS },
		{ "gap", required_argument, 0, MO_GAP },
		{ "cell", required_argument, 0, MO_CELL },
		{ "variant", required_argument, 0, MO_VARIANT },
		{ "no-control", no_argument, 0, MO_NO_CONTROL },
		{ "hogs", required_argument, 0, MO_HOGS },
		{ "threads", required_argument, 0, 't' },
		{ "reps", required_argument, 0, 'r' },
		{ "duration", required_argument, 0, 'd' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int opt;
	char *end;

	memset(o, 0, sizeof(*o));
	o->c.duration_s = 0;
	for (int g = 0; g < MAP_NR_GROUPS; g++)
		o->c.group_on[g] = true;
	optind = first;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":t:r:d:h", lo, NULL)) != -1) {
		switch (opt) {
		case MO_SHORT: o->c.short_mode = true; break;
		case MO_DROPIN: o->c.dropin = true; break;
		case MO_SHIM: o->c.shim = optarg; break;
		case MO_JSON: o->c.json_path = optarg; break;
		case MO_FAMILY:
			map_parse_family(optarg, o->c.group_on);
			break;
		case MO_MUTEX: o->mutex_list = optarg; break;
		case MO_RWLOCK: o->rwlock_list = optarg; break;
		case MO_CS:
			map_parse_axis("--cs", optarg, &o->cs, true);
			o->cs_set = true;
			break;
		case MO_GAP:
			map_parse_axis("--gap", optarg, &o->gap, true);
			o->gap_set = true;
			break;
		case MO_CELL: o->cell = optarg; break;
		case MO_NO_CONTROL: o->no_control = true; break;
		case MO_HOGS:
			o->c.hogs = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !isdigit((unsigned char)*optarg) ||
			    o->c.hogs > MAP_MAX_HOGS)
				lb_usage_error("--hogs: '%s' is not a count of "
					       "0-%d", optarg, MAP_MAX_HOGS);
			break;
		case MO_VARIANT:
			if (o->nvariants == MAP_MAX_VARIANTS)
				lb_usage_error("--variant: at most %d",
					       MAP_MAX_VARIANTS);
			o->variants[o->nvariants++] = optarg;
			break;
		case 't':
			map_parse_axis("-t", optarg, &o->threads, false);
			o->threads_set = true;
			break;
		case 'r':
			o->c.reps = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o->c.reps || o->c.reps > LB_MAX_REPS)
				lb_usage_error("-r: repetitions must be 1-%d",
					       LB_MAX_REPS);
			break;
		case 'd':
			o->c.duration_s = strtod(optarg, &end);
			if (*end || !(o->c.duration_s > 0) ||
			    o->c.duration_s > 60)
				lb_usage_error("-d: '%s' is not a duration "
					       "of 0-60 s", optarg);
			break;
		case 'h': o->help = true; break;
		case ':':
			lb_usage_error("option '%s' needs a value",
				       argv[optind - 1]);
		default:
			lb_usage_error("map: unknown option '%s'",
				       argv[optind - 1]);
		}
	}
	if (optind < argc)
		lb_usage_error("map: unexpected argument '%s'", argv[optind]);
}

static void map_configure(struct map_opts *o)
{
	struct map_cfg *c = &o->c;
	bool s = c->short_mode;

	if (!c->reps)
		c->reps = 3;
	if (c->duration_s == 0)
		c->duration_s = s ? 0.1 : 0.2;
	if (!o->threads_set)
		s ? map_axis_set(&o->threads, map_threads_short, 4)
		  : map_axis_set(&o->threads, map_threads_full, 6);
	if (!o->cs_set)
		s ? map_axis_set(&o->cs, map_cs_short, 2)
		  : map_axis_set(&o->cs, map_cs_full, 3);
	if (!o->gap_set)
		s ? map_axis_set(&o->gap, map_gap_short, 2)
		  : map_axis_set(&o->gap, map_gap_full, 4);
	if (o->cs_set)
		o->rw_cs = o->cs;
	else
		s ? map_axis_set(&o->rw_cs, map_rw_cs_short, 2)
		  : map_axis_set(&o->rw_cs, map_cs_full, 3);
	o->rw_gap = o->gap;
	if (s && !o->gap_set)
		map_axis_set(&o->rw_gap, map_rw_gap_short, 1);
	if (c->dropin) {
		if (o->mutex_list || o->rwlock_list)
			lb_usage_error("--dropin runs glibc against the drop-in; "
				       "--mutex/--rwlock do not apply");
		map_dropin_paths(c);
		map_dropin_family(&c->fam[0], false, map_peers_mutex);
		map_dropin_family(&c->fam[1], true, map_peers_rwlock);
		return;
	}
	map_family_locks(&c->fam[0], o->mutex_list ? o->mutex_list
						   : MAP_DEFAULT_MUTEX,
			 o->mutex_list ? NULL : map_peers_mutex, false);
	map_family_locks(&c->fam[1], o->rwlock_list ? o->rwlock_list
						    : MAP_DEFAULT_RWLOCK,
			 o->rwlock_list ? NULL : map_peers_rwlock, true);
}

/* The tunables a variant may set in-process, by their environment name. */
static const struct {
	const char *env;
	enum qlock_tunable t;
} map_tunables[] = {
	{ "QLOCK_SPIN_LIMIT", QLOCK_TUNE_SPIN_LIMIT },
	{ "QLOCK_HANDOFF_NS", QLOCK_TUNE_HANDOFF_NS },
	{ "QLOCK_OWNER_SPIN_NS", QLOCK_TUNE_OWNER_SPIN_NS },
	{ "QLOCK_POLL_MAX", QLOCK_TUNE_POLL_MAX },
	{ "QLOCK_SPIN_ADAPT", QLOCK_TUNE_SPIN_ADAPT },
};
#define MAP_NTUNABLES (sizeof(map_tunables) / sizeof(map_tunables[0]))

/* Sets the tunables of "VAR=V VAR=V" (the old values go to `old`), or with
 * old == NULL checks the string only; false on an unknown or bad one. */
static bool map_tunables_apply(const char *env, long *old)
{
	char *copy = strdup(env), *save = NULL;
	bool ok = copy != NULL;

	for (size_t i = 0; old && i < MAP_NTUNABLES; i++)
		old[i] = -1; /* not set: nothing to restore */

	for (char *tok = copy ? strtok_r(copy, " ", &save) : NULL; ok && tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '='), *end;
		size_t i;
		long v;

		ok = eq && eq[1];
		if (!ok)
			break;
		*eq = 0;
		v = strtol(eq + 1, &end, 10);
		for (i = 0; i < MAP_NTUNABLES && strcmp(map_tunables[i].env, tok);
		     i++)
			;
		ok = !*end && v >= 0 && i < MAP_NTUNABLES;
		if (ok && old) {
			old[i] = qlock_tune_get(map_tunables[i].t);
			ok = qlock_tune_set(map_tunables[i].t, v) == 0;
		}
	}
	free(copy);
	return ok;
}

static void map_tunables_restore(const long *old)
{
	for (size_t i = 0; i < MAP_NTUNABLES; i++)
		if (old[i] >= 0)
			qlock_tune_set(map_tunables[i].t, old[i]);
}

/* --variant NAME=LOCK:VAR=V[:VAR=V]: one more column in each family that
 * has LOCK (--dropin: LOCK is "dropin", every family). */
static void map_add_variant(struct map_cfg *c, const char *spec)
{
	char *s = strdup(spec), *eq, *colon;
	bool placed = false;

	eq = s ? strchr(s, '=') : NULL;
	colon = eq ? strchr(eq, ':') : NULL;
	if (!colon || eq == s || colon == eq + 1 || !colon[1])
		lb_usage_error("--variant: '%s' is not NAME=LOCK:VAR=V", spec);
	*eq = *colon = 0;
	for (char *p = colon + 1; *p; p++)
		if (*p == ':')
			*p = ' ';
	if (!c->dropin && !map_tunables_apply(colon + 1, NULL))
		lb_usage_error("--variant: '%s': only QLOCK_SPIN_LIMIT, "
			       "QLOCK_HANDOFF_NS, QLOCK_OWNER_SPIN_NS, "
			       "QLOCK_POLL_MAX and QLOCK_SPIN_ADAPT with "
			       "non-negative values", spec);
	for (int f = 0; f < 2; f++) {
		struct map_family *fam = &c->fam[f];
		const struct map_lock *src = NULL;

		for (size_t l = 0; l < fam->nlocks && !src; l++)
			if (!strcmp(c->dropin ? (fam->locks[l].preload ?
						 "dropin" : "")
					      : fam->locks[l].name, eq + 1))
				src = &fam->locks[l];
		if (!src || fam->nlocks == LB_MAX_LOCKS)
			continue;
		fam->locks[fam->nlocks] = *src;
		fam->locks[fam->nlocks].name = s;
		fam->locks[fam->nlocks++].env = colon + 1;
		placed = true;
	}
	if (!placed)
		lb_usage_error("--variant: lock '%s' is not in the map", eq + 1);
}

/* The A/A control: the baseline once more, as the second column.  An
 * identical lock's ratio is 1 on a quiet machine; its spread in a cell is
 * how far any ratio there can be trusted. */
static void map_add_control(struct map_family *f)
{
	if (f->nlocks == LB_MAX_LOCKS)
		return;
	memmove(&f->locks[2], &f->locks[1],
		(f->nlocks - 1) * sizeof(f->locks[0]));
	f->locks[1] = f->locks[0];
	f->locks[1].name = "glibc-again";
	f->nlocks++;
}

static void map_configure_variants(struct map_opts *o)
{
	for (int f = 0; !o->no_control && f < 2; f++)
		map_add_control(&o->c.fam[f]);
	for (size_t i = 0; i < o->nvariants; i++)
		map_add_variant(&o->c, o->variants[i]);
}

/* The cells in run order: mutexes, then rwlocks, then the app cells. */
static size_t map_cells(const struct map_opts *o, struct map_cell *cells)
{
	const bool *on = o->c.group_on;
	size_t n = 0;

	if ((on[MAP_G_MUTEX] ? o->threads.n * o->cs.n * o->gap.n : 0) +
	    (on[MAP_G_RWLOCK] ? o->threads.n * o->rw_cs.n * o->rw_gap.n * 4
			       : 0) +
	    (on[MAP_G_APPS] ? MAP_APP_CELLS : 0) > MAP_MAX_CELLS)
		lb_usage_error("map: more than %d cells; shorten an axis",
			       MAP_MAX_CELLS);
	for (size_t t = 0; on[MAP_G_MUTEX] && t < o->threads.n; t++)
		for (size_t c = 0; c < o->cs.n; c++)
			for (size_t g = 0; g < o->gap.n; g++)
				cells[n++] = (struct map_cell){
					.threads = o->threads.v[t],
					.cs = o->cs.v[c], .gap = o->gap.v[g] };
	for (size_t t = 0; on[MAP_G_RWLOCK] && t < o->threads.n; t++)
		for (size_t c = 0; c < o->rw_cs.n; c++)
			for (size_t g = 0; g < o->rw_gap.n; g++)
				for (size_t s = 0; s < 4; s++)
					cells[n++] = (struct map_cell){
						.rw = true,
						.threads = o->threads.v[t],
						.cs = o->rw_cs.v[c],
						.gap = o->rw_gap.v[g],
						.read_pct = map_shares[s]
							? map_shares[s] : 50,
						.split = !map_shares[s] };
	if (on[MAP_G_APPS])
		n += map_app_cells(cells + n);
	return n;
}

/* The experiment a cell is: the workload of one run, shared by all. */
static void map_experiment(const struct map_cfg *c, const struct map_cell *cell,
			   struct lb_experiment *e)
{
	const struct map_family *f = &c->fam[cell->rw];

	memset(e, 0, sizeof(*e));
	e->name = cell->pattern ? "map/apps" : cell->rw ? "map/rwlock"
							  : "map/mutex";
	e->title = e->name;
	lb_params_default(&e->p);
	e->p.workload = LB_W_RATE;
	e->p.duration_s = cell->pattern ? map_app_run_s(c, cell)
					: map_run_s(c, cell->threads);
	e->p.cs_relax = cell->cs;
	e->p.gap_relax = cell->gap;
	e->p.rd = cell->rw ? cell->read_pct : 0;
	e->p.wr = cell->rw ? 100 - cell->read_pct : 1;
	e->p.xthread = cell->split;
	e->p.wait_times = true;
	e->threads[0] = cell->threads;
	e->nthreads = 1;
	e->reps = c->reps;
	for (size_t l = 0; l < f->nlocks; l++)
		e->locks[e->nlocks++] = f->locks[l].lk;
	e->base = e->locks[0];
}

static void map_progress(size_t i, size_t n, const struct map_cell *cell,
			 uint64_t t0)
{
	double spent = (double)(qc_now_ns() - t0) / 1e9;

	if (!isatty(STDERR_FILENO))
		return;
	if (cell->pattern)
		fprintf(stderr, "\r\033[K[map] cell %zu/%zu: %s %u thr | ",
			i + 1, n, map_pattern_name(cell->pattern),
			cell->threads);
	else
		fprintf(stderr, "\r\033[K[map] cell %zu/%zu: %s %u thr cs %u "
			"gap %u | ", i + 1, n, cell->rw ? "rwlock" : "mutex",
			cell->threads, cell->cs, cell->gap);
	fprintf(stderr, "%.0f s, ETA %.0f s", spent,
		i ? spent / (double)i * (double)(n - i) : 0.0);
	fflush(stderr);
}

static int map_run_cell(const struct map_cfg *c, struct map_result *r)
{
	const struct map_family *f = &c->fam[r->cell.rw];
	struct lb_experiment *e = &r->e;

	map_experiment(c, &r->cell, e);
	r->res.e = e;
	r->res.runs = calloc(e->nlocks * e->reps, sizeof(*r->res.runs));
	if (!r->res.runs)
		return -1;
	for (size_t l = 0; l < e->nlocks; l++)
		r->skip[l] = !map_app_runs(&r->cell, e->locks[l]);
	for (unsigned rep = 0; rep < e->reps; rep++)
		for (size_t l = 0; l < e->nlocks; l++) {
			struct lb_run *out = lb_res_at(&r->res, l, 0, rep);

			const char *env = f->locks[l].env;
			long old[MAP_NTUNABLES];

			if (r->skip[l]) {
				out->status = LB_RUN_DNF; /* no figures */
				continue;
			}
			if (c->dropin) {
				map_dropin_run(c, &f->locks[l], &r->cell, out);
				continue;
			}
			if (env)
				map_tunables_apply(env, old);
			if (r->cell.pattern)
				map_app_run(&r->cell, e->locks[l], e->p.duration_s,
					    rep, out);
			else
				lb_run_once(e, e->locks[l], r->cell.threads,
					    rep, out);
			if (env)
				map_tunables_restore(old);
		}
	return 0;
}

static pid_t map_hog_pids[MAP_MAX_HOGS];
static unsigned map_nhogs;

/* A hog spins at the priority it inherits (the map's) until killed, and
 * dies with the map if the map dies first. */
void map_hogs_start(unsigned n)
{
	pid_t parent = getpid();

	for (map_nhogs = 0; map_nhogs < n; map_nhogs++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("lockbench map: --hogs: fork");
			exit(LB_EXIT_RUNTIME);
		}
		if (pid == 0) {
			volatile unsigned long spin = 0;

			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			for (;;)
				spin++;
		}
		map_hog_pids[map_nhogs] = pid;
	}
}

void map_hogs_stop(void)
{
	for (unsigned i = 0; i < map_nhogs; i++)
		kill(map_hog_pids[i], SIGKILL);
	for (unsigned i = 0; i < map_nhogs; i++)
		(void)waitpid(map_hog_pids[i], NULL, 0);
	map_nhogs = 0;
}

int lb_map_main(int argc, char **argv, int first)
{
	static struct map_opts o;
	static struct map_cell cells[MAP_MAX_CELLS];
	struct map_result *r;
	size_t n;
	uint64_t t0;
	int rc = LB_EXIT_OK;

	map_parse(argc, argv, first, &o);
	if (o.help) {
		map_usage(stdout);
		return LB_EXIT_OK;
	}
	if (o.cell)
		return map_cell_child_main(o.cell);
	map_configure(&o);
	map_configure_variants(&o);
	n = map_cells(&o, cells);
	r = calloc(n, sizeof(*r));
	if (!r)
		return LB_EXIT_RUNTIME;
	/* Calibrate before any worker runs (and say what it costs). */
	lb_stamp_ticks_per_ns();
	lb_stamp_cost_ns();
	t0 = qc_now_ns();
	map_hogs_start(o.c.hogs);
	for (size_t i = 0; i < n; i++) {
		map_progress(i, n, &cells[i], t0);
		r[i].cell = cells[i];
		if (map_run_cell(&o.c, &r[i])) {
			map_hogs_stop();
			return LB_EXIT_RUNTIME;
		}
	}
	map_hogs_stop();
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	map_out_heat(stdout, &o.c, r, n, isatty(STDOUT_FILENO));
	if (o.c.json_path &&
	    map_out_json(o.c.json_path, &o.c, r, n,
			 (double)(qc_now_ns() - t0) / 1e9))
		rc = LB_EXIT_RUNTIME;
	for (size_t i = 0; i < n; i++)
		lb_results_free(&r[i].res);
	free(r);
	return rc;
}
