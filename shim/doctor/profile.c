/* SPDX-License-Identifier: MIT */
/*
 * QLOCK_PROFILE (qlock-run --profile[=FILE]): at exit, the locks that
 * cost the most waiting, each named by the call sites that locked it
 * first and that waited for it, with wait and hold times; then the
 * condition variables.  Text on stderr (QLOCK_PROFILE=1) or in FILE (%p =
 * the pid, appended), JSON when FILE ends in ".json" (the file replaced).
 * The data: contention.c (contention.h); the deadlock watchdog's source: the
 * thread records here.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic.h"
#include "deadlock.h"
#include "contention.h"
#include "profile.h"
#include "report.h"
#include "stacks.h"
#include "state.h"
#include "symbolize.h"

#define PF_TOP 10
#define PF_LOCK_STACKS 16 /* stacks per lock in the JSON */

uint64_t shim_profile_t0;
static char pf_path[4096];
enum pf_format { PF_TEXT, PF_JSON, PF_PPROF, PF_FOLDED };
static enum pf_format pf_format;
static bool pf_json;
/* This report's stacks (pf_report_stacks()), sorted by lock. */
static const struct pf_rstack *pf_rs;
static unsigned pf_nrs;

/* ---- gathering --------------------------------------------------------- */

struct pf_stat {           /* one row's numbers, or a merge of rows' */
	uint64_t acquired, contended, wait_total, wait_max;
	uint64_t wait_hist[LS_HIST];
	uint64_t holds, hold_total, hold_max;   /* timed holds */
	uint64_t hold_hist[LS_HIST];
	bool has_detail;
};

struct pf_lock {
	uintptr_t addr;
	int type;                  /* LOCKSTAT_MUTEX, _RWLOCK_READ (= rwlock), _SPIN, _COND */
	const struct ls_row *row[2]; /* rwlock: read, write; else row[0] */
	uint64_t wait_total;
};

static void stat_add(struct pf_stat *s, const struct ls_row *r)
{
	const struct ls_detail *d;

	if (!r)
		return;
	s->acquired += qa_read(&r->acquired);
	s->contended += qa_read(&r->contended);
	s->wait_total += qa_read(&r->wait_total_ns);
	if (qa_read(&r->wait_max_ns) > s->wait_max)
		s->wait_max = qa_read(&r->wait_max_ns);
	d = qa_read_acquire(&r->detail);
	if (!d)
		return;
	s->has_detail = true;
	for (int b = 0; b < LS_HIST; b++) {
		s->wait_hist[b] += qa_read(&d->wait_hist[b]);
		s->hold_hist[b] += qa_read(&d->hold_hist[b]);
	}
	s->holds += qa_read(&d->holds);
	s->hold_total += qa_read(&d->hold_total_ns);
	if (qa_read(&d->hold_max_ns) > s->hold_max)
		s->hold_max = qa_read(&d->hold_max_ns);
}

/* The q-quantile (0..1) of a histogram, as its bucket's top, at most max. */
static uint64_t quantile(const uint64_t *h, uint64_t max, double q)
{
	uint64_t total = 0, seen = 0;

	for (int b = 0; b < LS_HIST; b++)
		total += h[b];
	if (!total)
		return 0;
	uint64_t want = (uint64_t)(q * (double)total + 0.5);
	if (want < 1)
		want = 1;
	for (int b = 0; b < LS_HIST; b++) {
		seen += h[b];
		if (seen >= want) {
			uint64_t top = ls_bucket_top((unsigned)b);
			return top < max ? top : max;
		}
	}
	return max;
}

static int by_addr(const void *a, const void *b)
{
	uintptr_t x = ls_key_addr((*(const struct ls_row *const *)a)->key);
	uintptr_t y = ls_key_addr((*(const struct ls_row *const *)b)->key);

	return x < y ? -1 : x > y;
}

static int by_wait(const void *a, const void *b)
{
	const struct pf_lock *x = a, *y = b;

	if (x->wait_total != y->wait_total)
		return x->wait_total < y->wait_total ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every used row, grouped into locks (an rwlock's read and write rows in
 * one), ranked by total wait; condition variables after the locks.
 * Returns the number of locks; *nconds the condvars, at locks + nlocks. */
static unsigned gather(struct pf_lock *locks, unsigned *nconds)
{
	static const struct ls_row *rows[LS_SLOTS];
	unsigned nrows = 0, nl = 0, nc = 0;
	static struct pf_lock conds[LS_SLOTS];

	for (unsigned k = 0, nk = ls_rows_used(); k < nk; k++) {
		const struct ls_row *r = ls_row_used(k);

		if (r && qa_read(&r->key))
			rows[nrows++] = r;
	}
	qsort(rows, nrows, sizeof(rows[0]), by_addr);
	for (unsigned i = 0; i < nrows; i++) {
		const struct ls_row *r = rows[i];
		enum lockstat_kind k = ls_key_kind(r->key);
		struct pf_lock l = { ls_key_addr(r->key), (int)k, { r, NULL },
				     qa_read(&r->wait_total_ns) };

		if (k == LOCKSTAT_RWLOCK_READ || k == LOCKSTAT_RWLOCK_WRITE) {
			l.type = LOCKSTAT_RWLOCK_READ;
			l.row[0] = k == LOCKSTAT_RWLOCK_READ ? r : NULL;
			l.row[1] = k == LOCKSTAT_RWLOCK_WRITE ? r : NULL;
			/* Its other mode's row, adjacent in address order. */
			for (unsigned j = i + 1; j < nrows && ls_key_addr(rows[j]->key) == l.addr; j++) {
				enum lockstat_kind k2 = ls_key_kind(rows[j]->key);

				if (k2 == LOCKSTAT_RWLOCK_READ && !l.row[0]) {
					l.row[0] = rows[j];
				} else if (k2 == LOCKSTAT_RWLOCK_WRITE && !l.row[1]) {
					l.row[1] = rows[j];
				} else {
					continue;
				}
				l.wait_total += qa_read(&rows[j]->wait_total_ns);
				/* Taken: move it to i+1 and step over it. */
				const struct ls_row *tmp = rows[i + 1];
				rows[i + 1] = rows[j];
				rows[j] = tmp;
				i++;
			}
		}
		if (k == LOCKSTAT_COND)
			conds[nc++] = l;
		else
			locks[nl++] = l;
	}
	qsort(locks, nl, sizeof(locks[0]), by_wait);
	qsort(conds, nc, sizeof(conds[0]), by_wait);
	memcpy(locks + nl, conds, nc * sizeof(conds[0]));
	*nconds = nc;
	return nl;
}

/* ---- text ---------------------------------------------------------------- */

/* A duration with three significant digits. */
static const char *dur(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	int u = 0;

	while (v >= 1000 && u < 3) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else
		snprintf(buf, len, "%.*f %s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, unit[u]);
	return buf;
}

static const char *site(char *buf, size_t len, uintptr_t pc)
{
	if (!pc)
		snprintf(buf, len, "?");
	else
		shim_symbolize((const void *)pc, buf, len);
	return buf;
}

/* Where row r's lock was first taken (or its condvar first waited on):
 * the first frame of that call's stack outside lock wrappers, else the
 * call itself (no stack kept, or wrappers all the way).  r is not NULL. */
static uintptr_t first_site_pc(const struct ls_row *r)
{
	uintptr_t pc[LS_FIRST_DEPTH];
	unsigned n = ls_first_stack(r, pc);

	for (unsigned i = 0; i < n; i++)
		if (!pf_frame_func_of(pc[i])->wrapper)
			return pc[i];
	return qa_read(&r->first_pc);
}

static const char *type_name(int type)
{
	switch (type) {
	case LOCKSTAT_MUTEX: return "mutex";
	case LOCKSTAT_RWLOCK_READ: return "rwlock";
	case LOCKSTAT_SPIN: return "spinlock";
	default: return "cond";
	}
}

static void text_waits(struct shim_report *o, const char *label, const struct pf_stat *s)
{
	char a[32], b[32], c[32], d[32];

	shim_report_add(o, "    %sacquired %llu, contended %llu (%.1f%%), wait %s total",
		label, (unsigned long long)s->acquired, (unsigned long long)s->contended,
		s->acquired ? 100.0 * (double)s->contended / (double)s->acquired : 0.0,
		dur(a, sizeof(a), s->wait_total));
	if (s->contended && s->has_detail)
		shim_report_add(o, ", p50 %s, p99 %s, max %s\n",
			dur(b, sizeof(b), quantile(s->wait_hist, s->wait_max, 0.5)),
			dur(c, sizeof(c), quantile(s->wait_hist, s->wait_max, 0.99)),
			dur(d, sizeof(d), s->wait_max));
	else if (s->contended)
		shim_report_add(o, ", max %s\n", dur(d, sizeof(d), s->wait_max));
	else
		shim_report_add(o, "\n");
}

/* The report's stacks of the lock whose row key is `key`: *n of them. */
static const struct pf_rstack *stacks_of(uintptr_t key, unsigned *n)
{
	unsigned i = 0, j;

	while (i < pf_nrs && pf_rs[i].s->key != key)
		i++;
	for (j = i; j < pf_nrs && pf_rs[j].s->key == key; j++)
		;
	*n = j - i;
	return pf_rs + i;
}

struct pf_site {
	uintptr_t pc;
	uint64_t count, wait_ns;
	const struct pf_rstack *top;  /* its stack that waited most */
};

static int site_by_wait(const void *a, const void *b)
{
	const struct pf_site *x = a, *y = b;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The lock's sites from its stacks, by the first frame outside lock
 * wrappers; each with the stack that waited most there.  False when the
 * lock has no stacks. */
static bool text_stack_sites(struct shim_report *o, const struct pf_lock *l, bool rw, bool *first)
{
	static struct pf_site sites[PF_LOCK_STACKS * 8];
	bool any = false;

	for (int m = 0; m < 2; m++) {
		unsigned n, ns = 0;
		uint64_t other = 0;
		const struct pf_rstack *rs = l->row[m] ? stacks_of(qa_read(&l->row[m]->key), &n) : NULL;

		if (!rs || !n)
			continue;
		any = true;
		for (unsigned i = 0; i < n; i++) {
			uintptr_t pc = rs[i].s->pc[rs[i].site];
			unsigned k = 0;

			while (k < ns && sites[k].pc != pc)
				k++;
			if (k == ns) {
				if (ns == sizeof(sites) / sizeof(sites[0])) {
					other += rs[i].count;
					continue;
				}
				sites[ns++] = (struct pf_site){ pc, 0, 0, &rs[i] };
			}
			sites[k].count += rs[i].count;
			sites[k].wait_ns += rs[i].wait_ns;
			if (rs[i].wait_ns > sites[k].top->wait_ns)
				sites[k].top = &rs[i];
		}
		qsort(sites, ns, sizeof(sites[0]), site_by_wait);
		for (unsigned k = 0; k < ns; k++) {
			char t[32];
			const struct pf_stack *s = sites[k].top->s;

			if (k >= LS_SITES) {
				other += sites[k].count;
				continue;
			}
			shim_report_add(o, "    %s %s%s: %llu times, %s\n",
				*first ? "waited at" : "         ",
				rw ? (m ? "(write) " : "(read)  ") : "", pf_frame_of(sites[k].pc)->text,
				(unsigned long long)sites[k].count, dur(t, sizeof(t), sites[k].wait_ns));
			*first = false;
			shim_report_add(o, "              stack:");
			for (unsigned f = 0; f < s->depth; f++)
				shim_report_add(o, "%s%s", f ? " <- " : " ", pf_frame_func_of(s->pc[f])->name);
			shim_report_add(o, "\n");
		}
		if (other)
			shim_report_add(o, "              and %llu times at other sites\n",
				(unsigned long long)other);
	}
	return any;
}

static void text_sites(struct shim_report *o, const struct pf_lock *l, bool rw)
{
	bool first = true;

	if (text_stack_sites(o, l, rw, &first))
		return;

	for (int m = 0; m < 2; m++) {
		const struct ls_row *r = l->row[m];
		const struct ls_detail *d = r ? qa_read_acquire(&r->detail) : NULL;

		if (!d)
			continue;
		for (int i = 0; i < LS_SITES; i++) {
			char s[256], t[32];
			uintptr_t pc = qa_read(&d->sites[i].pc);

			if (!pc)
				continue;
			shim_report_add(o, "    %s %s%s: %llu times, %s\n",
				first ? "waited at" : "         ",
				rw ? (m ? "(write) " : "(read)  ") : "", site(s, sizeof(s), pc),
				(unsigned long long)qa_read(&d->sites[i].count),
				dur(t, sizeof(t), qa_read(&d->sites[i].wait_ns)));
			first = false;
		}
		if (qa_read(&d->other_sites))
			shim_report_add(o, "              and %llu times at other sites\n",
				(unsigned long long)qa_read(&d->other_sites));
	}
}

static void text_lock(struct shim_report *o, int rank, const struct pf_lock *l)
{
	char s1[256], s2[256], a[32], b[32], c[32];
	struct pf_stat all, mode[2];

	memset(&all, 0, sizeof(all));
	memset(mode, 0, sizeof(mode));
	for (int m = 0; m < 2; m++) {
		stat_add(&all, l->row[m]);
		stat_add(&mode[m], l->row[m]);
	}
	if (l->type == LOCKSTAT_RWLOCK_READ) {
		shim_report_add(o, "#%-2d rwlock %#lx", rank, (unsigned long)l->addr);
		if (l->row[0])
			shim_report_add(o, ", first read-locked at %s",
				site(s1, sizeof(s1), first_site_pc(l->row[0])));
		if (l->row[1])
			shim_report_add(o, "%sfirst write-locked at %s", l->row[0] ? ",\n      " : ", ",
				site(s2, sizeof(s2), first_site_pc(l->row[1])));
		shim_report_add(o, "\n");
		text_waits(o, "reads:  ", &mode[0]);
		text_waits(o, "writes: ", &mode[1]);
	} else {
		shim_report_add(o, "#%-2d %s %#lx, first locked at %s\n", rank, type_name(l->type),
			(unsigned long)l->addr, site(s1, sizeof(s1), first_site_pc(l->row[0])));
		text_waits(o, "", &all);
	}
	if (all.holds)
		shim_report_add(o, "    held after a wait: p50 %s, p99 %s, max %s (%llu hold%s timed, 1 in %d)\n",
			dur(a, sizeof(a), quantile(all.hold_hist, all.hold_max, 0.5)),
			dur(b, sizeof(b), quantile(all.hold_hist, all.hold_max, 0.99)),
			dur(c, sizeof(c), all.hold_max), (unsigned long long)all.holds,
			all.holds == 1 ? "" : "s", PF_SAMPLE);
	text_sites(o, l, l->type == LOCKSTAT_RWLOCK_READ);
}

static void text_cond(struct shim_report *o, int rank, const struct pf_lock *l)
{
	const struct ls_row *r = l->row[0];
	const struct ls_detail *d = qa_read_acquire(&r->detail);
	struct pf_stat s;
	char s1[256], a[32], b[32], c[32], e[32];

	memset(&s, 0, sizeof(s));
	stat_add(&s, r);
	if (qa_read(&r->first_pc))
		shim_report_add(o, "#%-2d cond %#lx, first waited on at %s", rank,
			(unsigned long)l->addr, site(s1, sizeof(s1), first_site_pc(r)));
	else
		shim_report_add(o, "#%-2d cond %#lx, never waited on", rank, (unsigned long)l->addr);
	if (d && qa_read(&d->mutex))
		shim_report_add(o, ", with mutex %#lx", (unsigned long)qa_read(&d->mutex));
	shim_report_add(o, "\n    waits %llu", (unsigned long long)s.acquired);
	if (d)
		shim_report_add(o, " (timed out %llu)", (unsigned long long)qa_read(&d->timeouts));
	if (s.acquired)
		shim_report_add(o, ", wait %s total, p50 %s, p99 %s, max %s",
			dur(a, sizeof(a), s.wait_total),
			dur(b, sizeof(b), quantile(s.wait_hist, s.wait_max, 0.5)),
			dur(c, sizeof(c), quantile(s.wait_hist, s.wait_max, 0.99)),
			dur(e, sizeof(e), s.wait_max));
	shim_report_add(o, "\n");
	if (d)
		shim_report_add(o, "    signals %llu, broadcasts %llu%s%s\n",
			(unsigned long long)qa_read(&d->signals),
			(unsigned long long)qa_read(&d->broadcasts),
			qa_read(&d->wake_pc) ? ", first from " : "",
			qa_read(&d->wake_pc) ? site(s1, sizeof(s1), qa_read(&d->wake_pc)) : "");
}

static size_t text_report(char *buf, size_t size, bool verbose)
{
	lockstat_flush_counts();
	pf_nrs = pf_report_stacks(&pf_rs);
	static struct pf_lock all[LS_SLOTS];
	struct shim_report o = { buf, size, 0 };
	unsigned nconds, nl = gather(all, &nconds), ncontended = 0, shown = 0;
	uint64_t waited = 0, hidden = 0;
	char a[32];

	for (unsigned i = 0; i < nl; i++) {
		ncontended += all[i].wait_total != 0;
		waited += all[i].wait_total;
	}
	shim_report_add(&o, "qlock profile: pid %d, %.2f s: %u lock%s used, %u contended, %s waited in all\n",
		(int)getpid(), (qc_now_ns() - shim_profile_t0) / 1e9, nl, nl == 1 ? "" : "s",
		ncontended, dur(a, sizeof(a), waited));
	if (ncontended)
		shim_report_add(&o, "contended locks, by total wait:\n");
	for (unsigned i = 0; i < nl && all[i].wait_total; i++) {
		if (shown == PF_TOP) {
			hidden += all[i].wait_total;
			continue;
		}
		text_lock(&o, (int)++shown, &all[i]);
	}
	if (ncontended > shown)
		shim_report_add(&o, "    (%u more contended locks: %s of wait)\n", ncontended - shown,
			dur(a, sizeof(a), hidden));
	if (nconds) {
		shim_report_add(&o, "condition variables ranked by total wait:\n");
		for (unsigned i = 0; i < nconds && i < PF_TOP; i++)
			text_cond(&o, (int)i + 1, &all[nl + i]);
		if (nconds > PF_TOP)
			shim_report_add(&o, "    (%u more condition variables)\n", nconds - PF_TOP);
	}
	for (int k = 0; k < LOCKSTAT_NR_KINDS; k++)
		if (qa_read(&ls_overflow[k].acquired))
			shim_report_add(&o, "    (the table was full: %llu %s acquisitions of further locks are not shown)\n",
				(unsigned long long)qa_read(&ls_overflow[k].acquired), ls_kind_name[k]);
	if (qa_read(&ls_detail_lost))
		shim_report_add(&o, "    (%llu contended locks have no percentiles, sites or hold times: too many)\n",
			(unsigned long long)qa_read(&ls_detail_lost));
	if (qa_read(&pf_stacks_lost))
		shim_report_add(&o, "    (%llu sampled stacks not kept: too many distinct stacks)\n",
			(unsigned long long)qa_read(&pf_stacks_lost));
	if (ncontended && pf_nrs)
		shim_report_add(&o, "sites: the first frame outside lock wrappers of %u-frame stacks sampled 1 wait in %d, counts and waits scaled to the totals\n",
			pf_depth, PF_SAMPLE);
	if (!ncontended)
		shim_report_add(&o, "hint: no lock was waited for: this run's time is not spent on its locks\n");
	else
		shim_report_add(&o, "hint: the top lock costs the most waiting: do less while holding it (see its hold times) or split it; --profile=FILE.pb.gz or FILE.folded keeps every stack for pprof or a flame graph\n");
	if (verbose) {
		shim_report_add(&o, "internal counters:\n");
		shim_report_counters(&o);
	}
	return o.len;
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_str(struct shim_report *o, const char *s)
{
	shim_report_add(o, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			shim_report_add(o, "\\%c", ch);
		else if (ch < 0x20)
			shim_report_add(o, "\\u%04x", ch);
		else
			shim_report_add(o, "%c", ch);
	}
	shim_report_add(o, "\"");
}

static void json_site(struct shim_report *o, const char *key, uintptr_t pc)
{
	char s[256];

	shim_report_add(o, "\"%s\": ", key);
	if (!pc) {
		shim_report_add(o, "null");
		return;
	}
	site(s, sizeof(s), pc);
	json_str(o, s);
}

static void json_waits(struct shim_report *o, const struct pf_stat *s)
{
	shim_report_add(o, "\"acquired\": %llu, \"contended\": %llu, \"wait_ns\": {\"total\": %llu, ",
		(unsigned long long)s->acquired, (unsigned long long)s->contended,
		(unsigned long long)s->wait_total);
	if (s->contended && s->has_detail)
		shim_report_add(o, "\"p50\": %llu, \"p99\": %llu, ",
			(unsigned long long)quantile(s->wait_hist, s->wait_max, 0.5),
			(unsigned long long)quantile(s->wait_hist, s->wait_max, 0.99));
	else
		shim_report_add(o, "\"p50\": null, \"p99\": null, ");
	shim_report_add(o, "\"max\": %llu}", (unsigned long long)s->wait_max);
}

static void json_lock(struct shim_report *o, int rank, const struct pf_lock *l)
{
	struct pf_stat all, mode[2];
	bool first = true;

	memset(&all, 0, sizeof(all));
	memset(mode, 0, sizeof(mode));
	for (int m = 0; m < 2; m++) {
		stat_add(&all, l->row[m]);
		stat_add(&mode[m], l->row[m]);
	}
	shim_report_add(o, "    {\"rank\": %d, \"type\": \"%s\", \"address\": \"%#lx\", ", rank,
		type_name(l->type), (unsigned long)l->addr);
	if (l->type == LOCKSTAT_RWLOCK_READ) {
		json_site(o, "first_read_locked_at", l->row[0] ? first_site_pc(l->row[0]) : 0);
		shim_report_add(o, ", ");
		json_site(o, "first_write_locked_at", l->row[1] ? first_site_pc(l->row[1]) : 0);
	} else {
		json_site(o, "first_locked_at", first_site_pc(l->row[0]));
	}
	shim_report_add(o, ",\n     ");
	json_waits(o, &all);
	if (l->type == LOCKSTAT_RWLOCK_READ) {
		shim_report_add(o, ",\n     \"reads\": {");
		json_waits(o, &mode[0]);
		shim_report_add(o, "},\n     \"writes\": {");
		json_waits(o, &mode[1]);
		shim_report_add(o, "}");
	}
	if (all.holds)
		shim_report_add(o, ",\n     \"hold_ns\": {\"timed\": %llu, \"sample\": %d, \"total\": %llu, \"p50\": %llu, \"p99\": %llu, \"max\": %llu}",
			(unsigned long long)all.holds, PF_SAMPLE, (unsigned long long)all.hold_total,
			(unsigned long long)quantile(all.hold_hist, all.hold_max, 0.5),
			(unsigned long long)quantile(all.hold_hist, all.hold_max, 0.99),
			(unsigned long long)all.hold_max);
	else
		shim_report_add(o, ",\n     \"hold_ns\": null");
	shim_report_add(o, ",\n     \"waited_at\": [");
	uint64_t other = 0;
	for (int m = 0; m < 2; m++) {
		const struct ls_detail *d = l->row[m] ? qa_read_acquire(&l->row[m]->detail) : NULL;

		if (!d)
			continue;
		other += qa_read(&d->other_sites);
		for (int i = 0; i < LS_SITES; i++) {
			uintptr_t pc = qa_read(&d->sites[i].pc);

			if (!pc)
				continue;
			shim_report_add(o, "%s{", first ? "" : ", ");
			json_site(o, "site", pc);
			shim_report_add(o, ", \"mode\": \"%s\", \"count\": %llu, \"wait_ns\": %llu}",
				l->type != LOCKSTAT_RWLOCK_READ ? "lock" : m ? "write" : "read",
				(unsigned long long)qa_read(&d->sites[i].count),
				(unsigned long long)qa_read(&d->sites[i].wait_ns));
			first = false;
		}
	}
	shim_report_add(o, "], \"waited_at_other_sites\": %llu,\n     \"stacks\": [", (unsigned long long)other);
	first = true;
	for (int m = 0; m < 2; m++) {
		unsigned n;
		const struct pf_rstack *rs = l->row[m] ? stacks_of(qa_read(&l->row[m]->key), &n) : NULL;

		for (unsigned i = 0; rs && i < n && i < PF_LOCK_STACKS; i++) {
			const struct pf_stack *s = rs[i].s;

			shim_report_add(o, "%s{", first ? "" : ",\n       ");
			json_site(o, "site", s->pc[rs[i].site]);
			shim_report_add(o, ", \"mode\": \"%s\", \"count\": %llu, \"wait_ns\": %llu, \"frames\": [",
				l->type != LOCKSTAT_RWLOCK_READ ? "lock" : m ? "write" : "read",
				(unsigned long long)rs[i].count, (unsigned long long)rs[i].wait_ns);
			for (unsigned f = 0; f < s->depth; f++) {
				shim_report_add(o, "%s", f ? ", " : "");
				json_str(o, pf_frame_of(s->pc[f])->text);
			}
			shim_report_add(o, "]}");
			first = false;
		}
	}
	shim_report_add(o, "]}");
}

static void json_cond(struct shim_report *o, const struct pf_lock *l)
{
	const struct ls_row *r = l->row[0];
	const struct ls_detail *d = qa_read_acquire(&r->detail);
	struct pf_stat s;

	memset(&s, 0, sizeof(s));
	stat_add(&s, r);
	shim_report_add(o, "    {\"address\": \"%#lx\", ", (unsigned long)l->addr);
	json_site(o, "first_waited_at", first_site_pc(r));
	shim_report_add(o, ", \"waits\": %llu, \"wait_ns\": {\"total\": %llu, \"p50\": %llu, \"p99\": %llu, \"max\": %llu}",
		(unsigned long long)s.acquired, (unsigned long long)s.wait_total,
		(unsigned long long)quantile(s.wait_hist, s.wait_max, 0.5),
		(unsigned long long)quantile(s.wait_hist, s.wait_max, 0.99),
		(unsigned long long)s.wait_max);
	if (d) {
		shim_report_add(o, ",\n     \"mutex\": \"%#lx\", \"timeouts\": %llu, \"signals\": %llu, \"broadcasts\": %llu, ",
			(unsigned long)qa_read(&d->mutex), (unsigned long long)qa_read(&d->timeouts),
			(unsigned long long)qa_read(&d->signals),
			(unsigned long long)qa_read(&d->broadcasts));
		json_site(o, "first_woken_from", qa_read(&d->wake_pc));
	}
	shim_report_add(o, "}");
}

static size_t json_report(char *buf, size_t size)
{
	lockstat_flush_counts();
	pf_nrs = pf_report_stacks(&pf_rs);
	static struct pf_lock all[LS_SLOTS];
	struct shim_report o = { buf, size, 0 };
	unsigned nconds, nl = gather(all, &nconds), ncontended = 0;
	uint64_t waited = 0;

	for (unsigned i = 0; i < nl; i++) {
		ncontended += all[i].wait_total != 0;
		waited += all[i].wait_total;
	}
	shim_report_add(&o, "{\"pid\": %d, \"seconds\": %.3f, \"locks_used\": %u, \"locks_contended\": %u, "
		"\"wait_ns_total\": %llu,\n \"locks\": [\n", (int)getpid(),
		(qc_now_ns() - shim_profile_t0) / 1e9, nl, ncontended, (unsigned long long)waited);
	for (unsigned i = 0; i < nl; i++) {
		if (!all[i].wait_total && i >= PF_TOP)
			break;
		if (i)
			shim_report_add(&o, ",\n");
		json_lock(&o, (int)i + 1, &all[i]);
	}
	shim_report_add(&o, "\n ],\n \"conds\": [\n");
	for (unsigned i = 0; i < nconds; i++) {
		if (i)
			shim_report_add(&o, ",\n");
		json_cond(&o, &all[nl + i]);
	}
	shim_report_add(&o, "\n ],\n \"details_lost\": %llu, \"stack_depth\": %u, \"stack_sample\": %d, \"stacks_lost\": %llu}\n",
		(unsigned long long)qa_read(&ls_detail_lost), pf_depth, PF_SAMPLE,
		(unsigned long long)qa_read(&pf_stacks_lost));
	return o.len;
}

/* ---- set-up, emit, the deadlock watchdog's source ----------------------- */

static void profile_emit(void)
{
	if (pf_format == PF_PPROF || pf_format == PF_FOLDED) {
		lockstat_flush_counts();
		if (!(pf_format == PF_PPROF ? pf_write_pprof(pf_path, shim_profile_t0)
					    : pf_write_folded(pf_path)))
			fprintf(stderr, "libqlock-pthread: QLOCK_PROFILE=%s: out of memory\n", pf_path);
		return;
	}
	static char fallback[65536];
	size_t size = 4u << 20;
	char *buf = malloc(size);

	if (!buf) {
		buf = fallback;
		size = sizeof(fallback);
	}
	size_t n = pf_json ? json_report(buf, size) : text_report(buf, size, shim_verbose);
	if (n + 1 >= size && pf_json)
		n = (size_t)snprintf(buf, size, "{\"error\": \"report too long\"}\n");
	shim_report_emit(pf_path[0] ? pf_path : NULL, pf_json, buf, n);
	if (buf != fallback)
		free(buf);
}

/* The holder thread j's entry for `lock` in kind `kind`, added to its
 * view (its front's call site) unless the view has the lock already. */
static void pf_view_add(struct dl_view *v, struct pf_thread *const *rec, unsigned j,
			uintptr_t lock, uint32_t kind)
{
	struct dl_view *h = &v[j];

	for (unsigned k = 0; k < h->nheld; k++)
		if (h->held[k].lock == lock)
			return;
	if (h->nheld >= DL_HELD)
		return;
	h->held[h->nheld++] = (struct dl_held){
		lock, pf_front_pc(rec[j], (const void *)lock, (enum lockstat_kind)kind), kind };
}

/*
 * The holders the lock objects name, of each lock a thread waits for: the
 * locks the inline paths took are on no stack (contention.h).  A holder
 * counts only as one of the views (a thread that waits: one that does
 * not ends the chain, as a running holder does) and never for a wait of
 * its own (a thread that has just taken the lock it waited for is still
 * seen waiting for it for a few instructions; a thread that waits for a
 * lock it holds itself has put that hold on its stack before the wait:
 * pf_stack_own()).  A view's thread is blocked while its view holds, so
 * these are read after the views and before their sequences are read
 * again (pf_snapshot()).
 */
static void pf_view_holders(struct dl_view *v, struct pf_thread *const *rec, unsigned n)
{
	static struct shim_rd_view rd[DL_THREADS];
	static bool rd_read[DL_THREADS], rd_ok[DL_THREADS];

	memset(rd_read, 0, n * sizeof(rd_read[0]));
	for (unsigned i = 0; i < n; i++) {
		uintptr_t lock = v[i].wait_lock;
		uint32_t kind = v[i].wait_kind;
		int32_t tid = 0;
		uint64_t self = 0;

		if (!lock)
			continue;
		if (kind == DL_MUTEX)
			tid = shim_mutex_owner((const void *)lock, true);
		else if (kind != DL_RWLOCK_READ && kind != DL_RWLOCK_WRITE)
			continue;
		else
			(void)shim_rwlock_writer((const void *)lock, true, &tid, &self);
		for (unsigned j = 0; j < n; j++) {
			if (j == i || !v[j].wait_lock)
				continue;
			if ((tid && v[j].tid == tid) || (self && qa_read(&rec[j]->self) == self))
				pf_view_add(v, rec, j,
					    lock, kind == DL_MUTEX ? DL_MUTEX : DL_RWLOCK_WRITE);
			if (kind == DL_MUTEX)
				continue;
			if (!rd_read[j]) {
				rd_read[j] = true;
				rd_ok[j] = shim_rd_read(qa_read(&rec[j]->rd), true, &rd[j]);
			}
			for (uint32_t k = 0; rd_ok[j] && k < rd[j].n && k < SHIM_RD_VIEW; k++)
				if (rd[j].lock[k] == lock)
					pf_view_add(v, rec, j, lock, DL_RWLOCK_READ);
		}
	}
}

static unsigned pf_snapshot(struct dl_view *v, unsigned max)
{
	static struct pf_thread *rec[DL_THREADS];
	unsigned n = 0;

	uint32_t used = qa_read_acquire(&pf_threads_used);

	if (max > DL_THREADS)
		max = DL_THREADS;
	for (uint32_t i = 0; i < used && n < max; i++) {
		struct pf_thread *t = &pf_threads[i];
		struct dl_view *o = &v[n];
		int32_t tid = qa_read_acquire(&t->tid);

		if (!tid)
			continue;
		rec[n] = t;
		/* Pairs with the release of wait_seq in lockstat_wait_begin(). */
		uint64_t s1 = qa_read_acquire(&t->wait_seq);
		o->tid = tid;
		o->wait_seq = s1;
		o->wait_lock = (s1 & 1) ? qa_read(&t->wait_lock) : 0;
		o->wait_pc = qa_read(&t->wait_pc);
		o->wait_kind = qa_read(&t->wait_kind);
		/* Pairs with the release of depth in pf_push()/pf_pop(). */
		uint32_t d = qa_read_acquire(&t->depth);
		if (d > PF_HELD)
			d = PF_HELD;
		o->nheld = d < DL_HELD ? d : DL_HELD;
		for (unsigned k = 0; k < o->nheld; k++) {
			o->held[k].lock = pf_held_lock(qa_read(&t->held[k].lock));
			o->held[k].pc = qa_read(&t->held[k].pc);
			o->held[k].kind = qa_read(&t->held[k].kind);
		}
		/* The reads above before the second look at the sequence. */
		qa_smp_rmb();
		if (qa_read(&t->wait_seq) != s1)
			o->wait_lock = 0;
		if (o->wait_lock || o->nheld)
			n++;
	}
	pf_view_holders(v, rec, n);
	/* A thread that is no longer in the wait its view shows may have
	 * let go of what it held: its view no longer holds. */
	qa_smp_rmb();
	for (unsigned i = 0; i < n; i++)
		if (v[i].wait_lock && qa_read(&rec[i]->wait_seq) != v[i].wait_seq)
			v[i].wait_lock = 0;
	return n;
}

static void pf_describe(uintptr_t lock, uint32_t kind, char *buf, size_t len)
{
	const struct ls_row *r = ls_find((const void *)lock, (enum lockstat_kind)kind);
	char s[256];

	if (!r && (kind == LOCKSTAT_RWLOCK_READ || kind == LOCKSTAT_RWLOCK_WRITE))
		r = ls_find((const void *)lock, kind == LOCKSTAT_RWLOCK_READ ? LOCKSTAT_RWLOCK_WRITE
									   : LOCKSTAT_RWLOCK_READ);
	if (!r || !qa_read(&r->first_pc)) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "first locked at %s", site(s, sizeof(s), qa_read(&r->first_pc)));
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
	size_t k = strlen(tail);

	return n > k && strcmp(s + n - k, tail) == 0;
}

/* QLOCK_PROFILE: unset, empty or "0" = off, "1" = stderr, else a file. */
void shim_profile_setup(void)
{
	const char *v = getenv("QLOCK_PROFILE");
	size_t n;

	if (!v || !*v || strcmp(v, "0") == 0) {
		return;
	} else if (strcmp(v, "1") != 0) {
		n = strlen(v);
		if (n >= sizeof(pf_path)) {
			fprintf(stderr, "libqlock-pthread: QLOCK_PROFILE: file name too long\n");
			return;
		}
		memcpy(pf_path, v, n + 1);
		pf_format = ends_with(v, n, ".json") ? PF_JSON : ends_with(v, n, ".pb.gz") ? PF_PPROF
			  : ends_with(v, n, ".folded") ? PF_FOLDED : PF_TEXT;
		pf_json = pf_format == PF_JSON;
	}
	shim_profile_t0 = qc_now_ns();
	lockstat_setup();
	pf_stacks_setup();
	qa_write(&shim_profile_on, true);
	qa_write(&shim_stats_on, true);
	shim_deadlock_setup(pf_snapshot, pf_describe);
	atexit(profile_emit);
}
