/* SPDX-License-Identifier: MIT */
/*
 * The inlined calls around an address (dwarf.h), read from the DWARF 4 and
 * 5 debugging information entries (.debug_info, .debug_abbrev) as the
 * DWARF specifications define them:
 *
 *   address -> its compilation unit: the .debug_aranges set that covers
 *   it, else the first unit whose root entry's DW_AT_low_pc/high_pc or
 *   DW_AT_ranges does -> the unit's DW_TAG_inlined_subroutine entries, each
 *   with its address ranges, its depth in the entry tree and its
 *   DW_AT_call_file/DW_AT_call_line -> those whose ranges hold the
 *   address, outermost (shallowest) first.
 *
 * A unit's first look-ups (PROBES_MAX) are probes: its entries are walked
 * for the inlined calls that hold the address only, skipping (to their
 * DW_AT_sibling) the children of each entry whose code does not hold it
 * and of each type, so that a report that names a few addresses in a
 * large unit reads little of it; the first probe of a unit also notes
 * its top-level entries that may need reading and the addresses each one's
 * code spans, so that the next probes go straight from one that may hold
 * their address to the next.  After them, or after a probe that could
 * skip little (no DW_AT_sibling), the unit is read once: its inlined
 * ranges are kept in a table (an anonymous mapping; the last UNITS_KEPT
 * units used, each at most RANGES_MAX ranges, KEPT_BYTES in all).  A unit
 * with more ranges is walked again at each look-up instead, keeping only
 * the ranges that hold the address.
 *
 * Every read is bounds-checked (dwarf.h's reader); a unit that does not
 * read whole (a probe: the entries it reads) gives no inlined calls; a
 * sibling is followed forward only, within its unit.  No recursion: the entry tree is
 * walked with a depth counter (at most DEPTH_MAX); an abbreviation has at
 * most ATTRS_MAX attributes, a range list at most LIST_MAX entries, and a
 * look-up does at most WORK_MAX steps (an attribute, a range, a unit
 * header, an abbreviation looked at), so that a hostile file costs a
 * bounded time: past it, no inlined calls.  This file's memory comes
 * from mmap, not malloc: the deadlock watchdog symbolizes while the
 * program's threads (its malloc's locks included) may be stuck.
 *
 * What is read: unit headers of versions 4 and 5 (DWARF 5 compile and
 * partial units; type, skeleton and split units are skipped; DWARF 2 and
 * 3 give no inlined calls), every attribute form of DWARF 5 and the GNU
 * extensions gcc and clang emit (DW_FORM_strx*, DW_FORM_addrx*,
 * DW_FORM_rnglistx, DW_FORM_implicit_const, DW_FORM_data16,
 * DW_FORM_line_strp, DW_FORM_indirect, ...), addresses through
 * .debug_addr (DW_AT_addr_base), ranges in .debug_ranges (version 4) and
 * .debug_rnglists (version 5, DW_AT_rnglists_base for DW_FORM_rnglistx)
 * with the unit's base address; an inlined call without a DW_AT_call_line
 * (clang's artificial __cxx_global_var_init) is left out.  The inlined
 * function's name: DW_AT_abstract_origin's entry, its DW_AT_linkage_name
 * or DW_AT_name, through DW_AT_specification; strings in place, in
 * .debug_str or .debug_line_str, or through .debug_str_offsets
 * (DW_AT_str_offsets_base).
 */
#define _GNU_SOURCE
#include "dwarf.h"

#include <sys/mman.h>

/* DWARF 5, section 7.5: the tags, attributes and forms read here. */
enum {
	TAG_array_type = 0x01,
	TAG_class_type = 0x02,
	TAG_enumeration_type = 0x04,
	TAG_structure_type = 0x13,
	TAG_subroutine_type = 0x15,
	TAG_union_type = 0x17,
	TAG_inlined_subroutine = 0x1d,
	TAG_subprogram = 0x2e,

	AT_sibling = 0x01,

	AT_name = 0x03,
	AT_stmt_list = 0x10,
	AT_low_pc = 0x11,
	AT_high_pc = 0x12,
	AT_ranges = 0x55,
	AT_call_file = 0x58,
	AT_call_line = 0x59,
	AT_abstract_origin = 0x31,
	AT_specification = 0x47,
	AT_linkage_name = 0x6e,
	AT_MIPS_linkage_name = 0x2007,
	AT_str_offsets_base = 0x72,
	AT_addr_base = 0x73,
	AT_rnglists_base = 0x74,
	AT_GNU_addr_base = 0x2133,

	FORM_addr = 0x01,
	FORM_block2 = 0x03,
	FORM_block4 = 0x04,
	FORM_data2 = 0x05,
	FORM_data4 = 0x06,
	FORM_data8 = 0x07,
	FORM_string = 0x08,
	FORM_block = 0x09,
	FORM_block1 = 0x0a,
	FORM_data1 = 0x0b,
	FORM_flag = 0x0c,
	FORM_sdata = 0x0d,
	FORM_strp = 0x0e,
	FORM_udata = 0x0f,
	FORM_ref_addr = 0x10,
	FORM_ref1 = 0x11,
	FORM_ref2 = 0x12,
	FORM_ref4 = 0x13,
	FORM_ref8 = 0x14,
	FORM_ref_udata = 0x15,
	FORM_indirect = 0x16,
	FORM_sec_offset = 0x17,
	FORM_exprloc = 0x18,
	FORM_flag_present = 0x19,
	FORM_strx = 0x1a,
	FORM_addrx = 0x1b,
	FORM_ref_sup4 = 0x1c,
	FORM_strp_sup = 0x1d,
	FORM_data16 = 0x1e,
	FORM_line_strp = 0x1f,
	FORM_ref_sig8 = 0x20,
	FORM_implicit_const = 0x21,
	FORM_loclistx = 0x22,
	FORM_rnglistx = 0x23,
	FORM_ref_sup8 = 0x24,
	FORM_strx1 = 0x25,
	FORM_strx2 = 0x26,
	FORM_strx3 = 0x27,
	FORM_strx4 = 0x28,
	FORM_addrx1 = 0x29,
	FORM_addrx2 = 0x2a,
	FORM_addrx3 = 0x2b,
	FORM_addrx4 = 0x2c,
	FORM_GNU_addr_index = 0x1f01,
	FORM_GNU_str_index = 0x1f02,
	FORM_GNU_ref_alt = 0x1f20,
	FORM_GNU_strp_alt = 0x1f21,

	UT_compile = 0x01,
	UT_partial = 0x03,

	/* .debug_rnglists entries (DWARF 5, section 7.25) */
	RLE_end_of_list = 0x00,
	RLE_base_addressx = 0x01,
	RLE_startx_endx = 0x02,
	RLE_startx_length = 0x03,
	RLE_offset_pair = 0x04,
	RLE_base_address = 0x05,
	RLE_start_end = 0x06,
	RLE_start_length = 0x07,
};

#define DEPTH_MAX 1024          /* entry tree depth */
#define ATTRS_MAX 256           /* attributes of one abbreviation */
#define LIST_MAX 65536          /* entries of one range list */
/* (a test builds this file with smaller ones: shim/tests/dwarf_read.c) */
#ifndef RANGES_MAX
#define RANGES_MAX (1u << 18)   /* inlined ranges kept of one unit */
#endif
#ifndef UNITS_KEPT
#define UNITS_KEPT 8
#endif
#ifndef KEPT_BYTES
#define KEPT_BYTES (32u << 20)  /* all units' tables */
#endif
#define WORK_MAX (1u << 26)     /* steps of one look-up */
#ifndef PROBES_MAX
#define PROBES_MAX 8u           /* look-ups of a unit before its table is made */
#endif

/* The steps left to this look-up (shim_dwarf_inline() sets it; the
 * caller serialises look-ups). */
static uint32_t work_left;

static bool work(uint32_t n)
{
	if (work_left < n) {
		work_left = 0;
		return false;
	}
	work_left -= n;
	return true;
}

/* ---- units and their abbreviations ---------------------------------------- */

struct unit {
	const struct dwarf *d;
	uint64_t off;                   /* the unit's offset in .debug_info */
	uint64_t next;                  /* the next unit's */
	unsigned version, offsize, addr_size;
	const uint8_t *dies, *end;      /* its entries */
	uint64_t abbrev_off;
	/* from the root entry */
	uint64_t base;                  /* DW_AT_low_pc, the base address */
	uint64_t addr_base, rnglists_base, stmt_list, str_offsets_base;
	bool have_addr_base, have_rnglists_base, have_stmt_list, have_str_offsets_base;
};

struct abbrev {
	uint64_t code;
	uint32_t tag;
	bool children;
	const uint8_t *spec;            /* its (attribute, form) pairs */
	int32_t fixed;                  /* its entries' size when every form's is fixed, else -1
					 * (in a unit's table: abbrevs_load()) */
	uint32_t nattr;                 /* its attributes */
	const struct aspec *dec;        /* them decoded (in a unit's table), else NULL */
};

/* One (attribute, form) pair of an abbreviation, decoded. */
struct aspec {
	uint64_t at, form;
	int64_t implicit;
};

/* One abbreviation declaration at r (DWARF 5, section 7.5.3); false at
 * the table's end or on a bad one. */
static bool abbrev_next(struct rd *r, struct abbrev *a)
{
	unsigned n = 0;

	a->code = rd_uleb(r);
	if (r->bad || a->code == 0)
		return false;
	a->tag = (uint32_t)rd_uleb(r);
	a->children = rd_u(r, 1) != 0;
	a->spec = r->p;
	a->dec = NULL;
	for (;;) {
		uint64_t at = rd_uleb(r), form = rd_uleb(r);

		if (r->bad || n++ > ATTRS_MAX || !work(1)) {
			r->bad = true;
			return false;
		}
		if (at == 0 && form == 0) {
			a->nattr = n - 1;
			return true;
		}
		if (form == FORM_implicit_const)
			(void)rd_sleb(r);
	}
}

/* A unit's abbreviations, in an array: by code - 1 when the codes run
 * 1, 2, 3... (as compilers number them), else searched. */
struct abbrevs {
	struct abbrev *v;
	size_t n, bytes;
};

static void *map_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The size of an entry of abbreviation a in unit u when all its forms
 * have a fixed size (DWARF 5 section 7.5.6), else -1: such an entry is
 * passed over without reading its attributes when none is needed. */
static int32_t abbrev_fixed(const struct unit *u, const struct abbrev *a)
{
	struct rd s = { a->spec, u->d->abbrev.p + u->d->abbrev.size, false };
	int32_t size = 0;

	for (unsigned n = 0; n <= ATTRS_MAX; n++) {
		uint64_t at = rd_uleb(&s), form = rd_uleb(&s);
		unsigned k;

		if (s.bad)
			return -1;
		if (at == 0 && form == 0)
			return size;
		switch (form) {
		case FORM_flag_present: k = 0; break;
		case FORM_implicit_const: (void)rd_sleb(&s); k = 0; break;
		case FORM_data1: case FORM_ref1: case FORM_flag: case FORM_strx1: case FORM_addrx1:
			k = 1; break;
		case FORM_data2: case FORM_ref2: case FORM_strx2: case FORM_addrx2: k = 2; break;
		case FORM_strx3: case FORM_addrx3: k = 3; break;
		case FORM_data4: case FORM_ref4: case FORM_strx4: case FORM_addrx4: case FORM_ref_sup4:
			k = 4; break;
		case FORM_data8: case FORM_ref8: case FORM_ref_sig8: case FORM_ref_sup8: k = 8; break;
		case FORM_data16: k = 16; break;
		case FORM_addr: k = u->addr_size; break;
		case FORM_strp: case FORM_line_strp: case FORM_sec_offset: case FORM_ref_addr:
		case FORM_strp_sup: case FORM_GNU_ref_alt: case FORM_GNU_strp_alt:
			k = u->offsize; break;
		default: return -1;     /* LEB128, strings, blocks, indirect */
		}
		size += (int32_t)k;
	}
	return -1;
}

static bool abbrevs_load(const struct unit *u, struct abbrevs *t)
{
	const struct sec *s = &u->d->abbrev;
	struct abbrev a;
	struct rd r;
	size_t n = 0;

	t->v = NULL;
	t->n = t->bytes = 0;
	if (u->abbrev_off >= s->size)
		return false;
	size_t attrs = 0;

	r = (struct rd){ s->p + u->abbrev_off, s->p + s->size, false };
	while (abbrev_next(&r, &a)) {
		n++;
		attrs += a.nattr;
	}
	if (r.bad || n == 0)
		return false;
	t->bytes = n * sizeof(*t->v) + attrs * sizeof(struct aspec);
	t->v = map_alloc(t->bytes);
	if (!t->v)
		return false;
	struct aspec *dec = (struct aspec *)(void *)(t->v + n);
	r = (struct rd){ s->p + u->abbrev_off, s->p + s->size, false };
	while (t->n < n && abbrev_next(&r, &t->v[t->n])) {
		struct abbrev *b = &t->v[t->n];
		struct rd sp = { b->spec, s->p + s->size, false };

		b->fixed = abbrev_fixed(u, b);
		if (b->nattr <= attrs) {
			b->dec = dec;
			for (uint32_t k = 0; k < b->nattr; k++) {
				dec[k].at = rd_uleb(&sp);
				dec[k].form = rd_uleb(&sp);
				dec[k].implicit = dec[k].form == FORM_implicit_const ? rd_sleb(&sp) : 0;
			}
			dec += b->nattr;
			attrs -= b->nattr;
		}
		t->n++;
	}
	return true;
}

static void abbrevs_free(struct abbrevs *t)
{
	if (t->v)
		munmap(t->v, t->bytes);
	t->v = NULL;
}

/* The abbreviations of unit u: the table loaded last, kept (a report's
 * look-ups are mostly in a few units), else loaded in its place; NULL
 * when they do not read. */
static const struct abbrevs *abbrevs_of(const struct unit *u)
{
	static struct abbrevs last;
	static const uint8_t *last_at;
	static unsigned last_sizes;     /* the entry sizes' unit's address and offset sizes */
	unsigned sizes = u->addr_size << 8 | u->offsize;

	if (last.v && last_at == u->d->abbrev.p + u->abbrev_off && last_sizes == sizes)
		return &last;
	abbrevs_free(&last);
	last_at = NULL;
	if (!abbrevs_load(u, &last))
		return NULL;
	last_at = u->d->abbrev.p + u->abbrev_off;
	last_sizes = sizes;
	return &last;
}

static const struct abbrev *abbrev_get(const struct abbrevs *t, uint64_t code)
{
	if (code - 1 < t->n && t->v[code - 1].code == code)
		return &t->v[code - 1];
	if (!work(t->n > UINT32_MAX ? UINT32_MAX : (uint32_t)t->n))
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].code == code)
			return &t->v[i];
	return NULL;
}

/* The unit header at off (DWARF 5 section 7.5.1.1, DWARF 4 section 7.5.1).
 * Returns -1 when no unit can be read there (nor after it), 0 for a unit
 * to skip (another version or kind; u->next is set), 1 for a compile or
 * partial unit of version 4 or 5. */
static int unit_header(const struct dwarf *d, uint64_t off, struct unit *u)
{
	struct rd r;
	uint64_t len;

	memset(u, 0, sizeof(*u));
	u->d = d;
	u->off = off;
	if (off >= d->info.size)
		return -1;
	r = (struct rd){ d->info.p + off, d->info.p + d->info.size, false };
	u->offsize = 4;
	len = rd_u(&r, 4);
	if (len == 0xffffffffu) {
		u->offsize = 8;
		len = rd_u(&r, 8);
	} else if (len >= 0xfffffff0u) {
		return -1;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p) || len < 2)
		return -1;
	r.end = r.p + len;
	u->next = (uint64_t)(r.end - d->info.p);
	u->end = r.end;
	u->version = (unsigned)rd_u(&r, 2);
	if (u->version == 5) {
		unsigned type = (unsigned)rd_u(&r, 1);

		u->addr_size = (unsigned)rd_u(&r, 1);
		u->abbrev_off = rd_u(&r, u->offsize);
		if (type != UT_compile && type != UT_partial)
			return 0;
	} else if (u->version == 4) {
		u->abbrev_off = rd_u(&r, u->offsize);
		u->addr_size = (unsigned)rd_u(&r, 1);
	} else {
		return 0;
	}
	if (r.bad || (u->addr_size != 4 && u->addr_size != 8))
		return 0;
	u->dies = r.p;
	return 1;
}

/* ---- attribute values ------------------------------------------------------ */

enum vkind { V_NONE, V_ADDR, V_ADDRX, V_CONST, V_SECOFF, V_RNGLISTX, V_REF, V_STR, V_STRX, V_OTHER };

struct val {
	enum vkind kind;
	uint64_t u;             /* V_REF: an offset in .debug_info */
	const char *s;          /* V_STR */
};

/* Read one attribute value of `form` (DWARF 5 section 7.5.6, with the GNU
 * forms of the DWARF 4 split-DWARF and dwz extensions). */
static void form_read(struct rd *r, const struct unit *u, uint64_t form, int64_t implicit,
		      struct val *v)
{
	v->kind = V_OTHER;
	v->u = 0;
	v->s = NULL;
	for (int hops = 0; hops < 4; hops++) {
		switch (form) {
		case FORM_addr: v->kind = V_ADDR; v->u = rd_u(r, u->addr_size); return;
		case FORM_addrx:
		case FORM_GNU_addr_index: v->kind = V_ADDRX; v->u = rd_uleb(r); return;
		case FORM_addrx1: v->kind = V_ADDRX; v->u = rd_u(r, 1); return;
		case FORM_addrx2: v->kind = V_ADDRX; v->u = rd_u(r, 2); return;
		case FORM_addrx3: v->kind = V_ADDRX; v->u = rd_u(r, 3); return;
		case FORM_addrx4: v->kind = V_ADDRX; v->u = rd_u(r, 4); return;
		case FORM_data1: v->kind = V_CONST; v->u = rd_u(r, 1); return;
		case FORM_data2: v->kind = V_CONST; v->u = rd_u(r, 2); return;
		case FORM_data4: v->kind = V_CONST; v->u = rd_u(r, 4); return;
		case FORM_data8: v->kind = V_CONST; v->u = rd_u(r, 8); return;
		case FORM_udata: v->kind = V_CONST; v->u = rd_uleb(r); return;
		case FORM_sdata: v->kind = V_CONST; v->u = (uint64_t)rd_sleb(r); return;
		case FORM_implicit_const: v->kind = V_CONST; v->u = (uint64_t)implicit; return;
		case FORM_sec_offset: v->kind = V_SECOFF; v->u = rd_u(r, u->offsize); return;
		case FORM_rnglistx: v->kind = V_RNGLISTX; v->u = rd_uleb(r); return;
		case FORM_ref1: v->kind = V_REF; v->u = u->off + rd_u(r, 1); return;
		case FORM_ref2: v->kind = V_REF; v->u = u->off + rd_u(r, 2); return;
		case FORM_ref4: v->kind = V_REF; v->u = u->off + rd_u(r, 4); return;
		case FORM_ref8: v->kind = V_REF; v->u = u->off + rd_u(r, 8); return;
		case FORM_ref_udata: v->kind = V_REF; v->u = u->off + rd_uleb(r); return;
		case FORM_ref_addr: v->kind = V_REF; v->u = rd_u(r, u->offsize); return;
		case FORM_string: v->kind = V_STR; v->s = rd_str(r); return;
		case FORM_strp: v->kind = V_STR; v->s = sec_str(u->d->str, rd_u(r, u->offsize)); return;
		case FORM_line_strp:
			v->kind = V_STR;
			v->s = sec_str(u->d->line_str, rd_u(r, u->offsize));
			return;
		case FORM_strx:
		case FORM_GNU_str_index: v->kind = V_STRX; v->u = rd_uleb(r); return;
		case FORM_strx1: v->kind = V_STRX; v->u = rd_u(r, 1); return;
		case FORM_strx2: v->kind = V_STRX; v->u = rd_u(r, 2); return;
		case FORM_strx3: v->kind = V_STRX; v->u = rd_u(r, 3); return;
		case FORM_strx4: v->kind = V_STRX; v->u = rd_u(r, 4); return;
		case FORM_data16: rd_skip(r, 16); return;
		case FORM_flag: rd_skip(r, 1); return;
		case FORM_ref_sup4: rd_skip(r, 4); return;
		case FORM_ref_sig8: case FORM_ref_sup8: rd_skip(r, 8); return;
		case FORM_strp_sup: case FORM_GNU_ref_alt: case FORM_GNU_strp_alt:
			rd_skip(r, u->offsize);   /* in a supplementary file: not read */
			return;
		case FORM_loclistx: (void)rd_uleb(r); return;
		case FORM_flag_present: return;
		case FORM_block1: rd_skip(r, rd_u(r, 1)); return;
		case FORM_block2: rd_skip(r, rd_u(r, 2)); return;
		case FORM_block4: rd_skip(r, rd_u(r, 4)); return;
		case FORM_block: case FORM_exprloc: rd_skip(r, rd_uleb(r)); return;
		case FORM_indirect: form = rd_uleb(r); implicit = 0; continue;
		default: break;
		}
		break;
	}
	r->bad = true;
	r->p = r->end;
}

/* An address attribute's value: an address, or an index in .debug_addr. */
static bool val_addr(const struct unit *u, const struct val *v, uint64_t *out)
{
	if (v->kind == V_ADDR) {
		*out = v->u;
		return true;
	}
	if (v->kind != V_ADDRX || !u->have_addr_base || !u->d->addr.p)
		return false;
	uint64_t at = u->addr_base, size = u->d->addr.size;
	if (at > size || v->u >= (size - at) / u->addr_size)
		return false;
	struct rd r = { u->d->addr.p + at + v->u * u->addr_size, u->d->addr.p + size, false };
	*out = rd_u(&r, u->addr_size);
	return !r.bad;
}

/* A string attribute's value: in place, in .debug_str, or an index in
 * .debug_str_offsets (DW_AT_str_offsets_base). */
static const char *val_str(const struct unit *u, const struct val *v)
{
	if (v->kind == V_STR)
		return v->s;
	if (v->kind != V_STRX || !u->have_str_offsets_base || !u->d->str_offsets.p)
		return NULL;
	uint64_t at = u->str_offsets_base, size = u->d->str_offsets.size;
	if (at > size || v->u >= (size - at) / u->offsize)
		return NULL;
	struct rd r = { u->d->str_offsets.p + at + v->u * u->offsize, u->d->str_offsets.p + size, false };
	uint64_t off = rd_u(&r, u->offsize);
	return r.bad ? NULL : sec_str(u->d->str, off);
}

/* The attributes of an entry this file uses. */
struct die {
	struct val low, high, ranges, call_file, call_line;
	struct val stmt_list, addr_base, rnglists_base, str_offsets_base;
	struct val name, linkage_name, origin, specification, sibling;
};

static bool die_read(struct rd *r, const struct unit *u, const struct abbrev *a, struct die *e)
{
	struct rd s = { a->spec, u->d->abbrev.p + u->d->abbrev.size, false };

	memset(e, 0, sizeof(*e));
	for (uint32_t k = 0;; k++) {
		uint64_t at, form;
		int64_t implicit = 0;
		struct val v;

		if (a->dec) {           /* decoded: the same pairs, and the end's step */
			if (!work(1))
				return false;
			if (k == a->nattr)
				return !r->bad;
			at = a->dec[k].at;
			form = a->dec[k].form;
			implicit = a->dec[k].implicit;
		} else {
			at = rd_uleb(&s);
			form = rd_uleb(&s);
			if (s.bad || !work(1))
				return false;
			if (at == 0 && form == 0)
				return !r->bad;
			if (form == FORM_implicit_const)
				implicit = rd_sleb(&s);
		}
		form_read(r, u, form, implicit, &v);
		if (r->bad)
			return false;
		switch (at) {
		case AT_low_pc: e->low = v; break;
		case AT_high_pc: e->high = v; break;
		case AT_ranges: e->ranges = v; break;
		case AT_call_file: e->call_file = v; break;
		case AT_call_line: e->call_line = v; break;
		case AT_stmt_list: e->stmt_list = v; break;
		case AT_addr_base: case AT_GNU_addr_base: e->addr_base = v; break;
		case AT_rnglists_base: e->rnglists_base = v; break;
		case AT_str_offsets_base: e->str_offsets_base = v; break;
		case AT_name: e->name = v; break;
		case AT_linkage_name: case AT_MIPS_linkage_name: e->linkage_name = v; break;
		case AT_abstract_origin: e->origin = v; break;
		case AT_specification: e->specification = v; break;
		case AT_sibling: e->sibling = v; break;
		default: break;
		}
	}
}

/* ---- address ranges -------------------------------------------------------- */

/* Called for each range [lo, hi) of an entry; returns true to stop. */
typedef bool (*range_fn)(void *ctx, uint64_t lo, uint64_t hi);

/* A DW_AT_ranges list of version 4: .debug_ranges (DWARF 4 section 2.17.3). */
static bool ranges_v4(const struct unit *u, uint64_t off, range_fn fn, void *ctx)
{
	const struct sec *s = &u->d->ranges;
	uint64_t base = u->base, all = u->addr_size == 8 ? ~(uint64_t)0 : 0xffffffffu;

	if (!s->p || off >= s->size)
		return false;
	struct rd r = { s->p + off, s->p + s->size, false };
	for (unsigned i = 0; i < LIST_MAX && work(1); i++) {
		uint64_t a = rd_u(&r, u->addr_size), b = rd_u(&r, u->addr_size);

		if (r.bad || (a == 0 && b == 0))
			return false;
		if (a == all)
			base = b;
		else if (a < b && fn(ctx, base + a, base + b))
			return true;
	}
	return false;
}

/* An index in .debug_addr, for the DW_RLE_*x entries. */
static bool addr_index(const struct unit *u, uint64_t i, uint64_t *out)
{
	struct val v = { V_ADDRX, i, NULL };

	return val_addr(u, &v, out);
}

/* A range list of version 5: .debug_rnglists (DWARF 5 section 2.17.3). */
static bool ranges_v5(const struct unit *u, const struct val *v, range_fn fn, void *ctx)
{
	const struct sec *s = &u->d->rnglists;
	uint64_t off, base = u->base;

	if (!s->p)
		return false;
	if (v->kind == V_RNGLISTX) {
		/* the offsets table after the unit's header: rnglists_base */
		uint64_t b = u->rnglists_base;

		if (!u->have_rnglists_base || b > s->size || v->u >= (s->size - b) / u->offsize)
			return false;
		struct rd t = { s->p + b + v->u * u->offsize, s->p + s->size, false };
		off = rd_u(&t, u->offsize);
		if (t.bad || off > s->size - b)
			return false;
		off += b;
	} else {
		off = v->u;
	}
	if (off >= s->size)
		return false;
	struct rd r = { s->p + off, s->p + s->size, false };
	for (unsigned i = 0; i < LIST_MAX && work(1); i++) {
		unsigned kind = (unsigned)rd_u(&r, 1);
		uint64_t a = 0, b = 0;
		bool range = true;

		switch (kind) {
		case RLE_end_of_list:
			return false;
		case RLE_base_addressx:
			if (!addr_index(u, rd_uleb(&r), &base))
				return false;
			range = false;
			break;
		case RLE_startx_endx:
			if (!addr_index(u, rd_uleb(&r), &a) || !addr_index(u, rd_uleb(&r), &b))
				return false;
			break;
		case RLE_startx_length:
			if (!addr_index(u, rd_uleb(&r), &a))
				return false;
			b = a + rd_uleb(&r);
			break;
		case RLE_offset_pair:
			a = base + rd_uleb(&r);
			b = base + rd_uleb(&r);
			break;
		case RLE_base_address:
			base = rd_u(&r, u->addr_size);
			range = false;
			break;
		case RLE_start_end:
			a = rd_u(&r, u->addr_size);
			b = rd_u(&r, u->addr_size);
			break;
		case RLE_start_length:
			a = rd_u(&r, u->addr_size);
			b = a + rd_uleb(&r);
			break;
		default:
			return false;
		}
		if (r.bad)
			return false;
		if (range && a < b && fn(ctx, a, b))
			return true;
	}
	return false;
}

/* Each range of an entry: [low_pc, high_pc), or its DW_AT_ranges list. */
static bool die_ranges(const struct unit *u, const struct die *e, range_fn fn, void *ctx)
{
	uint64_t lo, hi;

	if (e->ranges.kind == V_SECOFF || e->ranges.kind == V_RNGLISTX ||
	    (e->ranges.kind == V_CONST && u->version < 5)) {
		if (u->version >= 5)
			return ranges_v5(u, &e->ranges, fn, ctx);
		return ranges_v4(u, e->ranges.u, fn, ctx);
	}
	if (!val_addr(u, &e->low, &lo))
		return false;
	if (e->high.kind == V_CONST)
		hi = lo + e->high.u;
	else if (!val_addr(u, &e->high, &hi))
		return false;
	return lo < hi && fn(ctx, lo, hi);
}

struct hold {
	uint64_t addr;
};

static bool holds(void *ctx, uint64_t lo, uint64_t hi)
{
	uint64_t a = ((struct hold *)ctx)->addr;

	return lo <= a && a < hi;
}

/* The root entry: the unit's bases, line table and base address. */
static bool unit_root(struct unit *u, struct die *e)
{
	struct rd r = { u->dies, u->end, false };
	struct rd s;
	struct abbrev a;
	uint64_t code = rd_uleb(&r);

	if (r.bad || code == 0 || u->abbrev_off >= u->d->abbrev.size)
		return false;
	s = (struct rd){ u->d->abbrev.p + u->abbrev_off, u->d->abbrev.p + u->d->abbrev.size, false };
	for (;;) {
		if (!abbrev_next(&s, &a))
			return false;
		if (a.code == code)
			break;
	}
	if (!die_read(&r, u, &a, e))
		return false;
	if (e->addr_base.kind == V_SECOFF || e->addr_base.kind == V_CONST) {
		u->addr_base = e->addr_base.u;
		u->have_addr_base = true;
	}
	if (e->rnglists_base.kind == V_SECOFF || e->rnglists_base.kind == V_CONST) {
		u->rnglists_base = e->rnglists_base.u;
		u->have_rnglists_base = true;
	}
	if (e->stmt_list.kind == V_SECOFF || e->stmt_list.kind == V_CONST) {
		u->stmt_list = e->stmt_list.u;
		u->have_stmt_list = true;
	}
	if (e->str_offsets_base.kind == V_SECOFF || e->str_offsets_base.kind == V_CONST) {
		u->str_offsets_base = e->str_offsets_base.u;
		u->have_str_offsets_base = true;
	}
	if (!val_addr(u, &e->low, &u->base))
		u->base = 0;
	return true;
}

/* ---- the unit of an address ------------------------------------------------ */

/* The .debug_info offset of the unit .debug_aranges gives addr (DWARF 5
 * section 6.1.2); false when the section is absent or has no range. */
static bool aranges_unit(const struct dwarf *d, uint64_t addr, uint64_t *off)
{
	struct rd all = { d->aranges.p, d->aranges.p + d->aranges.size, false };

	while (d->aranges.p && all.p < all.end && !all.bad && work(1)) {
		const uint8_t *start = all.p;
		unsigned offsize = 4;
		uint64_t len = rd_u(&all, 4);

		if (len == 0xffffffffu) {
			offsize = 8;
			len = rd_u(&all, 8);
		}
		if (all.bad || len > (uint64_t)(all.end - all.p))
			return false;
		struct rd r = { all.p, all.p + len, false };
		all.p += len;
		unsigned version = (unsigned)rd_u(&r, 2);
		uint64_t info = rd_u(&r, offsize);
		unsigned asize = (unsigned)rd_u(&r, 1), ssize = (unsigned)rd_u(&r, 1);

		if (r.bad || version != 2 || (asize != 4 && asize != 8) || ssize != 0)
			continue;
		/* the tuples start at a multiple of twice the address size */
		size_t used = (size_t)(r.p - start), tuple = 2 * asize;
		rd_skip(&r, (tuple - used % tuple) % tuple);
		while (!r.bad && work(1)) {
			uint64_t a = rd_u(&r, asize), n = rd_u(&r, asize);

			if (r.bad || (a == 0 && n == 0))
				break;
			if (a <= addr && addr - a < n) {
				*off = info;
				return true;
			}
		}
	}
	return false;
}

static bool unit_find(const struct dwarf *d, uint64_t addr, struct unit *u);

/* The unit whose root entry's ranges hold addr, its root read.  The last
 * answer is kept, with the steps it took (a description asks for an
 * address's line table, then for its inlined calls). */
static bool unit_of(const struct dwarf *d, uint64_t addr, struct unit *u)
{
	static const struct dwarf *last_d;
	static struct dwarf last_sec;
	static uint64_t last_addr;
	static struct unit last_u;
	static uint32_t last_work;
	static bool last_ok;

	if (last_d == d && last_addr == addr && memcmp(&last_sec, d, sizeof(*d)) == 0) {
		if (!work(last_work))
			return false;
		*u = last_u;
		return last_ok;
	}
	uint32_t before = work_left;
	bool ok = unit_find(d, addr, u);

	last_d = NULL;
	if (work_left == 0)
		return ok;      /* out of steps: not kept */
	last_d = d;
	last_sec = *d;
	last_addr = addr;
	last_u = *u;
	last_work = before - work_left;
	last_ok = ok;
	return ok;
}

static bool unit_find(const struct dwarf *d, uint64_t addr, struct unit *u)
{
	struct hold h = { addr };
	struct die root;
	uint64_t off;

	if (aranges_unit(d, addr, &off) && unit_header(d, off, u) == 1 && unit_root(u, &root))
		return true;
	/* no .debug_aranges (clang's default), or a unit it leaves out */
	for (off = 0;;) {
		int k = unit_header(d, off, u);

		if (k < 0 || !work(1))
			return false;
		if (k == 1 && unit_root(u, &root) && die_ranges(u, &root, holds, &h))
			return true;
		off = u->next;
	}
}

/* ---- a unit's inlined ranges ----------------------------------------------- */

struct inl {
	uint64_t lo, hi;
	uint64_t file;
	uint64_t origin;        /* the inlined function's entry (0: none) */
	uint32_t line, depth;
};

/* A unit's top-level entries (the root's children) a probe may have to
 * read, made by its first probe that reads them all: each one's offset in
 * .debug_info and the addresses [lo, hi) that hold all its ranges (0 and
 * ~0: read it at every probe); an entry left out of it is one a probe
 * passes over or skips whatever the address (no children and no inlined
 * call, or no code of its own: a type, a function's declaration).  A
 * later probe goes from one entry that may hold its address to the next,
 * reading none of the others; `end`: where the root's children end. */
#ifndef TOP_MAX
#define TOP_MAX 16384u          /* top-level entries indexed of one unit */
#endif

struct top {
	uint64_t off, lo, hi;
};

struct top_index {
	struct top *v;
	size_t n, bytes;
	const uint8_t *end;
	bool tried, given_up, ok;
};

static void top_free(struct top_index *x)
{
	if (x->v)
		munmap(x->v, x->bytes);
	memset(x, 0, sizeof(*x));
}

/* Add one entry; false (the index given up) past TOP_MAX or out of memory. */
static bool top_add(struct top_index *x, uint64_t off, uint64_t lo, uint64_t hi)
{
	if ((x->n + 1) * sizeof(*x->v) > x->bytes) {
		size_t bytes = x->bytes ? 2 * x->bytes : 4096;
		void *p;

		if (x->n >= TOP_MAX)
			return false;
		p = x->v ? mremap(x->v, x->bytes, bytes, MREMAP_MAYMOVE) : map_alloc(bytes);
		if (p == MAP_FAILED || !p)
			return false;
		x->v = p;
		x->bytes = bytes;
	}
	x->v[x->n++] = (struct top){ off, lo, hi };
	return true;
}

struct envelope {
	uint64_t lo, hi;
};

static bool envelope_add(void *ctx, uint64_t lo, uint64_t hi)
{
	struct envelope *e = ctx;

	if (lo < e->lo)
		e->lo = lo;
	if (hi > e->hi)
		e->hi = hi;
	return false;
}

/* Where the walk puts the ranges: all of them in a table, or only those
 * that hold addr (keep_addr). */
struct sink {
	bool keep_addr;
	bool probe;             /* keep_addr, and skip the subtrees that cannot hold addr */
	size_t skipped;         /* the bytes of entries a probe skipped */
	uint64_t addr;
	struct inl *v;
	size_t n, cap_bytes;
	bool full;
	struct inl hold[SHIM_INLINE_MAX * 2];
	unsigned nhold;
	/* the entry being added */
	struct inl cur;
	/* a probe's index of the top-level entries: made (build: none yet),
	 * or followed (use), `next` its first entry not gone past */
	struct top_index *build;
	const struct top_index *use;
	size_t next;
};

static bool sink_add(void *ctx, uint64_t lo, uint64_t hi)
{
	struct sink *s = ctx;
	struct inl e = s->cur;

	e.lo = lo;
	e.hi = hi;
	if (s->keep_addr) {
		if (lo <= s->addr && s->addr < hi && s->nhold < sizeof(s->hold) / sizeof(s->hold[0]))
			s->hold[s->nhold++] = e;
		return false;
	}
	if ((s->n + 1) * sizeof(e) > s->cap_bytes) {
		size_t bytes = s->cap_bytes ? 2 * s->cap_bytes : 16384;
		void *p;

		if (s->n >= RANGES_MAX) {
			s->full = true;
			return true;
		}
		p = s->v ? mremap(s->v, s->cap_bytes, bytes, MREMAP_MAYMOVE) : map_alloc(bytes);
		if (p == MAP_FAILED || !p) {
			s->full = true;
			return true;
		}
		s->v = p;
		s->cap_bytes = bytes;
	}
	s->v[s->n++] = e;
	return false;
}

/* A probe's skip of the children of entry e (read from r): to its
 * DW_AT_sibling, a later entry of the unit, when none of them can be in
 * an inlined call that holds s->addr: e's code does not hold it (an entry
 * with code: a function, a lexical block), or e has no code of its own
 * and is a function (a declaration, an abstract instance: the inlined
 * calls with code are in the concrete instances) or a type.  True when r
 * was moved past them. */
/* Whether a probe may skip the children of entry e (read from r): 0 no,
 * 1 whatever the address, 2 when its code does not hold the address. */
static int skippable(const struct unit *u, const struct rd *r, const struct abbrev *a,
		     const struct die *e)
{
	uint64_t to;

	if (e->sibling.kind != V_REF)
		return 0;
	to = e->sibling.u;
	if (to <= (uint64_t)(r->p - u->d->info.p) || to >= (uint64_t)(u->end - u->d->info.p))
		return 0;       /* not after the entry, or not in the unit */
	bool type = a->tag == TAG_structure_type || a->tag == TAG_class_type ||
		    a->tag == TAG_union_type || a->tag == TAG_enumeration_type ||
		    a->tag == TAG_array_type || a->tag == TAG_subroutine_type;
	bool code = e->low.kind != V_NONE || e->ranges.kind != V_NONE;
	return code ? 2 : type || a->tag == TAG_subprogram ? 1 : 0;
}

static bool skip_to(const struct unit *u, struct rd *r, const struct abbrev *a, const struct die *e,
		    struct sink *s)
{
	struct hold h = { s->addr };
	int k = skippable(u, r, a, e);
	uint64_t to = e->sibling.u;

	if (k == 0 || (k == 2 && die_ranges(u, e, holds, &h)))
		return false;
	s->skipped += (size_t)(u->d->info.p + to - r->p);
	r->p = u->d->info.p + to;
	return true;
}

/* Walk the unit's entries (an explicit depth, no recursion); false when
 * they do not read whole or the table is full. */
static bool unit_walk(const struct unit *u, struct sink *s)
{
	const struct abbrevs *t = abbrevs_of(u);
	struct rd r = { u->dies, u->end, false };
	unsigned depth = 0;
	bool ok = false;

	if (!t)
		return false;
	while (r.p < r.end) {
		const uint8_t *start;
		uint64_t code;
		const struct abbrev *a;
		struct die e;

		if (s->use && depth == 1) {
			/* to the next top-level entry that may hold the address */
			const uint8_t *to = s->use->end;

			for (; s->next < s->use->n; s->next++) {
				const struct top *x = &s->use->v[s->next];

				if (x->off < (uint64_t)(r.p - u->d->info.p))
					continue;
				if (x->lo <= s->addr && s->addr < x->hi) {
					to = u->d->info.p + x->off;
					break;
				}
			}
			if (to > r.p && to <= r.end) {
				s->skipped += (size_t)(to - r.p);
				r.p = to;
				if (r.p == r.end)
					break;
			}
		}
		start = r.p;
		code = rd_uleb(&r);
		if (r.bad || !work(1))
			break;
		if (code == 0) {        /* the end of a list of children */
			if (depth == 0)
				break;
			if (--depth == 0) {
				if (s->build)
					s->build->end = start;
				ok = true;
				break;
			}
			continue;
		}
		a = abbrev_get(t, code);
		if (!a)
			break;
		if (!a->children && a->tag != TAG_inlined_subroutine && a->fixed >= 0) {
			/* nothing of it needed: passed over */
			rd_skip(&r, (uint64_t)a->fixed);
			if (r.bad)
				break;
			if (depth == 0) {
				ok = true;      /* a root without children */
				break;
			}
			continue;
		}
		if (!die_read(&r, u, a, &e))
			break;
		if (s->build && depth == 1 && !s->build->given_up) {
			int k = a->tag == TAG_inlined_subroutine ? 0 : !a->children ? 1 : skippable(u, &r, a, &e);
			struct envelope env = { ~(uint64_t)0, 0 };
			uint64_t off = (uint64_t)(start - u->d->info.p);

			if (k == 0)
				env = (struct envelope){ 0, ~(uint64_t)0 };
			else if (k == 2)
				(void)die_ranges(u, &e, envelope_add, &env);
			if (env.lo < env.hi && !top_add(s->build, off, env.lo, env.hi))
				s->build->given_up = true;
		}
		if (a->tag == TAG_inlined_subroutine && e.call_line.kind == V_CONST &&
		    e.call_file.kind == V_CONST && e.call_line.u && e.call_line.u <= UINT32_MAX) {
			s->cur.file = e.call_file.u;
			s->cur.line = (uint32_t)e.call_line.u;
			s->cur.origin = e.origin.kind == V_REF ? e.origin.u : 0;
			s->cur.depth = depth;
			(void)die_ranges(u, &e, sink_add, s);
			if (s->full)
				break;
		}
		if (a->children && s->probe && depth > 0 && skip_to(u, &r, a, &e, s)) {
			continue;       /* its children cannot hold the address */
		} else if (a->children) {
			if (++depth > DEPTH_MAX)
				break;
		} else if (depth == 0) {
			ok = true;      /* a root without children */
			break;
		}
	}
	if (r.p == r.end && !r.bad && depth <= 1) {
		ok = true;      /* the last lists' ends left out (padding) */
		if (s->build && depth == 1)
			s->build->end = r.end;
	}
	if (s->build) {
		s->build->ok = ok && !s->full && !s->build->given_up && s->build->end;
		if (!s->build->ok) {
			top_free(s->build);
			s->build->tried = true;
		}
	}
	return ok && !s->full;
}

/* The units read, each with its table (NULL with `walk`: too many ranges,
 * walked at each look-up). */
static struct unit_kept {
	const uint8_t *info;    /* which .debug_info */
	uint64_t off;
	bool bad, walk;
	struct inl *v;
	size_t n, bytes;
	unsigned long used;
} kept[UNITS_KEPT];
static unsigned long kept_clock;

/* The unit's table, if it has one now. */
static struct unit_kept *kept_find(const struct unit *u)
{
	for (unsigned i = 0; i < UNITS_KEPT; i++)
		if (kept[i].info == u->d->info.p && kept[i].off == u->off) {
			kept[i].used = ++kept_clock;
			return &kept[i];
		}
	return NULL;
}

/* The look-ups probed in the units without a table (the last PROBED of
 * them): a unit's first PROBES_MAX look-ups are probes, the next one
 * makes its table, and so does the one after a probe that could skip
 * little of the unit (no DW_AT_sibling: clang's output). */
#define PROBED 32
static struct unit_probed {
	const uint8_t *info;
	uint64_t off;
	unsigned n;
	struct top_index top;
} probed[PROBED];
static unsigned probed_next;
static const unsigned probes_max = PROBES_MAX; /* (a test's may be 0) */

static struct unit_probed *probed_of(const struct unit *u)
{
	struct unit_probed *p;

	for (unsigned i = 0; i < PROBED; i++)
		if (probed[i].info == u->d->info.p && probed[i].off == u->off)
			return &probed[i];
	p = &probed[probed_next++ % PROBED];
	top_free(&p->top);
	p->info = u->d->info.p;
	p->off = u->off;
	p->n = 0;
	return p;
}

static struct unit_kept *unit_kept(const struct unit *u)
{
	struct unit_kept *k = &kept[0];
	struct sink s;

	for (unsigned i = 0; i < UNITS_KEPT; i++) {
		if (kept[i].info == u->d->info.p && kept[i].off == u->off) {
			kept[i].used = ++kept_clock;
			return &kept[i];
		}
		if (kept[i].used < k->used)
			k = &kept[i];
	}
	if (k->v)
		munmap(k->v, k->bytes);
	memset(k, 0, sizeof(*k));
	memset(&s, 0, sizeof(s));
	k->info = u->d->info.p;
	k->off = u->off;
	k->used = ++kept_clock;
	if (unit_walk(u, &s)) {
		size_t total = s.cap_bytes;

		k->v = s.v;
		k->n = s.n;
		k->bytes = s.cap_bytes;
		/* within KEPT_BYTES: the others' tables, least recently used first */
		for (unsigned i = 0; i < UNITS_KEPT; i++)
			total += kept[i].v && &kept[i] != k ? kept[i].bytes : 0;
		while (total > KEPT_BYTES) {
			struct unit_kept *old = NULL;

			for (unsigned i = 0; i < UNITS_KEPT; i++)
				if (kept[i].v && &kept[i] != k && (!old || kept[i].used < old->used))
					old = &kept[i];
			if (!old)
				break;
			total -= old->bytes;
			munmap(old->v, old->bytes);
			memset(old, 0, sizeof(*old));
		}
		return k;
	}
	if (s.v)
		munmap(s.v, s.cap_bytes);
	k->walk = s.full;
	k->bad = !s.full;
	return k;
}

/* ---- the inlined functions' names ----------------------------------------- */

/* The unit holding .debug_info offset off, its root read. */
static bool unit_at(const struct dwarf *d, uint64_t off, struct unit *u)
{
	struct die root;

	if (u->d == d && u->dies && off >= (uint64_t)(u->dies - d->info.p) && off < u->next)
		return true;
	for (uint64_t at = 0;;) {
		int k = unit_header(d, at, u);

		if (k < 0 || !work(1))
			return false;
		if (off < u->next)
			return k == 1 && off >= (uint64_t)(u->dies - d->info.p) && unit_root(u, &root);
		at = u->next;
	}
}

/* The entry at .debug_info offset off, in unit u (found, and replaced, when
 * off is in another). */
static bool die_at(const struct dwarf *d, uint64_t off, struct unit *u, struct die *e)
{
	struct abbrev a;
	struct rd r, s;
	uint64_t code;

	if (!unit_at(d, off, u))
		return false;
	r = (struct rd){ d->info.p + off, u->end, false };
	code = rd_uleb(&r);
	if (r.bad || code == 0)
		return false;
	s = (struct rd){ d->abbrev.p + u->abbrev_off, d->abbrev.p + d->abbrev.size, false };
	do {
		if (!abbrev_next(&s, &a))
			return false;
	} while (a.code != code);
	return die_read(&r, u, &a, e);
}

/* The name of the function whose entry is at off: its linkage name (to
 * demangle) where one of the entries it refers to has one, else its
 * name; through DW_AT_abstract_origin and DW_AT_specification, at most 4
 * entries. */
static const char *func_name(const struct dwarf *d, uint64_t off, const struct unit *from,
			     bool *linkage)
{
	struct unit u = *from;
	const char *name = NULL;
	struct die e;

	*linkage = false;
	for (int hop = 0; hop < 4 && off; hop++) {
		if (!die_at(d, off, &u, &e))
			break;
		const char *l = val_str(&u, &e.linkage_name);
		if (l && *l) {
			*linkage = true;
			return l;
		}
		const char *n = val_str(&u, &e.name);
		if (!name && n && *n)
			name = n;
		off = e.origin.kind == V_REF ? e.origin.u
		    : e.specification.kind == V_REF ? e.specification.u : 0;
	}
	return name;
}

/* ---- the look-up ----------------------------------------------------------- */

bool shim_dwarf_inline(const struct dwarf *d, uint64_t addr, struct shim_inline *in)
{
	struct inl found[SHIM_INLINE_MAX * 2];
	unsigned nfound = 0;
	struct unit u;
	struct unit_kept *k;
	struct unit_probed *p;

	in->n = 0;
	work_left = WORK_MAX;
	if (!d->info.p || !d->abbrev.p || !unit_of(d, addr, &u) || !u.have_stmt_list)
		return false;
	k = kept_find(&u);
	p = k ? NULL : probed_of(&u);
	if (p && p->n < probes_max) {
		/* A probe: the entries on the way to addr only. */
		struct sink s;

		memset(&s, 0, sizeof(s));
		s.keep_addr = s.probe = true;
		s.addr = addr;
		if (!p->top.tried) {
			p->top.tried = true;
			s.build = &p->top;
		} else if (p->top.ok) {
			s.use = &p->top;
		}
		p->n++;
		if (!unit_walk(&u, &s))
			return false;
		if (s.skipped < (size_t)(u.end - u.dies) / 2)
			p->n = probes_max;
		nfound = s.nhold;
		memcpy(found, s.hold, nfound * sizeof(found[0]));
	} else if (!(k = k ? k : unit_kept(&u)) || k->bad) {
		return false;
	} else if (k->walk) {
		struct sink s;

		memset(&s, 0, sizeof(s));
		s.keep_addr = true;
		s.addr = addr;
		if (!unit_walk(&u, &s))
			return false;
		nfound = s.nhold;
		memcpy(found, s.hold, nfound * sizeof(found[0]));
	} else {
		for (size_t i = 0; i < k->n; i++)
			if (k->v[i].lo <= addr && addr < k->v[i].hi && nfound < SHIM_INLINE_MAX * 2)
				found[nfound++] = k->v[i];
	}
	/* Outermost first: by depth (nested entries are deeper), one per depth. */
	for (unsigned i = 1; i < nfound; i++)
		for (unsigned j = i; j > 0 && found[j].depth < found[j - 1].depth; j--) {
			struct inl x = found[j];

			found[j] = found[j - 1];
			found[j - 1] = x;
		}
	in->stmt_list = u.stmt_list;
	in->more = false;
	for (unsigned i = 0; i < nfound; i++) {
		if (in->n && found[i].depth == found[i - 1].depth)
			continue;
		if (in->n == SHIM_INLINE_MAX) {
			in->more = true;
			in->next_file = found[i].file;
			in->next_line = found[i].line;
			break;
		}
		in->call[in->n].file = found[i].file;
		in->call[in->n].line = found[i].line;
		in->call[in->n].name = func_name(d, found[i].origin, &u, &in->call[in->n].linkage);
		in->n++;
	}
	return in->n > 0;
}

bool shim_dwarf_line_unit(const struct dwarf *d, uint64_t addr, uint64_t *stmt_list)
{
	struct unit u;

	work_left = WORK_MAX;
	if (!d->info.p || !d->abbrev.p || !unit_of(d, addr, &u) || !u.have_stmt_list)
		return false;
	*stmt_list = u.stmt_list;
	return true;
}
