/* SPDX-License-Identifier: MIT */
/*
 * The per-lock table behind contention.h: open addressing on the lock's
 * address and kind, one cache line per lock so that counting on one lock
 * does not slow down its neighbours.  A slot's key is claimed once with a
 * cmpxchg and never freed (a destroyed lock's row stays: what it suffered
 * happened).  Locks beyond the table's room are summed in one overflow
 * row per kind, so no acquisition goes uncounted.
 *
 * The profile's details and thread records (contention.h) are recorded here
 * too; profile.c reports them.
 */
#define _GNU_SOURCE
#include "contention.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/atomic.h"
#include "deadlock.h"
#include "report.h"
#include "state.h"
#include "symbolize.h"

#define LS_PROBES 32
#define LS_DETAILS 512

struct ls_row ls_table[LS_SLOTS];
struct ls_row ls_overflow[LOCKSTAT_NR_KINDS];
static struct ls_detail ls_details[LS_DETAILS];
static uint32_t ls_ndetails;
uint64_t ls_detail_lost;
bool shim_profile_on;

const char *const ls_kind_name[LOCKSTAT_NR_KINDS] = {
	"mutex", "rwlock-rd", "rwlock-wr", "spin", "cond",
};

/*
 * The rows claimed so far, and the thread records: the reports visit only
 * these.  The table and the records are zero pages until used (20 MiB),
 * and a scan of them all would fault in a page per record and per 64
 * rows, about 1.3 ms at the exit of every process reported on.  A row is
 * claimed once and never freed (a key is never 0), so LS_SLOTS entries
 * hold every claim.  A fork() by another thread between a row's claim and
 * its entry here leaves that row out of the child's reports (a few
 * instructions' window; the child still counts on it).
 */
static uint32_t ls_used[LS_SLOTS]; /* row index + 1; 0: being written */
static uint32_t ls_nused;
uint32_t pf_threads_used;

/* ls_first_stack()'s frames, by row index: written before the row's
 * entry in ls_used (the release in ls_note_used()), read after it; a
 * condvar's row made by a signal gets them at its first wait, published
 * by the release of their count (ls_first_n). */
static uintptr_t ls_first[LS_SLOTS][LS_FIRST_DEPTH];
static uint8_t ls_first_n[LS_SLOTS];
/* This thread is in the unwinder for a row: a lock taken in there (a
 * signal handler's) keeps its call site only. */
static __thread bool ls_first_unwinding __attribute__((tls_model("initial-exec")));

static void ls_first_capture(unsigned i)
{
	uintptr_t pc[LS_FIRST_DEPTH];
	unsigned n;

	if (!pf_stacks_ready() || ls_first_unwinding)
		return;
	ls_first_unwinding = true;
	n = pf_stack_capture(pc, LS_FIRST_DEPTH);
	ls_first_unwinding = false;
	for (unsigned k = 0; k < n; k++)
		qa_write(&ls_first[i][k], pc[k]);
	/* Release: the frames before their count (pairs with the acquire in
	 * ls_first_stack()). */
	qa_write_release(&ls_first_n[i], (uint8_t)n);
}

unsigned ls_first_stack(const struct ls_row *r, uintptr_t pc[LS_FIRST_DEPTH])
{
	unsigned i, n;

	if (r < ls_table || r >= ls_table + LS_SLOTS)
		return 0; /* an overflow row stands for many locks */
	i = (unsigned)(r - ls_table);
	n = qa_read_acquire(&ls_first_n[i]);
	for (unsigned k = 0; k < n; k++)
		pc[k] = qa_read(&ls_first[i][k]);
	return n;
}

static void ls_note_used(unsigned i)
{
	uint32_t k = qa_fetch_add(&ls_nused, 1u);

	/* Release: the row's key and first call site before its entry
	 * (pairs with the acquire in ls_row_used()). */
	if (k < LS_SLOTS)
		qa_write_release(&ls_used[k], i + 1);
}

unsigned ls_rows_used(void)
{
	uint32_t n = qa_read(&ls_nused);

	return n < LS_SLOTS ? n : LS_SLOTS;
}

struct ls_row *ls_row_used(unsigned k)
{
	uint32_t i = qa_read_acquire(&ls_used[k]);

	return i ? &ls_table[i - 1] : NULL;
}

static struct ls_row *ls_row_of(const volatile void *lock, enum lockstat_kind kind,
				const void *pc)
{
	uintptr_t key = ls_key(lock, kind);
	unsigned i = (unsigned)(ls_hash(key) >> (64 - LS_BITS));

	for (int n = 0; n < LS_PROBES; n++, i = (i + 1) & (LS_SLOTS - 1)) {
		struct ls_row *r = &ls_table[i];
		uintptr_t cur = qa_read(&r->key);

		if (cur == 0 && qa_try_cmpxchg_relaxed(&r->key, &cur, key)) {
			qa_write(&r->first_pc, (uintptr_t)pc);
			/* A condvar's signal (no pc) does not name the row:
			 * its first wait does (lockstat_cond_wait_begin()). */
			if (pc)
				ls_first_capture(i);
			ls_note_used(i);
			return r;
		}
		if (cur == key)
			return r;
	}
	return &ls_overflow[kind];
}

struct ls_row *ls_find(const volatile void *lock, enum lockstat_kind kind)
{
	uintptr_t key = ls_key(lock, kind);
	unsigned i = (unsigned)(ls_hash(key) >> (64 - LS_BITS));

	for (int n = 0; n < LS_PROBES; n++, i = (i + 1) & (LS_SLOTS - 1)) {
		uintptr_t cur = qa_read(&ls_table[i].key);

		if (cur == key)
			return &ls_table[i];
		if (cur == 0)
			return NULL;
	}
	return NULL;
}

static void ls_raise_max(uint64_t *max, uint64_t v)
{
	uint64_t cur = qa_read(max);

	while (cur < v && !qa_try_cmpxchg_relaxed(max, &cur, v))
		;
}

/*
 * Rows and details are shared: the threads' own counters (contention.h) are
 * added to them at any time, by a thread that need not hold the lock, so
 * every update adds atomically.  The acquisitions counted on a row
 * directly are those of a thread whose counter slot is taken by another
 * lock, or that has no record.  All relaxed: the counts are read at
 * exit, after the threads are done (or racily, by a report made while
 * they run, which may be off by the adds in flight).
 */
static inline void ls_count(uint64_t *c, uint64_t v)
{
	qa_fetch_add_relaxed(c, v);
}

/* The row's details, allocated at its first need; NULL when they ran out. */
static struct ls_detail *ls_detail_of(struct ls_row *r)
{
	struct ls_detail *d = qa_read_acquire(&r->detail), *none = NULL;

	if (d || r - ls_table < 0 || r - ls_table >= LS_SLOTS)
		return d;
	uint32_t i = qa_fetch_add_relaxed(&ls_ndetails, 1);
	if (i >= LS_DETAILS) {
		qa_fetch_add_relaxed(&ls_detail_lost, 1);
		return NULL;
	}
	/* Release: the detail's contents before its pointer (pairs with the
	 * acquire above); a loser leaves its detail unused. */
	if (qa_try_cmpxchg_release(&r->detail, &none, &ls_details[i]))
		return &ls_details[i];
	return qa_read_acquire(&r->detail);
}

/* `count` waits at `pc` (`exact` of them not sampled), `wait_ns` in all. */
static void ls_site_add(struct ls_detail *d, uintptr_t pc, uint64_t count, uint64_t exact,
			uint64_t wait_ns)
{
	for (int i = 0; i < LS_SITES; i++) {
		uintptr_t cur = qa_read(&d->sites[i].pc);

		/* A failed claim leaves the winner's pc in cur. */
		if (cur == 0 && qa_try_cmpxchg_relaxed(&d->sites[i].pc, &cur, pc))
			cur = pc;
		if (cur != pc)
			continue;
		qa_fetch_add_relaxed(&d->sites[i].count, count);
		if (exact)
			qa_fetch_add_relaxed(&d->sites[i].exact, exact);
		qa_fetch_add_relaxed(&d->sites[i].wait_ns, wait_ns);
		return;
	}
	qa_fetch_add_relaxed(&d->other_sites, count);
	if (exact)
		qa_fetch_add_relaxed(&d->other_exact, exact);
}

/* One wait, standing for `w` waits (PF_SAMPLE), or one timed hold,
 * straight into the lock's detail. */
static void ls_detail_wait(struct ls_detail *d, uintptr_t pc, uint64_t ns, uint32_t w)
{
	qa_fetch_add_relaxed(&d->wait_hist[ls_bucket(ns)], w);
	ls_site_add(d, pc, w, w == 1, ns * w);
}

static void ls_detail_hold(struct ls_detail *d, uint64_t ns)
{
	qa_fetch_add_relaxed(&d->holds, 1);
	qa_fetch_add_relaxed(&d->hold_total_ns, ns);
	qa_fetch_add_relaxed(&d->hold_hist[ls_bucket(ns)], 1);
	ls_raise_max(&d->hold_max_ns, ns);
}

/* ---- threads ------------------------------------------------------------ */

struct pf_thread pf_threads[PF_THREADS];
__thread struct pf_thread *pf_self __attribute__((tls_model("initial-exec")));
__thread uint32_t pf_pushed __attribute__((tls_model("initial-exec")));
static bool pf_self_none_left;
static pthread_key_t pf_key;
static bool pf_key_ok;

/*
 * A thread's counters and detail shares are written by their thread with
 * relaxed loads and stores (qa_stat_add) and read by a flush, which may
 * be another thread's (a report): relaxed atomics throughout, so such a
 * flush is racy but defined.
 */
static void pf_count_flush(struct pf_thread *t, unsigned i)
{
	struct pf_count *c = &t->counts[i];
	uint64_t *np = &t->sets[i / PF_WAYS].n[i % PF_WAYS];
	uint64_t n = qa_read(np), k = qa_read(&c->contended);
	struct ls_row *r = qa_read(&c->row);

	if (n) {
		ls_count(&r->acquired, n);
		qa_write(np, 0);
	}
	if (k || qa_read(&c->wait_ns)) { /* a condition variable's waits: k = 0 */
		if (k)
			ls_count(&r->contended, k);
		ls_count(&r->wait_total_ns, qa_read(&c->wait_ns));
		ls_raise_max(&r->wait_max_ns, qa_read(&c->wait_max_ns));
		qa_write(&c->contended, 0);
		qa_write(&c->wait_ns, 0);
		qa_write(&c->wait_max_ns, 0);
	}
}

static void pf_hist_flush(uint64_t *to, uint32_t *from, uint8_t lo, uint8_t hi)
{
	for (unsigned b = lo; b <= hi && b < LS_HIST; b++) {
		uint32_t n = qa_read(&from[b]);

		if (n) {
			qa_fetch_add_relaxed(&to[b], n);
			qa_write(&from[b], 0);
		}
	}
}

/* Add a detail share to its lock's detail; the share stays its lock's. */
static void pf_detail_flush(struct pf_detail *e)
{
	struct ls_detail *d = qa_read_acquire(&e->d);

	if (!d)
		return;
	pf_hist_flush(d->wait_hist, e->wait_hist, qa_read(&e->wlo), qa_read(&e->whi));
	pf_hist_flush(d->hold_hist, e->hold_hist, qa_read(&e->hlo), qa_read(&e->hhi));
	qa_write(&e->wlo, (uint8_t)LS_HIST);
	qa_write(&e->whi, 0);
	qa_write(&e->hlo, (uint8_t)LS_HIST);
	qa_write(&e->hhi, 0);
	if (qa_read(&e->holds)) {
		qa_fetch_add_relaxed(&d->holds, qa_read(&e->holds));
		qa_fetch_add_relaxed(&d->hold_total_ns, qa_read(&e->hold_total_ns));
		ls_raise_max(&d->hold_max_ns, qa_read(&e->hold_max_ns));
		qa_write(&e->holds, 0);
		qa_write(&e->hold_total_ns, 0);
		qa_write(&e->hold_max_ns, 0);
	}
	for (int i = 0; i < LS_SITES; i++) {
		struct ls_site *s = &e->sites[i];
		uint64_t n = qa_read(&s->count);

		if (n)
			ls_site_add(d, qa_read(&s->pc), n, qa_read(&s->exact), qa_read(&s->wait_ns));
		qa_write(&s->count, 0);
		qa_write(&s->exact, 0);
		qa_write(&s->wait_ns, 0);
		qa_write(&s->pc, 0);
	}
	qa_write(&e->events, 0);
}

/* Racy for threads that still run (an add of theirs in flight may be
 * lost): reports are made at exit, normally after the threads are done. */
static void pf_pend_flush(struct pf_thread *t);

static void ls_sites_scale(struct ls_row *r);
static void pf_stk_flush(struct pf_thread *t);

void lockstat_flush_counts(void)
{
	uint32_t used = qa_read_acquire(&pf_threads_used);

	for (uint32_t i = 0; i < used; i++) {
		struct pf_thread *t = &pf_threads[i];

		if (!qa_read_acquire(&t->tid))
			continue;
		for (unsigned k = 0; k < PF_COUNTS; k++)
			if (qa_read_acquire(&t->sets[k / PF_WAYS].key[k % PF_WAYS]))
				pf_count_flush(t, k);
		pf_pend_flush(t);
		pf_stk_flush(t);
		for (int k = 0; k < PF_DETAILS; k++)
			pf_detail_flush(&t->details[k]);
	}
	if (shim_profile_on)
		for (unsigned k = 0, n = ls_rows_used(); k < n; k++) {
			struct ls_row *r = ls_row_used(k);

			if (r)
				ls_sites_scale(r);
		}
}

/*
 * A lock's sites count a sampled wait PF_SAMPLE times (contention.h): the
 * sampled part of their counts is an estimate, scaled here so that the
 * counts add up to the lock's contended acquisitions (exact); the waits
 * that stand for themselves (slept, first, no slot) keep their exact
 * counts, a site that waited keeps at least 1, and the largest sampled
 * part takes the rounding (with no sample, the site that waited most
 * takes the untimed waits, whose sites are not known).  The counts are
 * read once and changed by adds, so that a thread still counting at exit
 * loses nothing.
 * Condition variables' waits are all timed.
 */
static void ls_sites_scale(struct ls_row *r)
{
	struct ls_detail *d = qa_read_acquire(&r->detail);
	uint64_t *c[LS_SITES + 1], was[LS_SITES + 1], ex[LS_SITES + 1], v[LS_SITES + 1];
	uint64_t want, exact = 0, sampled = 0, spun, sum = 0;
	int big = 0;

	if (!d || ls_key_kind(qa_read(&r->key)) == LOCKSTAT_COND)
		return;
	want = qa_read(&r->contended);
	for (int i = 0; i <= LS_SITES; i++) {
		c[i] = i < LS_SITES ? &d->sites[i].count : &d->other_sites;
		was[i] = qa_read(c[i]);
		ex[i] = qa_read(i < LS_SITES ? &d->sites[i].exact : &d->other_exact);
		if (ex[i] > was[i])
			ex[i] = was[i];
		exact += ex[i];
		sampled += was[i] - ex[i];
	}
	if (exact + sampled == want || exact + sampled == 0)
		return;
	spun = want > exact ? want - exact : 0; /* the waits the samples stand for */
	for (int i = 0; i <= LS_SITES; i++) {
		uint64_t part = was[i] - ex[i];

		v[i] = ex[i] + (sampled ? (uint64_t)((unsigned __int128)part * spun / sampled) : 0);
		if (was[i] && !v[i])
			v[i] = 1;
		/* The rounding goes to the largest sampled part; with none
		 * (waits left untimed, none sampled: their site is not
		 * known), to the site that waited most. */
		if (sampled ? part > was[big] - ex[big] : was[i] > was[big])
			big = i;
		sum += v[i];
	}
	if (sum <= want)
		v[big] += want - sum;
	else if (v[big] > ex[big] + 1)
		v[big] -= sum - want < v[big] - ex[big] - 1 ? sum - want : v[big] - ex[big] - 1;
	for (int i = 0; i <= LS_SITES; i++)
		if (v[i] != was[i])
			qa_fetch_add_relaxed(c[i], v[i] - was[i]); /* modulo 2^64 */
}

/* The thread exits: its record is free again. */
static void pf_thread_exit(void *arg)
{
	struct pf_thread *t = arg;

	for (unsigned k = 0; k < PF_COUNTS; k++) {
		uintptr_t *key = &t->sets[k / PF_WAYS].key[k % PF_WAYS];

		if (*key) {
			pf_count_flush(t, k);
			qa_write(key, 0);
		}
	}
	memset(t->front, 0, sizeof(t->front));
	memset(t->set_misses, 0, sizeof(t->set_misses));
	pf_pend_flush(t);
	pf_stk_flush(t);
	t->draw = PF_DRAW_NONE;
	for (int k = 0; k < PF_DETAILS; k++) {
		pf_detail_flush(&t->details[k]);
		qa_write(&t->details[k].d, NULL);
	}
	pf_self = NULL;
	pf_pushed = 0;
	qa_write(&t->depth, 0);
	/* Release: the emptied record before it is free (pairs with the
	 * claim's cmpxchg, and with the watchdog's acquire of tid). */
	qa_write_release(&t->tid, 0);
}

void lockstat_setup(void)
{
	static bool clock_set;

	if (!clock_set) {
		ticks_setup();
		clock_set = true;
	}
	if (!pf_key_ok)
		pf_key_ok = pthread_key_create(&pf_key, pf_thread_exit) == 0;
}

static __attribute__((noinline)) struct pf_thread *pf_thread_claim(void)
{
	struct pf_thread *t = NULL;

	if (qa_read(&pf_self_none_left))
		return NULL;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	for (int i = 0; i < PF_THREADS; i++) {
		int32_t cur = qa_read(&pf_threads[i].tid);

		if (cur == 0 && qa_try_cmpxchg_acquire(&pf_threads[i].tid, &cur, tid)) {
			uint32_t hw = qa_read(&pf_threads_used);

			/* Release: the claim before the mark that covers it
			 * (pairs with the acquire of the reports' loops). */
			while (hw < (uint32_t)i + 1 &&
			       !qa_try_cmpxchg_release(&pf_threads_used, &hw, (uint32_t)i + 1))
				;
			t = &pf_threads[i];
			break;
		}
	}
	if (!t) {
		qa_write(&pf_self_none_left, true);
		return NULL;
	}
	qa_write(&t->depth, 0);
	pf_pushed = 0;
	qa_write(&t->lost, 0);
	qa_write(&t->self, (uint64_t)pthread_self());
	qa_write(&t->rd, shim_rd_table());
	t->dmisses = 0;
	t->rng = 0;
	t->draw = PF_DRAW_NONE;
	t->stk_unwinding = 0;
	qa_write(&t->stk_state, (uint32_t)PF_STK_NONE);
	for (int k = 0; k < PF_DETAILS; k++) {
		qa_write(&t->details[k].wlo, (uint8_t)LS_HIST);
		qa_write(&t->details[k].hlo, (uint8_t)LS_HIST);
	}
	pf_self = t;
	if (pf_key_ok)
		(void)pthread_setspecific(pf_key, t);
	return t;
}

/* The thread's record, claimed at its first need; NULL: none left. */
static inline struct pf_thread *pf_thread_get(void)
{
	struct pf_thread *t = pf_self;

	return qa_likely(t != NULL) ? t : pf_thread_claim();
}

/* The thread's share of detail d: found, or a free slot taken, or (after
 * PF_DETAIL_MISSES misses) one taken over; NULL: add to d directly. */
static struct pf_detail *pf_detail_get(struct pf_thread *t, struct ls_detail *d)
{
	struct pf_detail *e = NULL;

	for (int i = 0; i < PF_DETAILS; i++) {
		struct ls_detail *cur = t->details[i].d;

		if (qa_likely(cur == d))
			return &t->details[i];
		if (!cur && !e)
			e = &t->details[i];
	}
	if (!e) {
		if (++t->dmisses < PF_DETAIL_MISSES)
			return NULL;
		t->dmisses = 0;
		e = &t->details[t->dnext++ % PF_DETAILS];
		pf_detail_flush(e);
	}
	/* Release: the emptied share before the pointer that makes it d's
	 * (pairs with the acquire in pf_detail_flush()). */
	qa_write_release(&e->d, d);
	return e;
}

static inline void pf_hist_add(uint32_t *h, uint8_t *lo, uint8_t *hi, uint64_t ns, uint32_t w)
{
	uint8_t b = (uint8_t)ls_bucket(ns);

	qa_stat_add(&h[b], w);
	if (qa_unlikely(b < qa_read(lo)))
		qa_write(lo, b);
	if (qa_unlikely(b > qa_read(hi)))
		qa_write(hi, b);
}

/* w more in the share's buckets and counts. */
static inline void pf_detail_event(struct pf_detail *e, uint32_t w)
{
	if (qa_unlikely(qa_read(&e->events) + w >= PF_DETAIL_FLUSH_EVENTS))
		pf_detail_flush(e);
	else
		qa_stat_add(&e->events, w);
}

/* A wait at pc, standing for w: in the thread's share of d, or else in d. */
static void pf_detail_wait(struct pf_thread *t, struct ls_detail *d, uintptr_t pc, uint64_t ns,
			   uint32_t w)
{
	struct pf_detail *e = pf_detail_get(t, d);

	if (qa_unlikely(!e)) {
		ls_detail_wait(d, pc, ns, w);
		return;
	}
	pf_hist_add(e->wait_hist, &e->wlo, &e->whi, ns, w);
	for (int i = 0; i < LS_SITES; i++) {
		struct ls_site *s = &e->sites[i];

		uintptr_t cur = qa_read(&s->pc);

		if (cur == 0)
			qa_write(&s->pc, cur = pc);
		if (cur != pc)
			continue;
		qa_stat_add(&s->count, w);
		if (w == 1)
			qa_stat_add(&s->exact, 1);
		qa_stat_add(&s->wait_ns, ns * w);
		pf_detail_event(e, w);
		return;
	}
	/* The thread waited at more sites: this one straight to d. */
	ls_site_add(d, pc, w, w == 1, ns * w);
	pf_detail_event(e, w);
}

static void pf_detail_hold(struct pf_thread *t, struct ls_detail *d, uint64_t ns)
{
	struct pf_detail *e = pf_detail_get(t, d);

	if (qa_unlikely(!e)) {
		ls_detail_hold(d, ns);
		return;
	}
	pf_hist_add(e->hold_hist, &e->hlo, &e->hhi, ns, 1);
	qa_stat_add(&e->holds, 1);
	qa_stat_add(&e->hold_total_ns, ns);
	if (ns > qa_read(&e->hold_max_ns))
		qa_write(&e->hold_max_ns, ns);
	pf_detail_event(e, 1);
}

/* Record one pending entry in its lock's details (any thread: the
 * exchange gives it to one). */
static void pf_pend_take(struct pf_thread *t, struct pf_pend *p)
{
	struct ls_row *r = qa_xchg(&p->row, NULL);
	struct ls_detail *d;
	uintptr_t pc;
	uint64_t ns;
	uint32_t w;
	bool hold;

	if (!r)
		return;
	pc = qa_read(&p->pc);
	ns = qa_read(&p->ns);
	hold = qa_read(&p->hold);
	w = qa_read(&p->weight);
	if (!(d = ls_detail_of(r)))
		return;
	if (t == pf_self) {
		if (!hold)
			pf_detail_wait(t, d, pc, ns, w);
		else
			pf_detail_hold(t, d, ns);
	} else if (!hold) { /* another thread's share is its own: to d directly */
		ls_detail_wait(d, pc, ns, w);
	} else {
		ls_detail_hold(d, ns);
	}
}

static void pf_pend_flush(struct pf_thread *t)
{
	for (int i = 0; i < PF_PEND; i++)
		if (qa_read(&t->pend[i].row))
			pf_pend_take(t, &t->pend[i]);
}

/* Keep a wait (at pc) or a hold of r for later: the caller
 * holds the lock, and the details' look-ups and histograms would
 * lengthen the hold.  A full ring records its oldest entry now. */
static inline void pf_pend_add(struct pf_thread *t, struct ls_row *r, uintptr_t pc,
			       uint64_t ns, bool hold, uint32_t w)
{
	struct pf_pend *p = &t->pend[t->npend++ % PF_PEND];

	if (qa_unlikely(qa_read(&p->row) != NULL))
		pf_pend_take(t, p);
	qa_write(&p->pc, pc);
	qa_write(&p->ns, ns);
	qa_write(&p->hold, (uint32_t)hold);
	qa_write(&p->weight, w);
	/* Release: the fields before the row that publishes them (pairs
	 * with the exchange in pf_pend_take()). */
	qa_write_release(&p->row, r);
}

/* Pop the top-most entry of `lock`; false if none. */
static bool pf_pop(struct pf_thread *t, const volatile void *lock, struct pf_held *out)
{
	uint32_t d = t->depth;

	for (uint32_t i = d; i-- > 0;) {
		struct pf_held *h = &t->held[i], *top = &t->held[d - 1];

		if (pf_held_lock(h->lock) != (uintptr_t)lock)
			continue;
		*out = *h;
		if (!(h->lock & PF_HELD_TIMED)) { /* row and t0 not written */
			out->row = NULL;
			out->t0 = 0;
		}
		if (h != top) {
			qa_write(&h->lock, top->lock);
			qa_write(&h->pc, top->pc);
			qa_write(&h->kind, top->kind);
			qa_write(&h->row, top->row);
			qa_write(&h->t0, top->t0);
		}
		qa_write_release(&t->depth, d - 1);
		pf_pushed = d - 1;
		return true;
	}
	return false;
}

/* ---- the hooks ---------------------------------------------------------- */

/* pf_count_add()'s lock has no slot in its set: count it on its row, or
 * give it a slot: a free one, or else (every PF_COUNT_MISSES misses) the
 * one least used since the set's last take-over, flushed first. */
static __attribute__((noinline)) int pf_count_miss(struct pf_thread *t, unsigned set,
						   const volatile void *lock, enum lockstat_kind kind,
						   const void *pc, struct ls_row **row)
{
	uintptr_t key = ls_key(lock, kind);
	struct pf_set *s = &t->sets[set];
	struct ls_row *r = *row = ls_row_of(lock, kind, pc);
	unsigned free_ways = pf_ways_of(s, 0), w = 0;

	if (r == &ls_overflow[kind] ||
	    (!free_ways && ++t->set_misses[set] < PF_COUNT_MISSES)) {
		ls_count(&r->acquired, 1);
		return -1;
	}
	if (free_ways) {
		w = (unsigned)qa_ctz64(free_ways);
	} else {
		uint32_t least = UINT32_MAX;

		t->set_misses[set] = 0;
		for (unsigned v = 0; v < PF_WAYS; v++) {
			uint32_t *mark = &t->n_mark[set * PF_WAYS + v];
			/* Modulo 2^32; a report's flush (n back to 0) makes it large. */
			uint32_t n = (uint32_t)qa_read(&s->n[v]), used = n - *mark;

			if (used < least) {
				least = used;
				w = v;
			}
			*mark = n;
		}
		pf_count_flush(t, set * PF_WAYS + w);
	}
	unsigned i = set * PF_WAYS + w;
	uintptr_t old = s->key[w];

	if (old) { /* its front entry, if it has one, goes with it */
		struct pf_front *f = &t->front[pf_front_of(old)];

		if (f->key == old)
			qa_write(&f->key, 0);
	}
	t->n_mark[i] = 0; /* this acquisition is a use */
	qa_write(&s->key[w], 0);
	qa_write(&t->counts[i].row, r);
	qa_write(&s->n[w], 1);
	/* Release: row and count before the key that makes them count
	 * (pairs with the acquire of the key in lockstat_flush_counts()). */
	qa_write_release(&s->key[w], key);
	return (int)i;
}

/* Count an acquisition in the thread's slot for the lock, whose index it
 * returns (-1: counted on the row; *row is then the lock's row, else
 * unset: the slot's). */
static inline int pf_count_add(struct pf_thread *t, const volatile void *lock,
			       enum lockstat_kind kind, const void *pc, struct ls_row **row)
{
	unsigned set;
	int i = pf_count_hit(t, lock, kind, &set);

	return qa_likely(i >= 0) ? i : pf_count_miss(t, set, lock, kind, pc, row);
}

/* lockstat_acquired() without a record or a slot (contention.h). */
void lockstat_acquired_slow(const volatile void *lock, enum lockstat_kind kind, const void *pc,
			    bool push)
{
	struct pf_thread *t = pf_thread_get();
	struct ls_row *r;

	if (qa_unlikely(t == NULL)) {
		r = ls_row_of(lock, kind, pc);
		ls_count(&r->acquired, 1);
		return;
	}
	int i = pf_count_add(t, lock, kind, pc, &r);

	if (i >= 0) { /* the slot goes in front */
		uintptr_t key = ls_key(lock, kind);
		struct pf_front *f = &t->front[pf_front_of(key)];

		qa_write(&f->key, 0);
		f->n = &t->sets[i / PF_WAYS].n[i % PF_WAYS];
		qa_write(&f->pc, (uintptr_t)pc);
		qa_write(&f->key, key);
	}
	/* An inline path's lock names its holder, and its call site is in
	 * front; without a slot, the stack keeps the site. */
	if (shim_profile_on && (push || i < 0))
		pf_push(t, lock, kind, pc, NULL, 0);
}

void lockstat_held(const volatile void *lock, enum lockstat_kind kind, const void *pc)
{
	struct pf_thread *t = pf_thread_get();

	if (t)
		pf_push(t, lock, kind, pc, NULL, 0);
}

/* Is `lock` on the thread's held-lock stack (in the given kind)? */
static bool pf_stacked(const struct pf_thread *t, const volatile void *lock, uint32_t kind)
{
	for (uint32_t i = 0; i < t->depth && i < PF_HELD; i++)
		if (pf_held_lock(t->held[i].lock) == (uintptr_t)lock && t->held[i].kind == kind)
			return true;
	return false;
}

/* Before a wait for `lock`: the holds of it that its object names this
 * thread's (an inline path's: a re-lock of a mutex the thread holds, a
 * write lock of an rwlock it reads) go on the stack, so that the
 * watchdog, which takes a holder named by the object for another thread
 * only, sees the thread wait for itself.  Each stays until its unlock
 * pops it (the hold was there before the wait, and is released once). */
static void pf_stack_own(struct pf_thread *t, const volatile void *lock, enum lockstat_kind kind)
{
	if (kind == LOCKSTAT_MUTEX) {
		if (shim_mutex_owner(lock, false) == t->tid && !pf_stacked(t, lock, LOCKSTAT_MUTEX))
			pf_push(t, lock, LOCKSTAT_MUTEX, (const void *)pf_front_pc(t, lock, kind),
				NULL, 0);
		return;
	}
	if (kind != LOCKSTAT_RWLOCK_READ && kind != LOCKSTAT_RWLOCK_WRITE)
		return;
	int32_t tid = 0;
	uint64_t self = 0;
	struct shim_rd_view rd;

	if (shim_rwlock_writer(lock, false, &tid, &self) &&
	    ((tid && tid == t->tid) || (self && self == t->self)) &&
	    !pf_stacked(t, lock, LOCKSTAT_RWLOCK_WRITE))
		pf_push(t, lock, LOCKSTAT_RWLOCK_WRITE,
			(const void *)pf_front_pc(t, lock, LOCKSTAT_RWLOCK_WRITE), NULL, 0);
	if (shim_rd_read(t->rd, false, &rd))
		for (uint32_t i = 0; i < rd.n && i < SHIM_RD_VIEW; i++)
			if (rd.lock[i] == (uintptr_t)lock &&
			    !pf_stacked(t, lock, LOCKSTAT_RWLOCK_READ))
				pf_push(t, lock, LOCKSTAT_RWLOCK_READ,
					(const void *)pf_front_pc(t, lock, LOCKSTAT_RWLOCK_READ),
					NULL, 0);
}

/*
 * An acquisition after a timed wait that began at t0, standing for
 * `weight` waits (PF_SAMPLE); time_hold: its hold is timed too.
 * Everything it records goes to the thread's own counters and detail
 * shares (the lock is held now: a write to a line another CPU wrote last
 * would lengthen the hold), save for a lock without a counter slot or
 * detail share.
 */
void lockstat_waited_timed(const volatile void *lock, enum lockstat_kind kind, const void *pc,
			   uint64_t t0, uint32_t weight, bool time_hold)
{
	uint64_t now = ticks_now(), ns = ticks_ns(t0, now);
	struct pf_thread *t = pf_thread_get();
	struct pf_count *c = NULL;
	struct ls_detail *d = NULL;
	struct ls_row *r;

	if (qa_likely(t != NULL)) {
		int i = pf_count_add(t, lock, kind, pc, &r);

		if (qa_likely(i >= 0)) {
			c = &t->counts[i];
			r = c->row;
		}
	} else {
		r = ls_row_of(lock, kind, pc);
		ls_count(&r->acquired, 1);
	}
	/* The lock's first timed wait times its hold too (a lock that had
	 * no slot in lockstat_waited() is told here). */
	if (!time_hold && qa_read(&r->wait_max_ns) == 0 &&
	    (c == NULL || qa_read(&c->wait_max_ns) == 0))
		time_hold = true;
	if (qa_likely(c != NULL)) {
		qa_stat_add(&c->contended, 1);
		qa_stat_add(&c->wait_ns, ns * weight);
		if (ns > qa_read(&c->wait_max_ns))
			qa_write(&c->wait_max_ns, ns);
	} else {
		ls_count(&r->contended, 1);
		ls_count(&r->wait_total_ns, ns * weight);
		ls_raise_max(&r->wait_max_ns, ns);
	}
	if (!shim_profile_on)
		return;
	if (!t) {
		if ((d = ls_detail_of(r)))
			ls_detail_wait(d, (uintptr_t)pc, ns, weight);
		return;
	}
	if (r == &ls_overflow[kind]) { /* no row of its own: no details */
		pf_push(t, lock, kind, pc, NULL, 0);
		return;
	}
	/* The wait's stack, captured before it, gets its time. */
	if (t->stk_state == PF_STK_CAPTURED && t->stk_key == ls_key(lock, kind)) {
		t->stk_ns = ns * t->stk_weight;
		/* Release: the stack's fields before its state (pairs with
		 * the acquire in pf_stk_flush()). */
		qa_write_release(&t->stk_state, (uint32_t)PF_STK_TIMED);
	}
	/* The wait's histogram bucket and call site are recorded at the
	 * thread's next wait, outside this lock (pf_pend_add()). */
	pf_pend_add(t, r, (uintptr_t)pc, ns, false, weight);
	/* The hold of a sampled acquisition, or of the lock's first timed
	 * wait, is timed from now: a clock read at the unlock, while the
	 * lock is still held. */
	pf_push(t, lock, kind, pc, r, time_hold ? now : 0);
}

/* Record the thread's last timed stack (any thread: the exchange of its
 * state gives it to one). */
static void pf_stk_flush(struct pf_thread *t)
{
	uint32_t timed = PF_STK_TIMED;

	if (qa_read(&t->stk_state) != PF_STK_TIMED ||
	    !qa_try_cmpxchg_acquire(&t->stk_state, &timed, (uint32_t)PF_STK_NONE))
		return;
	uintptr_t key = t->stk_key;
	struct ls_row *r = ls_find((const void *)ls_key_addr(key), ls_key_kind(key));

	pf_stack_add(key, t->stk, t->stk_n, t->stk_weight, t->stk_ns);
	if (r && !qa_read(&r->stacked))
		qa_write(&r->stacked, 1);
}

/* Before a wait: draw the sampling, and capture the stack of a sampled
 * wait, or of one for a lock with no stack yet (stacks.h). */
static void pf_stk_capture(struct pf_thread *t, const volatile void *lock, enum lockstat_kind kind)
{
	bool sampled = pf_sampled(t);

	t->draw = sampled ? PF_DRAW_IN : PF_DRAW_OUT;
	pf_stk_flush(t);
	qa_write(&t->stk_state, (uint32_t)PF_STK_NONE);
	if (!pf_depth || t->stk_unwinding)
		return;
	if (!sampled) {
		unsigned set;
		int i = pf_slot_find(t, lock, kind, &set);
		const struct ls_row *r = i >= 0 ? t->counts[i].row : ls_find(lock, kind);

		if (r && qa_read(&r->stacked))
			return;
	}
	t->stk_unwinding = 1;
	t->stk_n = pf_stack_capture(t->stk, pf_depth);
	t->stk_unwinding = 0;
	if (!t->stk_n)
		return;
	t->stk_key = ls_key(lock, kind);
	t->stk_weight = sampled ? PF_SAMPLE : 1;
	qa_write(&t->stk_state, (uint32_t)PF_STK_CAPTURED);
}

void lockstat_wait_begin(const volatile void *lock, enum lockstat_kind kind, const void *pc)
{
	struct pf_thread *t = pf_thread_get();

	if (!t)
		return;
	/* The thread is about to wait: record what it kept for later. */
	pf_pend_flush(t);
	pf_stk_capture(t, lock, kind);
	pf_stack_own(t, lock, kind);
	qa_write(&t->wait_lock, (uintptr_t)lock);
	qa_write(&t->wait_pc, (uintptr_t)pc);
	qa_write(&t->wait_kind, (uint32_t)kind);
	/* Release: the fields before the odd sequence that announces them
	 * (pairs with the watchdog's acquire of wait_seq). */
	qa_write_release(&t->wait_seq, t->wait_seq + 1);
	shim_deadlock_arm();
}

void lockstat_wait_end(void)
{
	struct pf_thread *t = pf_self;

	if (t && (t->wait_seq & 1))
		qa_write_release(&t->wait_seq, t->wait_seq + 1);
}

/* lockstat_release() of a lock that is not the top of the held-lock
 * stack, or whose hold is timed (contention.h). */
void lockstat_release_slow(struct pf_thread *t, const volatile void *lock)
{
	struct pf_held h;

	if (!pf_pop(t, lock, &h) || !h.t0 || !h.row)
		return;
	pf_pend_add(t, h.row, 0, ticks_ns(h.t0, ticks_now()), true, 1);
}

/* ---- condition variables (profile) ---------------------------------- */

uint64_t lockstat_cond_wait_begin(const volatile void *cond, const volatile void *mutex,
				  const void *pc)
{
	struct ls_row *r = ls_row_of(cond, LOCKSTAT_COND, pc);
	uintptr_t none = 0;

	/* A signal may have made the row: the first wait names it, and
	 * keeps its stack. */
	if (!qa_read(&r->first_pc) &&
	    qa_try_cmpxchg_relaxed(&r->first_pc, &none, (uintptr_t)pc) &&
	    r >= ls_table && r < ls_table + LS_SLOTS)
		ls_first_capture((unsigned)(r - ls_table));
	lockstat_release(mutex);
	return ticks_now();
}

/* The mutex is held again here: as for a lock's wait, the thread's own
 * counters and detail shares take what they can. */
void lockstat_cond_wait_end(const volatile void *cond, const volatile void *mutex,
			    const void *pc, uint64_t t0, int err)
{
	uint64_t ns = ticks_ns(t0, ticks_now());
	struct pf_thread *t = pf_thread_get();
	struct pf_count *c = NULL;
	struct ls_row *r;
	struct ls_detail *d;
	int i;

	if (t && (i = pf_count_add(t, cond, LOCKSTAT_COND, pc, &r)) >= 0) {
		c = &t->counts[i];
		r = c->row;
	} else if (!t) {
		r = ls_row_of(cond, LOCKSTAT_COND, pc);
	}
	if (c) {
		qa_stat_add(&c->wait_ns, ns);
		if (ns > qa_read(&c->wait_max_ns))
			qa_write(&c->wait_max_ns, ns);
	} else {
		if (!t)
			ls_count(&r->acquired, 1);
		ls_count(&r->wait_total_ns, ns);
		ls_raise_max(&r->wait_max_ns, ns);
	}
	d = ls_detail_of(r);
	if (d) {
		uintptr_t none = 0;

		if (!qa_read(&d->mutex))
			(void)qa_try_cmpxchg_relaxed(&d->mutex, &none, (uintptr_t)mutex);
		if (t)
			pf_detail_wait(t, d, (uintptr_t)pc, ns, 1);
		else
			ls_detail_wait(d, (uintptr_t)pc, ns, 1);
		if (err == ETIMEDOUT)
			qa_fetch_add_relaxed(&d->timeouts, 1);
	}
	/* The mutex is held again (unless the caller did not hold it): a
	 * new hold, not a new acquisition, and not timed. */
	if (err != EPERM && t)
		pf_push(t, mutex, LOCKSTAT_MUTEX, pc, ls_find(mutex, LOCKSTAT_MUTEX), 0);
}

void lockstat_cond_wake(const volatile void *cond, bool broadcast, const void *pc)
{
	struct ls_row *r = ls_row_of(cond, LOCKSTAT_COND, NULL);
	struct ls_detail *d = ls_detail_of(r);
	uintptr_t none = 0;

	if (!d)
		return;
	(void)qa_try_cmpxchg_relaxed(&d->wake_pc, &none, (uintptr_t)pc);
	qa_fetch_add_relaxed(broadcast ? &d->broadcasts : &d->signals, 1);
}

/* ---- the QLOCK_STATS table ------------------------------------------ */

static uint64_t ls_waited(const struct ls_row *r)
{
	return r->wait_total_ns;
}

static int ls_by_wait(const void *a, const void *b)
{
	const struct ls_row *x = *(const struct ls_row *const *)a;
	const struct ls_row *y = *(const struct ls_row *const *)b;

	if (ls_waited(x) != ls_waited(y))
		return ls_waited(x) < ls_waited(y) ? 1 : -1;
	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	return x->acquired < y->acquired ? 1 : x->acquired > y->acquired ? -1 : 0;
}

static void ls_print_row(struct shim_report *out, const char *name, const char *kind,
			 const struct ls_row *r, const char *site)
{
	shim_report_add(out, "libqlock-pthread: %-18s %-9s %12llu %10llu %12.3f %10.3f%s%s\n",
		name, kind, (unsigned long long)r->acquired,
		(unsigned long long)r->contended, r->wait_total_ns / 1e6,
		r->wait_max_ns / 1e6, site ? "  " : "", site ? site : "");
}

static void ls_add(struct ls_row *sum, const struct ls_row *r)
{
	sum->acquired += r->acquired;
	sum->contended += r->contended;
	sum->wait_total_ns += r->wait_total_ns;
	if (r->wait_max_ns > sum->wait_max_ns)
		sum->wait_max_ns = r->wait_max_ns;
}

void lockstat_report(struct shim_report *out, int top)
{
	lockstat_flush_counts();
	static const struct ls_row *used[LS_SLOTS];
	struct ls_row kinds[LOCKSTAT_NR_KINDS];
	unsigned nlocks[LOCKSTAT_NR_KINDS] = { 0 };
	int n = 0;

	memset(kinds, 0, sizeof(kinds));
	for (unsigned k = 0, nk = ls_rows_used(); k < nk; k++) {
		const struct ls_row *r = ls_row_used(k);
		uintptr_t key = r ? qa_read(&r->key) : 0;

		if (!key || ls_key_kind(key) == LOCKSTAT_COND)
			continue;
		used[n++] = r;
		ls_add(&kinds[ls_key_kind(key)], r);
		nlocks[ls_key_kind(key)]++;
	}
	for (int k = 0; k < LOCKSTAT_COND; k++)
		ls_add(&kinds[k], &ls_overflow[k]);

	const char *head = "libqlock-pthread: %-18s %-9s %12s %10s %12s %10s%s\n";
	qsort(used, (size_t)n, sizeof(used[0]), ls_by_wait);
	if (n > top)
		n = top;
	shim_report_add(out, head, "most contended", "kind", "acquired", "contended",
		"wait ms", "max ms", "  first locked at");
	for (int i = 0; i < n; i++) {
		char addr[32], site[256];

		snprintf(addr, sizeof(addr), "%#lx", (unsigned long)ls_key_addr(used[i]->key));
		if (used[i]->first_pc)
			shim_symbolize((const void *)used[i]->first_pc, site, sizeof(site));
		ls_print_row(out, addr, ls_kind_name[ls_key_kind(used[i]->key)], used[i],
			     used[i]->first_pc ? site : NULL);
	}
	for (int k = 0; k < LOCKSTAT_COND; k++)
		if (ls_overflow[k].acquired)
			ls_print_row(out, "(table full)", ls_kind_name[k], &ls_overflow[k], NULL);
	shim_report_add(out, head, "locks used", "kind", "acquired", "contended",
		"wait ms", "max ms", "");
	for (int k = 0; k < LOCKSTAT_COND; k++) {
		char name[32];

		if (!kinds[k].acquired)
			continue;
		snprintf(name, sizeof(name), "%u%s", nlocks[k],
			 ls_overflow[k].acquired ? "+" : "");
		ls_print_row(out, name, ls_kind_name[k], &kinds[k], NULL);
	}
}
