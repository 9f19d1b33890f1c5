/* SPDX-License-Identifier: MIT */
/*
 * The profile's stacks for a report (stacks.h), each lock's scaled to its
 * row of the contention table, and in the formats other tools read:
 *
 * - pprof (FILE.pb.gz): profile.proto, gzip'd, as Go's mutex profile:
 *   sample types contentions/count and delay/nanoseconds, one sample per
 *   (lock, stack) with a "lock" label, locations symbolized here (function,
 *   file, line), so `go tool pprof` and `pprof` need no binaries.  The
 *   protobuf is encoded by hand and gzip'd with stored deflate blocks (no
 *   compression, no zlib: the drop-in depends on libc only).
 * - folded stacks (FILE.folded): one line per (lock, stack), its frames
 *   outermost first separated by ';' (a frame's inlined functions after
 *   it, as frames of their own), a space, its wait in nanoseconds
 *   (flamegraph.pl, inferno, speedscope).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomic.h"
#include "contention.h"
#include "report.h"
#include "stacks.h"
#include "wrapper.h"

/* ---- a report's stacks ----------------------------------------------------- */

static int by_key_wait(const void *a, const void *b)
{
	const struct pf_rstack *x = a, *y = b;

	if (x->s->key != y->s->key)
		return x->s->key < y->s->key ? -1 : 1;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The field at `off` of n stacks, summing to `from`, scaled to sum to
 * `to` exactly: each gets its share's floor, the largest remainders one
 * more (at most n - 1 of them). */
static void scale(struct pf_rstack *rs, unsigned n, size_t off, uint64_t from, uint64_t to)
{
	uint64_t given = 0, rem[n ? n : 1];

	if (!from)
		return;
	for (unsigned k = 0; k < n; k++) {
		uint64_t *v = (uint64_t *)(void *)((char *)&rs[k] + off);
		unsigned __int128 share = (unsigned __int128)to * *v;

		*v = (uint64_t)(share / from);
		rem[k] = (uint64_t)(share % from);
		given += *v;
	}
	for (; given < to; given++) {
		unsigned best = 0;

		for (unsigned k = 1; k < n; k++)
			if (rem[k] > rem[best])
				best = k;
		*(uint64_t *)(void *)((char *)&rs[best] + off) += 1;
		rem[best] = 0;
	}
}

unsigned pf_report_stacks(const struct pf_rstack **out)
{
	static struct pf_rstack *all;
	unsigned n = 0, used = pf_stacks_used();

	free(all);
	all = calloc(used ? used : 1, sizeof(*all));
	if (!all) {
		*out = NULL;
		return 0;
	}
	for (unsigned k = 0; k < used; k++) {
		const struct pf_stack *s = pf_stack_at(k);

		if (s && s->depth && qa_read(&s->weight)) {
			all[n].s = s;
			all[n].count = qa_read(&s->weight);
			all[n].wait_ns = qa_read(&s->wait_ns);
			n++;
		}
	}
	/* Scale each lock's stacks to its row's exact count and total. */
	qsort(all, n, sizeof(*all), by_key_wait);
	for (unsigned i = 0, j; i < n; i = j) {
		uintptr_t key = all[i].s->key;
		uint64_t w = 0, ns = 0;

		for (j = i; j < n && all[j].s->key == key; j++) {
			w += all[j].count;
			ns += all[j].wait_ns;
		}
		const struct ls_row *r = ls_find((const void *)ls_key_addr(key), ls_key_kind(key));
		uint64_t c = r ? qa_read(&r->contended) : w;
		uint64_t t = r ? qa_read(&r->wait_total_ns) : ns;

		scale(all + i, j - i, offsetof(struct pf_rstack, count), w, c);
		scale(all + i, j - i, offsetof(struct pf_rstack, wait_ns), ns, t);
		for (unsigned k = i; k < j; k++)
			all[k].site = pf_stack_site(all[k].s);
	}
	qsort(all, n, sizeof(*all), by_key_wait);
	*out = all;
	return n;
}

/* ---- a growing buffer ------------------------------------------------------ */

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

/* ---- protobuf -------------------------------------------------------------- */

static void varint(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	put(b, t, n);
}

static void field_int(struct buf *b, unsigned field, uint64_t v)
{
	varint(b, (uint64_t)field << 3);          /* wire type 0: varint */
	varint(b, v);
}

static void field_bytes(struct buf *b, unsigned field, const void *p, size_t n)
{
	varint(b, (uint64_t)field << 3 | 2);      /* wire type 2: length-delimited */
	varint(b, n);
	put(b, p, n);
}

/* A sub-message built in `m`, appended as field `field` and emptied. */
static void field_msg(struct buf *b, unsigned field, struct buf *m)
{
	field_bytes(b, field, m->p, m->len);
	b->failed |= m->failed;
	m->len = 0;
}

/* The string table: index of s, added at its first use. */
struct strtab {
	char **s;
	unsigned n, cap;
	bool failed;
};

static uint64_t str_id(struct strtab *t, const char *s)
{
	for (unsigned i = 0; i < t->n; i++) /* a report's few hundred names */
		if (strcmp(t->s[i], s) == 0)
			return i;
	if (t->n == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 64;
		char **p = realloc(t->s, cap * sizeof(*p));

		if (!p) {
			t->failed = true;
			return 0;
		}
		t->s = p;
		t->cap = cap;
	}
	t->s[t->n] = strdup(s);
	if (!t->s[t->n]) {
		t->failed = true;
		return 0;
	}
	return t->n++;
}

/* The distinct frames (locations) and functions of a report. */
struct loc {
	uintptr_t pc;
	uint64_t func;          /* function id */
};

static uint64_t loc_id(struct loc **locs, unsigned *n, unsigned *cap, uintptr_t pc)
{
	for (unsigned i = 0; i < *n; i++)
		if ((*locs)[i].pc == pc)
			return i + 1;
	if (*n == *cap) {
		unsigned c = *cap ? 2 * *cap : 256;
		struct loc *p = realloc(*locs, c * sizeof(*p));

		if (!p)
			return 0;
		*locs = p;
		*cap = c;
	}
	(*locs)[*n].pc = pc;
	(*locs)[*n].func = 0;
	return ++*n;
}

static size_t pprof_encode(struct buf *out, uint64_t t0)
{
	const struct pf_rstack *rs;
	unsigned ns = pf_report_stacks(&rs), nloc = 0, locap = 0;
	struct strtab st = { NULL, 0, 0, false };
	struct buf m = { NULL, 0, 0, false }, sub = { NULL, 0, 0, false };
	struct loc *locs = NULL;
	uint64_t *ids = malloc(PF_DEPTH_MAX * sizeof(*ids));
	uint64_t fcount = 0;
	char label[64];

	if (!ids)
		return 0;
	(void)str_id(&st, "");
	/* sample_type (1): contentions/count, delay/nanoseconds; as Go's. */
	field_int(&sub, 1, str_id(&st, "contentions"));
	field_int(&sub, 2, str_id(&st, "count"));
	field_msg(out, 1, &sub);
	field_int(&sub, 1, str_id(&st, "delay"));
	field_int(&sub, 2, str_id(&st, "nanoseconds"));
	field_msg(out, 1, &sub);
	/* sample (2): locations leaf first, values, the lock as a label. */
	for (unsigned i = 0; i < ns; i++) {
		const struct pf_stack *s = rs[i].s;

		for (unsigned k = 0; k < s->depth; k++)
			ids[k] = loc_id(&locs, &nloc, &locap, s->pc[k]);
		for (unsigned k = 0; k < s->depth; k++)
			varint(&sub, ids[k]);
		field_msg(&m, 1, &sub);                /* location_id, packed */
		varint(&sub, rs[i].count);
		varint(&sub, rs[i].wait_ns);
		field_msg(&m, 2, &sub);                /* value, packed */
		snprintf(label, sizeof(label), "%s %#lx", ls_kind_name[ls_key_kind(s->key)],
			 (unsigned long)ls_key_addr(s->key));
		field_int(&sub, 1, str_id(&st, "lock"));
		field_int(&sub, 2, str_id(&st, label));
		field_msg(&m, 3, &sub);                /* label */
		field_msg(out, 2, &m);
	}
	/* location (4) and function (5): one function per line, named as
	 * the text report names it (a function shared by two locations is
	 * listed twice: pprof merges by name).  A location's lines are its
	 * inlined functions, innermost first, then the function they are
	 * inlined into, as Go's profiles give them. */
	for (unsigned i = 0; i < nloc; i++) {
		const struct pf_frame *f = pf_frame_of(locs[i].pc);
		unsigned ni = f->sym.ninlined;

		locs[i].func = fcount + ni + 1;
		field_int(&m, 1, i + 1);
		field_int(&m, 3, locs[i].pc);
		for (unsigned k = ni; k-- > 0;) {
			field_int(&sub, 1, fcount + k + 1);
			if (f->sym.inlined[k].line)
				field_int(&sub, 2, f->sym.inlined[k].line);
			field_msg(&m, 4, &sub);        /* line */
		}
		field_int(&sub, 1, locs[i].func);
		if (f->sym.line)
			field_int(&sub, 2, f->sym.line);
		field_msg(&m, 4, &sub);                /* line */
		field_msg(out, 4, &m);
		for (unsigned k = 0; k < ni; k++) {
			const char *func = f->sym.inlined[k].func[0] ? f->sym.inlined[k].func : "??";
			char name[300];

			shim_func_strip_params(func, name, sizeof(name));
			field_int(&m, 1, fcount + k + 1);
			field_int(&m, 2, str_id(&st, name));
			field_int(&m, 3, str_id(&st, func));
			if (f->sym.inlined[k].file[0])
				field_int(&m, 4, str_id(&st, f->sym.inlined[k].file));
			field_msg(out, 5, &m);
		}
		fcount += ni + 1;
		field_int(&m, 1, locs[i].func);
		field_int(&m, 2, str_id(&st, f->name));
		field_int(&m, 3, str_id(&st, f->named ? f->sym.func : f->name));
		if (f->sym.file[0])
			field_int(&m, 4, str_id(&st, f->sym.file));
		field_msg(out, 5, &m);
	}
	/* string_table (6), time_nanos (9), duration_nanos (10),
	 * period_type (11), period (12). */
	for (unsigned i = 0; i < st.n; i++)
		field_bytes(out, 6, st.s[i], strlen(st.s[i]));
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t dur = qc_now_ns() - t0;
	uint64_t wall = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	field_int(out, 9, wall - dur);
	field_int(out, 10, dur);
	field_int(&sub, 1, str_id(&st, "contentions"));
	field_int(&sub, 2, str_id(&st, "count"));
	field_msg(out, 11, &sub);
	field_int(out, 12, 1);
	bool failed = st.failed || m.failed || sub.failed || out->failed;
	for (unsigned i = 0; i < st.n; i++)
		free(st.s[i]);
	free(st.s);
	free(m.p);
	free(sub.p);
	free(locs);
	free(ids);
	return failed ? 0 : out->len;
}

/* ---- gzip, stored blocks --------------------------------------------------- */

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	static uint32_t table[256];
	uint32_t c = 0xffffffffu;

	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int k = 0; k < 8; k++)
				v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
			table[i] = v;
		}
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static void le32(struct buf *b, uint32_t v)
{
	uint8_t t[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(b, t, 4);
}

/* RFC 1952 around RFC 1951 stored blocks (BTYPE 00, at most 65535 bytes each). */
static void gzip_stored(struct buf *out, const uint8_t *p, size_t n)
{
	static const uint8_t head[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	size_t off = 0;

	put(out, head, sizeof(head));
	do {
		size_t k = n - off > 65535 ? 65535 : n - off;
		uint8_t h[5] = { off + k == n ? 1 : 0, (uint8_t)k, (uint8_t)(k >> 8),
				 (uint8_t)~k, (uint8_t)(~k >> 8) };

		put(out, h, sizeof(h));
		put(out, p + off, k);
		off += k;
	} while (off < n);
	le32(out, crc32_of(p, n));
	le32(out, (uint32_t)n);
}

bool pf_write_pprof(const char *path, uint64_t t0)
{
	struct buf pb = { NULL, 0, 0, false }, gz = { NULL, 0, 0, false };
	bool ok = false;

	if (pprof_encode(&pb, t0)) {
		gzip_stored(&gz, pb.p ? pb.p : (const uint8_t *)"", pb.len);
		if (!gz.failed) {
			shim_report_emit(path, true, (const char *)gz.p, gz.len);
			ok = true;
		}
	}
	free(pb.p);
	free(gz.p);
	return ok;
}

/* ---- folded stacks --------------------------------------------------------- */

static void folded_name(struct buf *b, const char *s)
{
	for (; *s; s++) {
		char c = *s == ';' ? ':' : *s == '\n' ? ' ' : *s;

		put(b, &c, 1);
	}
}

bool pf_write_folded(const char *path)
{
	const struct pf_rstack *rs;
	unsigned ns = pf_report_stacks(&rs);
	struct buf b = { NULL, 0, 0, false };
	char num[32];

	for (unsigned i = 0; i < ns; i++) {
		const struct pf_stack *s = rs[i].s;

		for (unsigned k = s->depth; k-- > 0;) {
			const struct pf_frame *f = pf_frame_of(s->pc[k]);

			folded_name(&b, f->name);
			for (unsigned j = 0; j < f->sym.ninlined; j++) {
				char name[300];

				shim_func_strip_params(f->sym.inlined[j].func[0] ? f->sym.inlined[j].func : "??",
						       name, sizeof(name));
				put(&b, ";", 1);
				folded_name(&b, name);
			}
			if (k)
				put(&b, ";", 1);
		}
		int n = snprintf(num, sizeof(num), " %llu\n", (unsigned long long)rs[i].wait_ns);
		put(&b, num, (size_t)n);
	}
	if (!b.failed)
		shim_report_emit(path, true, b.p ? (const char *)b.p : "", b.len);
	free(b.p);
	return !b.failed;
}
