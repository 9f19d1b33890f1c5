/* SPDX-License-Identifier: MIT */
/*
 * Machine-readable output and the output dispatch.
 *   CSV:  one row per run (raw data; summaries are for the reader to do).
 *   JSON: one document per invocation, schema "qlock-lockbench/1",
 *         documented in docs/lockbench-json.md and checked against
 *         bench/core/lockbench.schema.json by a CTest test.
 * Notes (skipped locks, ...) go to stdout as "note:" lines for tables,
 * into the "notes" array for JSON and to stderr for CSV.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "json.h"
#include "lb.h"

#define LB_JSON_SCHEMA_ID "qlock-lockbench/1"

static const char *const lb_fx_keys[QC_NR_OPS] = {
	"write_lock", "write_unlock", "read_lock", "read_unlock", "other",
};

/* ---- CSV ---------------------------------------------------------------- */

void lb_out_csv_header(FILE *f)
{
	fputs("experiment,workload,lock,threads,rep,status,elapsed_ms,ops,reads,"
	      "writes,kops,thr_min,thr_avg,thr_max,rd_rate,wr_rate,"
	      "fx_write_lock,fx_write_unlock,fx_read_lock,fx_read_unlock\n", f);
}

static void lb_csv_rate(FILE *f, double v)
{
	if (v >= 0)
		fprintf(f, ",%.1f", v);
	else
		fputs(",", f);
}

void lb_out_csv(FILE *f, const struct lb_results *r)
{
	const struct lb_experiment *e = r->e;

	for (size_t th = 0; th < e->nthreads; th++)
		for (unsigned rep = 0; rep < e->reps; rep++)
			for (size_t l = 0; l < e->nlocks; l++) {
				const struct lb_run *x = lb_res_at(r, l, th, rep);

				fprintf(f, "%s,%s,%s,%u,%u,%s,%.3f,%llu,%llu,%llu,%.3f",
					e->name, lb_workload_name(e->p.workload),
					lb_lock_id(e, l), e->threads[th], rep + 1,
					x->status == LB_RUN_OK ? "ok" : "dnf",
					x->elapsed_ms, (unsigned long long)x->ops,
					(unsigned long long)x->reads,
					(unsigned long long)x->writes, x->kops);
				lb_csv_rate(f, x->thr_min);
				lb_csv_rate(f, x->thr_avg);
				lb_csv_rate(f, x->thr_max);
				lb_csv_rate(f, x->rd_rate);
				lb_csv_rate(f, x->wr_rate);
				for (int op = 0; op < 4; op++)
					if (x->has_stats)
						fprintf(f, ",%llu",
							(unsigned long long)x->fx_calls[op]);
					else
						fputs(",", f);
				fputc('\n', f);
			}
}

/* ---- JSON --------------------------------------------------------------- */

static void lb_json_spread(FILE *f, struct lb_spread s)
{
	fputs("{\"median\": ", f);
	lb_json_num(f, s.med, s.n > 0);
	fputs(", \"min\": ", f);
	lb_json_num(f, s.min, s.n > 0);
	fputs(", \"max\": ", f);
	lb_json_num(f, s.max, s.n > 0);
	fprintf(f, ", \"n\": %u}", s.n);
}

static void lb_json_params(FILE *f, const struct lb_params *p)
{
	fprintf(f, "{\"iterations\": %llu, \"duration_s\": ",
		(unsigned long long)p->iters);
	lb_json_num(f, p->duration_s, true);
	fprintf(f, ", \"read_ratio\": %u, \"write_ratio\": %u, "
		"\"xthread\": %s, \"load\": %u, \"lock_latency\": %u, "
		"\"sleep_per_1024\": %u, \"data\": \"%s\", \"pin\": %s, "
		"\"max_time_s\": ",
		p->rd, p->wr, p->xthread ? "true" : "false", p->cs_relax,
		p->gap_relax, p->sleep_per_1024, lb_data_name(p->data),
		p->pin ? "true" : "false");
	lb_json_num(f, p->max_time_s, true);
	fputc('}', f);
}

static void lb_json_run(FILE *f, const struct lb_run *x, unsigned rep)
{
	bool first = true;

	fprintf(f, "{\"rep\": %u, \"status\": \"%s\", \"elapsed_ms\": ", rep + 1,
		x->status == LB_RUN_OK ? "ok" : "dnf");
	lb_json_num(f, x->elapsed_ms, true);
	fprintf(f, ", \"ops\": %llu, \"reads\": %llu, \"writes\": %llu, "
		"\"kops\": ", (unsigned long long)x->ops,
		(unsigned long long)x->reads, (unsigned long long)x->writes);
	lb_json_num(f, x->kops, true);
	fputs(", \"per_thread_ops_s\": {\"min\": ", f);
	lb_json_num(f, x->thr_min, x->thr_min >= 0);
	fputs(", \"avg\": ", f);
	lb_json_num(f, x->thr_avg, true);
	fputs(", \"max\": ", f);
	lb_json_num(f, x->thr_max, true);
	fputs("}, \"reader_rate\": ", f);
	lb_json_num(f, x->rd_rate, x->rd_rate >= 0);
	fputs(", \"writer_rate\": ", f);
	lb_json_num(f, x->wr_rate, x->wr_rate >= 0);
	fputs(", \"futex_calls\": ", f);
	if (!x->has_stats) {
		fputs("null, \"lock_events\": null}", f);
		return;
	}
	fputc('{', f);
	for (int op = 0; op < QC_NR_OPS; op++)
		fprintf(f, "%s\"%s\": %llu", op ? ", " : "", lb_fx_keys[op],
			(unsigned long long)x->fx_calls[op]);
	fputs("}, \"lock_events\": {", f);
	for (int ev = 0; ev < QC_NR_EVENTS; ev++) {
		if (!x->ev[ev])
			continue;
		fprintf(f, "%s", first ? "" : ", ");
		lb_json_str(f, qc_event_name((enum qc_event)ev));
		fprintf(f, ": %llu", (unsigned long long)x->ev[ev]);
		first = false;
	}
	fputs("}}", f);
}

static void lb_json_point(FILE *f, const struct lb_results *r, size_t l,
			  size_t th)
{
	const struct lb_experiment *e = r->e;
	lb_figure_fn fig = lb_primary_fn(e->p.workload);

	fputs("        {\"lock\": ", f);
	lb_json_str(f, lb_lock_id(e, l));
	fprintf(f, ", \"threads\": %u,\n         \"primary\": ", e->threads[th]);
	lb_json_spread(f, lb_summary_figure(r, l, th, fig));
	fputs(",\n         \"ratio_to_baseline\": ", f);
	lb_json_spread(f, lb_summary_ratio(r, l, lb_base_index(e), th, fig));
	fputs(",\n         \"runs\": [\n", f);
	for (unsigned rep = 0; rep < e->reps; rep++) {
		fputs("           ", f);
		lb_json_run(f, lb_res_at(r, l, th, rep), rep);
		fputs(rep + 1 < e->reps ? ",\n" : "\n", f);
	}
	fputs("         ]}", f);
}

void lb_out_json_begin(FILE *f)
{
	fprintf(f, "{\n  \"schema\": \"%s\",\n  \"lockbench_version\": \"%s\",\n"
		"  \"host\": ", LB_JSON_SCHEMA_ID, LB_VERSION);
	lb_host_json(f);
	fputs(",\n  \"experiments\": [\n", f);
	lb_host_load_begin();
}

void lb_out_json_experiment(FILE *f, const struct lb_results *r, bool first)
{
	const struct lb_experiment *e = r->e;

	fputs(first ? "    {\"name\": " : ",\n    {\"name\": ", f);
	lb_json_str(f, e->name);
	fputs(", \"title\": ", f);
	lb_json_str(f, e->title ? e->title : e->name);
	fprintf(f, ",\n     \"workload\": \"%s\", \"reps\": %u, \"baseline\": ",
		lb_workload_name(e->p.workload), e->reps);
	lb_json_str(f, e->locks[lb_base_index(e)]->name);
	fputs(", \"aa_control\": ", f);
	if (e->aa) {
		fputs("{\"lock\": ", f);
		lb_json_str(f, e->locks[e->aa]->name);
		fputs(", \"copy\": ", f);
		lb_json_str(f, lb_lock_id(e, e->aa));
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\n     \"primary\": {\"unit\": \"%s\", "
		"\"higher_is_better\": %s},\n     \"params\": ",
		lb_primary_unit(e->p.workload),
		lb_higher_is_better(e->p.workload) ? "true" : "false");
	lb_json_params(f, &e->p);
	fputs(",\n     \"locks\": [", f);
	for (size_t l = 0; l < e->nlocks; l++) {
		fputs(l ? ", " : "", f);
		lb_json_str(f, lb_lock_id(e, l));
	}
	fputs("],\n     \"threads\": [", f);
	for (size_t th = 0; th < e->nthreads; th++)
		fprintf(f, "%s%u", th ? ", " : "", e->threads[th]);
	fputs("],\n     \"points\": [\n", f);
	for (size_t th = 0; th < e->nthreads; th++)
		for (size_t l = 0; l < e->nlocks; l++) {
			lb_json_point(f, r, l, th);
			fputs(th + 1 < e->nthreads || l + 1 < e->nlocks ? ",\n"
									 : "\n",
			      f);
		}
	fputs("     ]}", f);
}

/* notes: already JSON-encoded strings separated by ", " (or NULL). */
void lb_out_json_end(FILE *f, const char *notes)
{
	fputs("\n  ],\n  \"load\": ", f);
	lb_host_load_json(f);
	fprintf(f, ",\n  \"notes\": [%s]\n}\n", notes ? notes : "");
}

/* ---- dispatch ----------------------------------------------------------- */

static struct {
	unsigned nexp;
	char *notes;     /* JSON mode: collected notes */
	size_t notes_len;
} lb_doc;

void lb_out_begin(const struct lb_output *o)
{
	lb_doc.nexp = 0;
	if (o->fmt == LB_FMT_CSV)
		lb_out_csv_header(stdout);
	else if (o->fmt == LB_FMT_JSON)
		lb_out_json_begin(stdout);
}

void lb_out_experiment(const struct lb_output *o, const struct lb_results *r)
{
	if (o->fmt == LB_FMT_CSV)
		lb_out_csv(stdout, r);
	else if (o->fmt == LB_FMT_JSON)
		lb_out_json_experiment(stdout, r, lb_doc.nexp == 0);
	else
		lb_out_table(stdout, r);
	lb_doc.nexp++;
	fflush(stdout);
}

static void lb_note_append_json(const char *msg)
{
	FILE *m;
	char *buf = NULL;
	size_t len = 0;

	m = open_memstream(&buf, &len);
	if (!m)
		return;
	if (lb_doc.notes)
		fprintf(m, "%s, ", lb_doc.notes);
	lb_json_str(m, msg);
	fclose(m);
	free(lb_doc.notes);
	lb_doc.notes = buf;
}

void lb_out_note(const struct lb_output *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o->fmt == LB_FMT_JSON)
		lb_note_append_json(msg);
	else
		fprintf(o->fmt == LB_FMT_CSV ? stderr : stdout, "note: %s\n", msg);
}

void lb_out_end(const struct lb_output *o)
{
	if (o->fmt == LB_FMT_JSON)
		lb_out_json_end(stdout, lb_doc.notes);
	free(lb_doc.notes);
	lb_doc.notes = NULL;
	fflush(stdout);
}
