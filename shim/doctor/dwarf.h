/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer's DWARF: a bounds-checked reader over a section's bytes
 * (every read checks the bytes are there; a short or hostile section sets
 * `bad` and reads as zeros from then on), the debug sections of a module,
 * and the inlined calls around an address (dwarf_inline.c, from
 * .debug_info).  symbolize.c reads the line tables.
 *
 * Sections are those of the process's own modules: the host's byte order.
 */
#ifndef QLOCK_SHIM_DWARF_H
#define QLOCK_SHIM_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sec {
	const uint8_t *p;
	size_t size;
};

/* The debug sections of one ELF file (absent ones: p NULL). */
struct dwarf {
	struct sec line, str, line_str;
	struct sec info, abbrev, aranges, ranges, rnglists, addr, str_offsets;
};

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static inline bool rd_need(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return false;
	}
	return true;
}

/* An n-byte unsigned number, n = 1, 2, 3, 4 or 8. */
static inline uint64_t rd_u(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (!rd_need(r, n))
		return 0;
	switch (n) {
	case 1: v = r->p[0]; break;
	case 2: { uint16_t x; memcpy(&x, r->p, 2); v = x; break; }
	case 3:
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v = (uint64_t)r->p[0] << 16 | (uint64_t)r->p[1] << 8 | r->p[2];
#else
		v = (uint64_t)r->p[2] << 16 | (uint64_t)r->p[1] << 8 | r->p[0];
#endif
		break;
	case 4: { uint32_t x; memcpy(&x, r->p, 4); v = x; break; }
	case 8: { uint64_t x; memcpy(&x, r->p, 8); v = x; break; }
	default: r->bad = true; r->p = r->end; return 0;
	}
	r->p += n;
	return v;
}

static inline void rd_skip(struct rd *r, uint64_t n)
{
	if (rd_need(r, n > SIZE_MAX ? SIZE_MAX : (size_t)n))
		r->p += n;
}

static inline uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (rd_need(r, 1)) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static inline int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (rd_need(r, 1)) {
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A NUL-terminated string in place (NULL when it runs off the end). */
static inline const char *rd_str(struct rd *r)
{
	const char *s = (const char *)r->p;
	size_t n;

	if (r->bad)
		return NULL;
	n = strnlen(s, (size_t)(r->end - r->p));
	if (n == (size_t)(r->end - r->p)) {
		r->bad = true;
		r->p = r->end;
		return NULL;
	}
	r->p += n + 1;
	return s;
}

/* The string at offset off of a string section, NULL if not whole. */
static inline const char *sec_str(struct sec s, uint64_t off)
{
	if (!s.p || off >= s.size || strnlen((const char *)s.p + off, s.size - off) == s.size - off)
		return NULL;
	return (const char *)s.p + off;
}

/*
 * The inlined calls around an address: the chain of DW_TAG_inlined_
 * subroutine entries of .debug_info whose ranges hold it, outermost
 * first.  The outermost one's call site is a line of the function the
 * address's symbol names; each further one's is a line of the function
 * inlined by the one before.  Names point into the mapped file.
 */
#define SHIM_INLINE_MAX 12

struct shim_inline {
	uint64_t stmt_list;     /* the unit's line table: offset in .debug_line */
	unsigned n;             /* inlined calls around the address (0: none) */
	bool more;              /* deeper ones left out: the next one's call is */
	uint64_t next_file;     /* at next_file:next_line */
	unsigned next_line;
	struct {
		uint64_t file;  /* DW_AT_call_file: index in the line table's file list */
		unsigned line;  /* DW_AT_call_line */
		const char *name; /* the function inlined there (NULL: unknown) */
		bool linkage;   /* name is a linkage (mangled) name */
	} call[SHIM_INLINE_MAX];
};

/* Fill `in` for addr (the module's own virtual address) from d's
 * .debug_info (DWARF 4 and 5 units).  False (in->n = 0) when addr is in
 * no inlined call, or the sections are absent, of another version, or
 * unreadable.  Not thread-safe: the caller serialises (symbolize.c's
 * lock); each unit's inlined calls are read once and kept, within a
 * bounded memory. */
bool shim_dwarf_inline(const struct dwarf *d, uint64_t addr, struct shim_inline *in);

/* The line table of the compilation unit whose code holds addr (its
 * DW_AT_stmt_list: an offset in .debug_line), found as for the inlined
 * calls (.debug_aranges, else the units' root entries), so that a look-up
 * reads one unit's line program, not every unit's.  False when d has no
 * .debug_info, or no DWARF 4 or 5 unit holds addr.  Same rules as
 * shim_dwarf_inline(). */
bool shim_dwarf_line_unit(const struct dwarf *d, uint64_t addr, uint64_t *stmt_list);

#endif /* QLOCK_SHIM_DWARF_H */
