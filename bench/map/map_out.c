/* SPDX-License-Identifier: MIT */
/*
 * lockbench map output: the heat table (terminal) and the JSON document
 * (docs/performance.md describes both).
 */
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "map.h"
#include "waittime.h"

/* A lock whose slowest thread gets less than this share of the mean
 * rate is flagged '!' (the map's fairness floor). */
#define MAP_FAIR_FLOOR 0.30

double map_fig_slowest(const struct lb_run *r)
{
	return r->thr_avg > 0 ? r->thr_min / r->thr_avg : -1;
}

double map_fig_p50(const struct lb_run *r) { return r->wait_p50_ns; }
double map_fig_p99(const struct lb_run *r) { return r->wait_p99_ns; }
double map_fig_max(const struct lb_run *r) { return r->wait_max_ns; }
double map_fig_cpu(const struct lb_run *r) { return r->cpu_busy; }

/* Operations per CPU-second the process used: the rate over the CPUs it
 * kept busy (-1 without a CPU figure). */
double map_fig_ops_per_cpu(const struct lb_run *r)
{
	return r->cpu_busy > 0 ? r->kops * 1000.0 / r->cpu_busy : -1;
}

static const char *map_lock_name(const struct map_cfg *c, bool rw, size_t l)
{
	return c->fam[rw].locks[l].name;
}

/* ---- the heat table ----------------------------------------------------- */

static void map_heat_cell(FILE *f, const struct map_result *r, size_t l,
			  bool color)
{
	struct lb_spread q = lb_summary_ratio(&r->res, l, 0, 0, lb_fig_kops);
	struct lb_spread s = lb_summary_figure(&r->res, l, 0, map_fig_slowest);
	const char *on = "", *off = "";

	if (!q.n) {
		fprintf(f, " %6s", "DNF");
		return;
	}
	if (color) {
		on = q.med < 0.95 ? "\033[31m" : q.med < 1.05 ? "\033[33m"
							       : "\033[32m";
		off = "\033[0m";
	}
	fprintf(f, " %s%5.2f%c%s", on, q.med,
		s.n && s.med < MAP_FAIR_FLOOR ? '!' : ' ', off);
}

static bool map_cell_eq(const struct map_cell *a, const struct map_cell *b)
{
	return a->rw == b->rw && a->pattern == b->pattern &&
	       a->threads == b->threads && a->cs == b->cs &&
	       a->gap == b->gap && a->split == b->split &&
	       (!a->rw || a->read_pct == b->read_pct);
}

static const struct map_result *map_find(const struct map_result *r, size_t n,
					 const struct map_cell *want)
{
	for (size_t i = 0; i < n; i++)
		if (map_cell_eq(&r[i].cell, want))
			return &r[i];
	return NULL;
}

/* Distinct values of one axis among a group's cells, in run order. */
static size_t map_axis_values(const struct map_result *r, size_t n,
			      enum map_group g, size_t off, unsigned *v)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned x;
		size_t j;

		if (map_group_of(&r[i].cell) != g)
			continue;
		memcpy(&x, (const char *)&r[i].cell + off, sizeof(x));
		for (j = 0; j < k && v[j] != x; j++)
			;
		if (j == k && k < MAP_MAX_CELLS)
			v[k++] = x;
	}
	return k;
}

static void map_heat_mutex(FILE *f, const struct map_cfg *c,
			   const struct map_result *r, size_t n, size_t l,
			   bool color)
{
	unsigned th[MAP_MAX_CELLS], cs[MAP_MAX_CELLS], gap[MAP_MAX_CELLS];
	size_t nt = map_axis_values(r, n, MAP_G_MUTEX,
				    offsetof(struct map_cell, threads), th);
	size_t nc = map_axis_values(r, n, MAP_G_MUTEX,
				    offsetof(struct map_cell, cs), cs);
	size_t ng = map_axis_values(r, n, MAP_G_MUTEX,
				    offsetof(struct map_cell, gap), gap);

	fprintf(f, "\nmutex %s / %s\nthreads   cs |", map_lock_name(c, 0, l),
		map_lock_name(c, 0, 0));
	for (size_t g = 0; g < ng; g++)
		fprintf(f, " g%-5u", gap[g]);
	fputc('\n', f);
	for (size_t t = 0; t < nt; t++)
		for (size_t k = 0; k < nc; k++) {
			fprintf(f, "%7u %4u |", th[t], cs[k]);
			for (size_t g = 0; g < ng; g++) {
				struct map_cell want = { .threads = th[t],
					.cs = cs[k], .gap = gap[g] };
				const struct map_result *x = map_find(r, n, &want);

				if (x)
					map_heat_cell(f, x, l, color);
				else
					fprintf(f, " %6s", "-");
			}
			fputc('\n', f);
		}
}

static void map_heat_rw(FILE *f, const struct map_cfg *c,
			const struct map_result *r, size_t n, size_t l,
			bool color)
{
	static const unsigned pct[] = { 50, 90, 99, 50 };
	unsigned th[MAP_MAX_CELLS], cs[MAP_MAX_CELLS], gap[MAP_MAX_CELLS];
	size_t nt = map_axis_values(r, n, MAP_G_RWLOCK,
				    offsetof(struct map_cell, threads), th);
	size_t nc = map_axis_values(r, n, MAP_G_RWLOCK,
				    offsetof(struct map_cell, cs), cs);
	size_t ng = map_axis_values(r, n, MAP_G_RWLOCK,
				    offsetof(struct map_cell, gap), gap);

	fprintf(f, "\nrwlock %s / %s\nthreads   cs  gap |   r50%%   r90%%"
		"   r99%%  split\n", map_lock_name(c, 1, l),
		map_lock_name(c, 1, 0));
	for (size_t t = 0; t < nt; t++)
		for (size_t k = 0; k < nc; k++)
			for (size_t g = 0; g < ng; g++) {
				fprintf(f, "%7u %4u %4u |", th[t], cs[k], gap[g]);
				for (size_t s = 0; s < 4; s++) {
					struct map_cell want = { .rw = true,
						.threads = th[t], .gap = gap[g],
						.cs = cs[k], .read_pct = pct[s],
						.split = s == 3 };
					const struct map_result *x =
						map_find(r, n, &want);

					if (x)
						map_heat_cell(f, x, l, color);
					else
						fprintf(f, " %6s", "-");
				}
				fputc('\n', f);
			}
}

/* The app cells: one row per cell, per lock its throughput ratio to glibc
 * and its ratio of operations per CPU-second ('-': the lock has no
 * condition variable to run the cell with). */
static void map_heat_apps(FILE *f, const struct map_cfg *c,
			  const struct map_result *r, size_t n, bool color)
{
	const struct map_family *fam = &c->fam[0];
	bool col[LB_MAX_LOCKS] = { false };

	/* Only the locks some app cell runs. */
	for (size_t i = 0; i < n; i++)
		for (size_t l = 1; map_group_of(&r[i].cell) == MAP_G_APPS &&
				   l < fam->nlocks; l++)
			col[l] |= !r[i].skip[l];
	fprintf(f, "\napps / %s: throughput ratio, then ops per CPU-second "
		"ratio\n%-20s |", map_lock_name(c, 0, 0), "cell");
	for (size_t l = 1; l < fam->nlocks; l++)
		if (col[l])
			fprintf(f, " %14.14s", fam->locks[l].name);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		if (map_group_of(&r[i].cell) != MAP_G_APPS)
			continue;
		fprintf(f, "%-13s %2u thr |", map_pattern_name(r[i].cell.pattern),
			r[i].cell.threads);
		for (size_t l = 1; l < fam->nlocks; l++) {
			struct lb_spread e = lb_summary_ratio(&r[i].res, l, 0, 0,
							      map_fig_ops_per_cpu);

			if (!col[l])
				continue;
			if (r[i].skip[l]) {
				fprintf(f, " %14s", "-");
				continue;
			}
			fputs("   ", f);
			map_heat_cell(f, &r[i], l, color);
			if (e.n)
				fprintf(f, "%5.2f", e.med);
			else
				fprintf(f, "%5s", "-");
		}
		fputc('\n', f);
	}
}

/* One line per lock: how many cells meet glibc, the worst ratio, the
 * worst fairness, the worst p99 wait against glibc's and the range of CPUs
 * it kept busy (a lock whose waiters never sleep keeps all of them). */
static void map_summary(FILE *f, const struct map_cfg *c,
			const struct map_result *r, size_t n, enum map_group g,
			size_t l)
{
	bool rw = g == MAP_G_RWLOCK;
	unsigned cells = 0, ok = 0;
	double worst = 1e300, best = 0, fair = 1e300, p99x = 0;
	double rd = 1e300, wr = 1e300, cpu_lo = 1e300, cpu_hi = -1;
	const struct map_cell *wc = NULL, *fc = NULL;

	for (size_t i = 0; i < n; i++) {
		struct lb_spread q, s, p, pb, u;

		if (map_group_of(&r[i].cell) != g || r[i].skip[l])
			continue;
		q = lb_summary_ratio(&r[i].res, l, 0, 0, lb_fig_kops);
		s = lb_summary_figure(&r[i].res, l, 0, map_fig_slowest);
		p = lb_summary_figure(&r[i].res, l, 0, map_fig_p99);
		pb = lb_summary_figure(&r[i].res, 0, 0, map_fig_p99);
		u = lb_summary_figure(&r[i].res, l, 0, map_fig_cpu);
		if (u.n && u.med < cpu_lo)
			cpu_lo = u.med;
		if (u.n && u.med > cpu_hi)
			cpu_hi = u.med;
		cells++;
		ok += q.n && q.med >= 0.95;
		if (q.n && q.med < worst) {
			worst = q.med;
			wc = &r[i].cell;
		}
		if (q.n && q.med > best)
			best = q.med;
		if (s.n && s.med < fair) {
			fair = s.med;
			fc = &r[i].cell;
		}
		if (p.n && pb.n && pb.med > 0 && p.med / pb.med > p99x)
			p99x = p.med / pb.med;
		if (r[i].cell.split) {
			/* A starved side shows as a rate near 0. */
			struct lb_spread a = lb_summary_figure(&r[i].res, l, 0,
							       lb_fig_rd_rate);
			struct lb_spread b = lb_summary_figure(&r[i].res, l, 0,
							       lb_fig_wr_rate);

			if (a.n && a.med < rd)
				rd = a.med;
			if (b.n && b.med < wr)
				wr = b.med;
		}
	}
	if (!cells)
		return;
	fprintf(f, "  %-22s %3u/%-3u cells >= 0.95x", map_lock_name(c, rw, l),
		ok, cells);
	if (wc && wc->pattern)
		fprintf(f, ", worst %.2fx (%s %u thr)", worst,
			map_pattern_name(wc->pattern), wc->threads);
	else if (wc)
		fprintf(f, ", worst %.2fx (%u thr cs %u gap %u%s)", worst,
			wc->threads, wc->cs, wc->gap,
			rw ? (wc->split ? " split" : wc->read_pct == 99 ? " r99"
				: wc->read_pct == 90 ? " r90" : " r50") : "");
	if (wc)
		fprintf(f, ", best %.2fx", best);
	if (fc)
		fprintf(f, ", slowest thread %.0f%% (%u thr)", fair * 100,
			fc->threads);
	fprintf(f, ", p99 wait <= %.1fx glibc's", p99x);
	if (cpu_hi >= 0)
		fprintf(f, ", CPUs busy %.1f-%.1f", cpu_lo, cpu_hi);
	if (rw && wr < 1e300)
		fprintf(f, ", split: per-thread reads >= %.3g/s, writes >= "
			"%.3g/s", rd, wr);
	fputc('\n', f);
}

void map_out_heat(FILE *f, const struct map_cfg *c,
		  const struct map_result *r, size_t n, bool color)
{
	static const char *const gname[MAP_NR_GROUPS] = { "mutex", "rwlock",
							  "apps" };

	fprintf(f, "lockbench map (%s%s", c->short_mode ? "short" : "full",
		c->dropin ? ", drop-in" : "");
	if (c->hogs)
		fprintf(f, ", %u busy processes beside", c->hogs);
	fprintf(f, "): throughput ratio to glibc, median of "
		"%u interleaved reps of %.2g s (x threads/8 above 8 threads; app"
		" cells x2); '!' = slowest thread below %.0f%%"
		" of the mean; g = gap pauses; glibc-again = glibc run twice (its"
		" ratios are the noise)\n", c->reps, c->duration_s,
		MAP_FAIR_FLOOR * 100);
	for (int g = 0; g < MAP_NR_GROUPS; g++) {
		int rw = g == MAP_G_RWLOCK;
		bool any = false;

		for (size_t i = 0; i < n; i++)
			any |= map_group_of(&r[i].cell) == (enum map_group)g;
		if (!any)
			continue;
		if (g == MAP_G_APPS)
			map_heat_apps(f, c, r, n, color);
		for (size_t l = 1; g != MAP_G_APPS && l < c->fam[rw].nlocks; l++)
			rw ? map_heat_rw(f, c, r, n, l, color)
			   : map_heat_mutex(f, c, r, n, l, color);
		fprintf(f, "\nsummary (%s):\n", gname[g]);
		for (size_t l = 0; l < c->fam[rw].nlocks; l++)
			map_summary(f, c, r, n, (enum map_group)g, l);
	}
}

/* ---- JSON --------------------------------------------------------------- */

static void map_json_spread(FILE *f, struct lb_spread s)
{
	if (!s.n)
		fputs("null", f);
	else
		fprintf(f, "{\"med\": %.6g, \"min\": %.6g, \"max\": %.6g, "
			"\"n\": %u}", s.med, s.min, s.max, s.n);
}

/* "model name" of /proc/cpuinfo, or "unknown". */
static void map_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += strspn(colon + 1, " \t") + 1;
		colon[strcspn(colon, "\n")] = 0;
		snprintf(buf, len, "%s", colon);
		break;
	}
	if (f)
		fclose(f);
}

static void map_json_machine(FILE *f)
{
	struct utsname u;
	char cpu[256], date[64];
	time_t now = time(NULL);

	map_cpu_model(cpu, sizeof(cpu));
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fputs("  \"machine\": {\"cpu_model\": ", f);
	lb_json_str(f, cpu);
	fprintf(f, ", \"online_cpus\": %ld, \"kernel\": ",
		sysconf(_SC_NPROCESSORS_ONLN));
	lb_json_str(f, u.release);
	fputs(", \"arch\": ", f);
	lb_json_str(f, u.machine);
	fputs(", \"glibc\": ", f);
	lb_json_str(f, gnu_get_libc_version());
	fputs(", \"date_utc\": ", f);
	lb_json_str(f, date);
	fputs("},\n", f);
}

static void map_json_lock(FILE *f, const struct map_cfg *c,
			  const struct map_result *r, size_t l)
{
	const struct lb_results *res = &r->res;

	fputs("        {\"lock\": ", f);
	lb_json_str(f, map_lock_name(c, r->cell.rw, l));
	fputs(", \"kops\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, lb_fig_kops));
	fputs(",\n         \"ratio_to_glibc\": ", f);
	map_json_spread(f, lb_summary_ratio(res, l, 0, 0, lb_fig_kops));
	fputs(",\n         \"slowest_share\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, map_fig_slowest));
	fputs(",\n         \"wait_p50_ns\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, map_fig_p50));
	fputs(",\n         \"wait_p99_ns\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, map_fig_p99));
	fputs(",\n         \"wait_max_ns\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, map_fig_max));
	fputs(",\n         \"reader_rate\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, lb_fig_rd_rate));
	fputs(", \"writer_rate\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, lb_fig_wr_rate));
	fputs(",\n         \"cpu_busy\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, map_fig_cpu));
	fputs(", \"ops_per_cpu_s\": ", f);
	map_json_spread(f, lb_summary_figure(res, l, 0, map_fig_ops_per_cpu));
	fputs(",\n         \"ops_per_cpu_s_ratio_to_glibc\": ", f);
	map_json_spread(f, lb_summary_ratio(res, l, 0, 0, map_fig_ops_per_cpu));
	fputs("}", f);
}

static void map_json_cell(FILE *f, const struct map_cfg *c,
			  const struct map_result *r)
{
	bool first = true;

	if (r->cell.pattern) {
		fprintf(f, "    {\"family\": \"apps\", \"pattern\": \"%s\", "
			"\"threads\": %u, \"setup\": {",
			map_pattern_name(r->cell.pattern), r->cell.threads);
		map_app_setup_json(f, &r->cell);
		fputs("},\n     \"locks\": [\n", f);
	} else {
		fprintf(f, "    {\"family\": \"%s\", \"threads\": %u, "
			"\"cs_pauses\": %u, \"gap_pauses\": %u, \"read_pct\": "
			"%u, \"split\": %s,\n     \"locks\": [\n",
			r->cell.rw ? "rwlock" : "mutex", r->cell.threads,
			r->cell.cs, r->cell.gap,
			r->cell.rw ? r->cell.read_pct : 0,
			r->cell.split ? "true" : "false");
	}
	for (size_t l = 0; l < r->e.nlocks; l++) {
		if (r->skip[l])
			continue;
		fputs(first ? "" : ",\n", f);
		map_json_lock(f, c, r, l);
		first = false;
	}
	fputs("\n     ]}", f);
}

int map_out_json(const char *path, const struct map_cfg *c,
		 const struct map_result *r, size_t n, double wall_s)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "{\n  \"schema\": \"qlock-lockbench-map/1\",\n"
		"  \"lockbench_version\": \"%s\",\n  \"grid\": \"%s\",\n"
		"  \"dropin\": %s,\n  \"hogs\": %u,\n  \"reps\": %u,\n"
		"  \"duration_s\": %g,\n"
		"  \"run_s\": \"duration_s x max(1, threads / 8)\",\n"
		"  \"wall_s\": %.1f,\n", LB_VERSION,
		c->short_mode ? "short" : "full", c->dropin ? "true" : "false",
		c->hogs, c->reps, c->duration_s, wall_s);
	map_json_machine(f);
	fputs("  \"wait_timestamp\": {\"source\": ", f);
	lb_json_str(f, lb_stamp_source());
	fprintf(f, ", \"cost_ns\": %.2f, \"ticks_per_ns\": %.4f},\n",
		lb_stamp_cost_ns(), lb_stamp_ticks_per_ns());
	fputs("  \"cells\": [\n", f);
	for (size_t i = 0; i < n; i++) {
		map_json_cell(f, c, &r[i]);
		fputs(i + 1 < n ? ",\n" : "\n", f);
	}
	fputs("  ]\n}\n", f);
	return fclose(f) ? -1 : 0;
}
