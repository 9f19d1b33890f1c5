/* SPDX-License-Identifier: MIT */
/*
 * Command line: options, validation and usage.  Every input problem is
 * found here, before any run starts, and reported as one line naming the
 * problem plus a usage hint, with exit status 2.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb.h"

#define LB_HINT "try 'lockbench --help'"

void lb_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("lockbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%s)\n", LB_HINT);
	exit(LB_EXIT_USAGE);
}

static void lb_usage(FILE *f)
{
	fputs(
"usage: lockbench [options] LOCK[,LOCK...]      run locks side by side\n"
"       lockbench seed NAME|all|list [--short] [output options]\n"
"       lockbench report FILE.json... -o DIR   seed report from --json runs\n"
"       lockbench map [--short] [--dropin] [--json FILE] (map --help)\n"
"       lockbench --list | --help | --version\n"
"\n"
"Workload\n"
"  -w, --workload loop|rate|futex  loop: N iterations per thread, reports\n"
"                            total ms; rate: fixed time, total kops/s;\n"
"                            futex: perf-bench-futex style (default rate)\n"
"  -n, --iters N             loop: lock/unlock iterations per thread (100000)\n"
"  -d, --duration SEC        rate/futex: seconds per run, '500ms' ok (1)\n"
"  -R, --ratio R:W           reader:writer op mix, e.g. 5:1 (1:1); mutexes\n"
"                            only write\n"
"      --read-pct P          futex: reader percentage, 0-100 (50)\n"
"  -x, --xthread             separate reader and writer threads\n"
"  -L, --load N, --cs-work N cpu_relax()es inside the critical section (1)\n"
"  -D, --lock-lat N, --gap-work N\n"
"                            cpu_relax()es between lock operations (1)\n"
"      --sleep-ratio N       N/1024 of critical sections usleep(1) instead\n"
"                            of spinning (0)\n"
"      --data same-line|other-line\n"
"                            protected data in the lock's cache line or two\n"
"                            lines away (other-line)\n"
"Runs\n"
"  -l, --locks LIST          locks to run (also positional); see --list\n"
"  -t, --threads LIST        thread counts, e.g. 1,2,4 or 2-10 (1,2,4)\n"
"  -r, --reps N              repetitions, interleaved across locks (3)\n"
"  -b, --baseline LOCK       ratio reference (default: first lock)\n"
"      --pin                 pin thread i to CPU i mod ncpus\n"
"      --max-time SEC        per-run guard: a longer run is stopped and\n"
"                            reported DNF (60)\n"
"Output\n"
"      --csv | --json        raw runs as CSV, or one JSON document\n"
"                            (docs/lockbench-json.md)\n"
"      --progress | --no-progress\n"
"                            progress line with ETA on stderr (default:\n"
"                            when stderr is a terminal)\n"
"Presets\n"
"      --short               seed presets: the scaled-down version\n"
"\n"
"Exit status: 0 ok, 1 runtime error, 2 bad input, 3 verification failed.\n"
"Documentation: docs/lockbench.md\n", f);
}

void lb_params_default(struct lb_params *p)
{
	*p = (struct lb_params){
		.workload = LB_W_RATE, .iters = 100000, .duration_s = 1.0,
		.rd = 1, .wr = 1, .cs_relax = 1, .gap_relax = 1,
		.data = LB_DATA_OTHER_LINE, .max_time_s = 60.0,
	};
}

/* ---- value parsers: strict, every one names what was wrong ------------ */

static unsigned long long lb_parse_uint(const char *opt, const char *s,
					unsigned long long max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		lb_usage_error("%s: '%s' is not a non-negative integer", opt, s);
	v = strtoull(s, &end, 10);
	if (*end || errno)
		lb_usage_error("%s: '%s' is not a non-negative integer", opt, s);
	if (v > max)
		lb_usage_error("%s: %s is larger than %llu", opt, s, max);
	return v;
}

/* Seconds, optionally "ms" or "s" suffixed; must be > 0. */
static double lb_parse_seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		lb_usage_error("%s: '%s' is not a duration in seconds", opt, s);
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (*end && strcmp(end, "s"))
		lb_usage_error("%s: '%s' is not a duration in seconds", opt, s);
	if (v <= 0)
		lb_usage_error("%s: duration must be positive, got '%s'", opt, s);
	return v;
}

static void lb_parse_ratio(const char *s, struct lb_params *p)
{
	unsigned long r, w;
	char *end, *mid;

	if (!isdigit((unsigned char)*s))
		lb_usage_error("-R: bad ratio '%s', expected R:W such as 5:1", s);
	r = strtoul(s, &mid, 10);
	if (*mid != ':' || !isdigit((unsigned char)mid[1]))
		lb_usage_error("-R: bad ratio '%s', expected R:W such as 5:1", s);
	w = strtoul(mid + 1, &end, 10);
	if (*end || r + w == 0 || r > 1000000 || w > 1000000)
		lb_usage_error("-R: bad ratio '%s', expected R:W such as 5:1", s);
	p->rd = (unsigned)r;
	p->wr = (unsigned)w;
}

/* "1,2,4" or ranges "2-10"; each count 1..LB_MAX_THREADS. */
bool lb_parse_thread_list(const char *s, unsigned *out, size_t *n)
{
	*n = 0;
	while (*s) {
		char *end;
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*s))
			return false;
		lo = hi = strtoul(s, &end, 10);
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return false;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo < 1 || hi < lo || hi > LB_MAX_THREADS)
			return false;
		for (unsigned long t = lo; t <= hi; t++) {
			if (*n == LB_MAX_THREAD_COUNTS)
				return false;
			out[(*n)++] = (unsigned)t;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return false;
		s = end;
	}
	return *n > 0;
}

void lb_parse_locks(const char *list, struct lb_experiment *e)
{
	char *copy = strdup(list), *save = NULL;

	e->nlocks = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct lr_lock *lk = lb_lock_find(tok);

		if (!lk)
			lb_usage_error("unknown lock '%s' (lockbench --list shows "
				       "the registered ones)", tok);
		for (size_t i = 0; i < e->nlocks; i++)
			if (e->locks[i] == lk)
				lb_usage_error("lock '%s' listed twice", tok);
		if (e->nlocks == LB_MAX_LOCKS)
			lb_usage_error("more than %d locks", LB_MAX_LOCKS);
		e->locks[e->nlocks++] = lk;
	}
	free(copy);
	if (!e->nlocks)
		lb_usage_error("no lock given");
}

/* ---- getopt ------------------------------------------------------------- */

enum {
	OPT_READ_PCT = 256, OPT_SLEEP, OPT_DATA, OPT_PIN, OPT_MAX_TIME, OPT_CSV,
	OPT_JSON, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_LIST, OPT_SHORT,
	OPT_VERSION,
};

static const struct option lb_longopts[] = {
	{ "workload", required_argument, 0, 'w' },
	{ "iters", required_argument, 0, 'n' },
	{ "duration", required_argument, 0, 'd' },
	{ "ratio", required_argument, 0, 'R' },
	{ "read-pct", required_argument, 0, OPT_READ_PCT },
	{ "xthread", no_argument, 0, 'x' },
	{ "load", required_argument, 0, 'L' },
	{ "cs-work", required_argument, 0, 'L' },
	{ "lock-lat", required_argument, 0, 'D' },
	{ "gap-work", required_argument, 0, 'D' },
	{ "sleep-ratio", required_argument, 0, OPT_SLEEP },
	{ "data", required_argument, 0, OPT_DATA },
	{ "locks", required_argument, 0, 'l' },
	{ "threads", required_argument, 0, 't' },
	{ "reps", required_argument, 0, 'r' },
	{ "baseline", required_argument, 0, 'b' },
	{ "pin", no_argument, 0, OPT_PIN },
	{ "max-time", required_argument, 0, OPT_MAX_TIME },
	{ "csv", no_argument, 0, OPT_CSV },
	{ "json", no_argument, 0, OPT_JSON },
	{ "progress", no_argument, 0, OPT_PROGRESS },
	{ "no-progress", no_argument, 0, OPT_NO_PROGRESS },
	{ "list", no_argument, 0, OPT_LIST },
	{ "short", no_argument, 0, OPT_SHORT },
	{ "help", no_argument, 0, 'h' },
	{ "version", no_argument, 0, OPT_VERSION },
	{ 0, 0, 0, 0 },
};

static void lb_parse_workload(const char *s, struct lb_params *p)
{
	if (!strcmp(s, "loop"))
		p->workload = LB_W_LOOP;
	else if (!strcmp(s, "rate"))
		p->workload = LB_W_RATE;
	else if (!strcmp(s, "futex"))
		p->workload = LB_W_FUTEX;
	else
		lb_usage_error("-w: unknown workload '%s' (loop, rate or futex)",
			       s);
}

static void lb_parse_data(const char *s, struct lb_params *p)
{
	if (!strcmp(s, "same-line"))
		p->data = LB_DATA_SAME_LINE;
	else if (!strcmp(s, "other-line"))
		p->data = LB_DATA_OTHER_LINE;
	else
		lb_usage_error("--data: '%s' is neither same-line nor other-line",
			       s);
}

/* Options that shape the experiment itself (not allowed with presets). */
static bool lb_opt_shapes(int opt)
{
	return strchr("wndRxLDltb", opt) || opt == OPT_READ_PCT ||
	       opt == OPT_SLEEP || opt == OPT_DATA;
}

static const char *lb_opt_text(int opt, int longidx)
{
	static char buf[32];

	if (longidx >= 0)
		snprintf(buf, sizeof(buf), "--%s", lb_longopts[longidx].name);
	else
		snprintf(buf, sizeof(buf), "-%c", opt);
	return buf;
}

static void lb_apply_opt(int opt, const char *arg, const char *name,
			 struct lb_cli *c)
{
	struct lb_params *p = &c->p;

	switch (opt) {
	case 'w': lb_parse_workload(arg, p); break;
	case 'n':
		p->iters = lb_parse_uint(name, arg, 1ull << 40);
		if (!p->iters)
			lb_usage_error("%s: iterations must be positive", name);
		break;
	case 'd': p->duration_s = lb_parse_seconds(name, arg); break;
	case 'R': lb_parse_ratio(arg, p); break;
	case OPT_READ_PCT:
		p->rd = (unsigned)lb_parse_uint(name, arg, 100);
		p->wr = 100 - p->rd;
		break;
	case 'x': p->xthread = true; break;
	case 'L': p->cs_relax = (unsigned)lb_parse_uint(name, arg, 1000000); break;
	case 'D': p->gap_relax = (unsigned)lb_parse_uint(name, arg, 1000000); break;
	case OPT_SLEEP:
		p->sleep_per_1024 = (unsigned)lb_parse_uint(name, arg, 1024);
		break;
	case OPT_DATA: lb_parse_data(arg, p); break;
	case 'l': c->locks = arg; break;
	case 't': c->threads = arg; break;
	case 'r':
		c->reps = (unsigned)lb_parse_uint(name, arg, LB_MAX_REPS);
		if (!c->reps)
			lb_usage_error("%s: repetitions must be positive", name);
		c->reps_set = true;
		break;
	case 'b': c->base = arg; break;
	case OPT_PIN: p->pin = true; break;
	case OPT_MAX_TIME: p->max_time_s = lb_parse_seconds(name, arg); break;
	case OPT_CSV: c->o.fmt = LB_FMT_CSV; break;
	case OPT_JSON: c->o.fmt = LB_FMT_JSON; break;
	case OPT_PROGRESS: c->o.progress = true; break;
	case OPT_NO_PROGRESS: c->o.progress = false; break;
	case OPT_LIST: c->list = true; break;
	case OPT_SHORT: c->short_mode = true; break;
	case OPT_VERSION: c->version = true; break;
	case 'h': c->help = true; break;
	}
}

void lb_parse_args(int argc, char **argv, int first, bool preset_mode,
		   struct lb_cli *c, const char **names, size_t *nnames)
{
	int opt, longidx = -1;

	memset(c, 0, sizeof(*c));
	lb_params_default(&c->p);
	c->reps = 3;
	c->o.progress = isatty(STDERR_FILENO);
	*nnames = 0;
	optind = first;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, ":w:n:d:R:xL:D:l:t:r:b:h",
				  lb_longopts, &longidx)) != -1) {
		if (opt == '?') {
			if (optopt)
				lb_usage_error("unknown option '-%c'", optopt);
			lb_usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (opt == ':')
			lb_usage_error("option '%s' needs a value", argv[optind - 1]);
		if (lb_opt_shapes(opt) && !c->shaping_opt[0])
			snprintf(c->shaping_opt, sizeof(c->shaping_opt), "%s",
				 lb_opt_text(opt, longidx));
		lb_apply_opt(opt, optarg, lb_opt_text(opt, longidx), c);
		longidx = -1;
	}
	if (preset_mode && c->shaping_opt[0])
		lb_usage_error("option '%s' does not apply to seed presets",
			       c->shaping_opt);
	for (; optind < argc; optind++) {
		if (*nnames == LB_MAX_LOCKS)
			lb_usage_error("too many arguments");
		names[(*nnames)++] = argv[optind];
	}
	if (c->p.workload != LB_W_LOOP &&
	    c->p.duration_s >= c->p.max_time_s)
		lb_usage_error("duration %.3g s is not below --max-time %.3g s",
			       c->p.duration_s, c->p.max_time_s);
}

/* ---- the plain (non-preset) command ------------------------------------ */

static void lb_list_locks(FILE *f)
{
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const struct lr_lock *lk = lb_lock_at(i);

		fprintf(f, "%-28s %-6s %s\n", lk->name,
			lk->kind == LR_RWLOCK ? "rw" : "mutex",
			lk->desc ? lk->desc : "");
	}
	if (!lb_lock_count())
		fprintf(f, "(no locks registered)\n");
}

/* Joins -l and positional lock arguments into one comma list. */
static char *lb_join_locks(const char *opt_list, const char **names, size_t n)
{
	size_t len = opt_list ? strlen(opt_list) + 1 : 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	if (opt_list)
		strcat(s, opt_list);
	for (size_t i = 0; i < n; i++) {
		if (*s)
			strcat(s, ",");
		strcat(s, names[i]);
	}
	return s;
}

static void lb_build_experiment(const struct lb_cli *c, const char **names,
				size_t nnames, struct lb_experiment *e)
{
	char *locks = lb_join_locks(c->locks, names, nnames);

	memset(e, 0, sizeof(*e));
	e->name = "cli";
	e->title = "lockbench";
	e->p = c->p;
	e->reps = c->reps;
	if (!lb_parse_thread_list(c->threads ? c->threads : "1,2,4",
				  e->threads, &e->nthreads))
		lb_usage_error("-t: malformed thread list '%s' (expected counts "
			       "1-%d such as 1,2,4 or 2-10)", c->threads,
			       LB_MAX_THREADS);
	if (!locks || !*locks)
		lb_usage_error("no lock given (name one or more, see --list)");
	lb_parse_locks(locks, e);
	free(locks);
	e->base = e->locks[0];
	if (c->base) {
		e->base = lb_lock_find(c->base);
		if (!e->base)
			lb_usage_error("-b: unknown lock '%s'", c->base);
		if (lb_base_index(e) == 0 && e->locks[0] != e->base)
			lb_usage_error("-b: baseline '%s' is not among the locks "
				       "being run", c->base);
	}
}

int lb_main_cli(int argc, char **argv)
{
	struct lb_cli c;
	struct lb_experiment e;
	struct lb_results res;
	const char *names[LB_MAX_LOCKS];
	size_t nnames;

	lb_parse_args(argc, argv, 1, false, &c, names, &nnames);
	if (c.help) {
		lb_usage(stdout);
		return LB_EXIT_OK;
	}
	if (c.version) {
		printf("lockbench %s\n", LB_VERSION);
		return LB_EXIT_OK;
	}
	if (c.list) {
		lb_list_locks(stdout);
		return LB_EXIT_OK;
	}
	if (c.short_mode)
		lb_usage_error("--short applies to seed presets only");
	lb_build_experiment(&c, names, nnames, &e);

	lb_out_begin(&c.o);
	lb_progress_begin(&c.o, lb_experiment_estimate_s(&e));
	if (lb_experiment_run(&e, &c.o, &res)) {
		fprintf(stderr, "lockbench: out of memory\n");
		return LB_EXIT_RUNTIME;
	}
	lb_out_experiment(&c.o, &res);
	lb_out_end(&c.o);
	lb_results_free(&res);
	return LB_EXIT_OK;
}
