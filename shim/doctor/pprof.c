/* SPDX-License-Identifier: MIT */
/*
 * The profile's stacks in the formats other tools read (stacks.h):
 *
 * - pprof (FILE.pb.gz): profile.proto, gzip'd, as Go's mutex profile:
 *   sample types contentions/count and delay/nanoseconds, one sample per
 *   (lock, stack) with a "lock" label, locations symbolized here (function,
 *   file, line), so `go tool pprof` and `pprof` need no binaries.  The
 *   protobuf is encoded by hand and gzip'd with stored deflate blocks (no
 *   compression, no zlib: the drop-in depends on libc only).
 * - folded stacks (FILE.folded): one line per (lock, stack), its frames
 *   outermost first separated by ';', a space, its wait in nanoseconds
 *   (flamegraph.pl, inferno, speedscope).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomic.h"
#include "contention.h"
#include "profile.h"
#include "report.h"
#include "stacks.h"

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

static size_t pprof_encode(struct buf *out)
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
	/* location (4) and function (5): one function per location, named
	 * as the text report names it (a function shared by two locations
	 * is listed twice: pprof merges by name). */
	for (unsigned i = 0; i < nloc; i++) {
		const struct pf_frame *f = pf_frame_of(locs[i].pc);

		locs[i].func = ++fcount;
		field_int(&m, 1, i + 1);
		field_int(&m, 3, locs[i].pc);
		field_int(&sub, 1, locs[i].func);
		if (f->sym.line)
			field_int(&sub, 2, f->sym.line);
		field_msg(&m, 4, &sub);                /* line */
		field_msg(out, 4, &m);
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
	uint64_t dur = qc_now_ns() - shim_profile_t0;
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

bool pf_write_pprof(const char *path)
{
	struct buf pb = { NULL, 0, 0, false }, gz = { NULL, 0, 0, false };
	bool ok = false;

	if (pprof_encode(&pb)) {
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
			folded_name(&b, pf_frame_of(s->pc[k])->name);
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
