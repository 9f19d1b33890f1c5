/* SPDX-License-Identifier: MIT */
/*
 * The per-lock table behind lockstat.h: open addressing on the lock's
 * address and kind, one cache line per lock so that counting on one lock
 * does not slow down its neighbours.  A slot's key is claimed once with a
 * cmpxchg and never freed (a destroyed lock's row stays: what it suffered
 * happened).  Locks beyond the table's room are summed in one overflow
 * row per kind, so no acquisition goes uncounted.
 */
#define _GNU_SOURCE
#include "lockstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic.h"
#include "shim.h"

#define LS_SLOTS 4096 /* power of two */
#define LS_PROBES 32

struct ls_row {
	uintptr_t key;          /* lock address | kind, 0 = free */
	uint64_t acquired;
	uint64_t contended;
	uint64_t wait_total_ns;
	uint64_t wait_max_ns;
} __attribute__((aligned(64)));

static struct ls_row ls_table[LS_SLOTS];
static struct ls_row ls_overflow[LOCKSTAT_NR_KINDS];

static const char *const ls_kind_name[LOCKSTAT_NR_KINDS] = {
	"mutex", "rwlock-rd", "rwlock-wr", "spin",
};

/* pthread objects are at least 4-byte aligned: the kind fits below. */
static inline uintptr_t ls_key(const volatile void *lock, enum lockstat_kind kind)
{
	return (uintptr_t)lock | (uintptr_t)kind;
}

static struct ls_row *ls_row_of(const volatile void *lock, enum lockstat_kind kind)
{
	uintptr_t key = ls_key(lock, kind);
	uint64_t h = (uint64_t)(key >> 2) * 0x9e3779b97f4a7c15ull;
	unsigned i = (unsigned)(h >> 52) & (LS_SLOTS - 1);

	for (int n = 0; n < LS_PROBES; n++, i = (i + 1) & (LS_SLOTS - 1)) {
		struct ls_row *r = &ls_table[i];
		uintptr_t cur = qa_read(&r->key);

		if (cur == 0 && qa_try_cmpxchg_relaxed(&r->key, &cur, key))
			return r;
		if (cur == key)
			return r;
	}
	return &ls_overflow[kind];
}

static void ls_raise_max(uint64_t *max, uint64_t v)
{
	uint64_t cur = qa_read(max);

	while (cur < v && !qa_try_cmpxchg_relaxed(max, &cur, v))
		;
}

/*
 * A row is updated by the thread that has just acquired its lock.  For an
 * exclusive lock (mutex, write lock, spinlock) that thread is alone on the
 * row until it unlocks, whose release orders the update before the next
 * owner's: a plain add suffices and keeps a locked instruction off the
 * uncontended path.  Readers share their lock, and an overflow row is
 * shared by many locks: those add atomically.  All relaxed: the counts
 * are read at exit, after the threads are done.
 */
static inline void ls_count(uint64_t *c, uint64_t v, bool alone)
{
	if (alone)
		qa_stat_add(c, v);
	else
		qa_fetch_add_relaxed(c, v);
}

void lockstat_record(const volatile void *lock, enum lockstat_kind kind, bool waited,
		     uint64_t wait_ns)
{
	struct ls_row *r = ls_row_of(lock, kind);
	bool alone = kind != LOCKSTAT_RWLOCK_READ && r != &ls_overflow[kind];

	ls_count(&r->acquired, 1, alone);
	if (!waited)
		return;
	ls_count(&r->contended, 1, alone);
	ls_count(&r->wait_total_ns, wait_ns, alone);
	ls_raise_max(&r->wait_max_ns, wait_ns);
}

static int ls_by_contention(const void *a, const void *b)
{
	const struct ls_row *x = *(const struct ls_row *const *)a;
	const struct ls_row *y = *(const struct ls_row *const *)b;

	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	if (x->wait_total_ns != y->wait_total_ns)
		return x->wait_total_ns < y->wait_total_ns ? 1 : -1;
	return x->acquired < y->acquired ? 1 : x->acquired > y->acquired ? -1 : 0;
}

static void ls_print_row(struct shim_report *out, const char *name, const char *kind,
			 const struct ls_row *r)
{
	shim_report_add(out, "libqlock-pthread: %-18s %-9s %12llu %10llu %12.3f %10.3f\n",
		name, kind, (unsigned long long)r->acquired,
		(unsigned long long)r->contended, r->wait_total_ns / 1e6,
		r->wait_max_ns / 1e6);
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
	static const struct ls_row *used[LS_SLOTS];
	struct ls_row kinds[LOCKSTAT_NR_KINDS];
	unsigned nlocks[LOCKSTAT_NR_KINDS] = { 0 };
	int n = 0;

	memset(kinds, 0, sizeof(kinds));
	for (int i = 0; i < LS_SLOTS; i++) {
		const struct ls_row *r = &ls_table[i];
		uintptr_t key = qa_read(&r->key);

		if (!key)
			continue;
		used[n++] = r;
		ls_add(&kinds[key & 3], r);
		nlocks[key & 3]++;
	}
	for (int k = 0; k < LOCKSTAT_NR_KINDS; k++)
		ls_add(&kinds[k], &ls_overflow[k]);

	const char *head = "libqlock-pthread: %-18s %-9s %12s %10s %12s %10s\n";
	shim_report_add(out, head, "locks used", "kind", "acquired", "contended",
		"wait ms", "max ms");
	for (int k = 0; k < LOCKSTAT_NR_KINDS; k++) {
		char name[32];

		if (!kinds[k].acquired)
			continue;
		snprintf(name, sizeof(name), "%u%s", nlocks[k],
			 ls_overflow[k].acquired ? "+" : "");
		ls_print_row(out, name, ls_kind_name[k], &kinds[k]);
	}
	qsort(used, (size_t)n, sizeof(used[0]), ls_by_contention);
	if (n > top)
		n = top;
	shim_report_add(out, head, "most contended", "kind", "acquired", "contended",
		"wait ms", "max ms");
	for (int i = 0; i < n; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "%#lx", (unsigned long)(used[i]->key & ~(uintptr_t)3));
		ls_print_row(out, addr, ls_kind_name[used[i]->key & 3], used[i]);
	}
	for (int k = 0; k < LOCKSTAT_NR_KINDS; k++)
		if (ls_overflow[k].acquired)
			ls_print_row(out, "(table full)", ls_kind_name[k], &ls_overflow[k]);
}
