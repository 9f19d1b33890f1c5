/* SPDX-License-Identifier: MIT */
/*
 * shim_symbolize() (symbolize.h): return address -> module (dl_iterate_phdr)
 * -> the module's ELF file, mapped read-only once and kept -> the function
 * symbol that covers the address (.symtab, else .dynsym) and the line
 * table row (.debug_line, DWARF 2 to 5) that does, or, when the address is
 * in code inlined into that function, the line that calls the inlined code
 * (.debug_info, DWARF 4 and 5: dwarf_inline.c).  When the module has no
 * .debug_line (stripped, or Debian's split debug packages), the file
 * /usr/lib/debug/.build-id/xx/yyyy.debug named by its build-id note is
 * read instead, when it exists.
 *
 * Only the process's own modules are read, so the ELF class and byte order
 * are the host's (ElfW, native loads).  Compressed debug sections
 * (SHF_COMPRESSED) are skipped: their lines are not shown.
 */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/atomic.h"
#include "dwarf.h"

/* ---- a mapped ELF file ---------------------------------------------------- */

struct elf_file {
	const uint8_t *map;
	size_t size;
	const ElfW(Shdr) *sh;
	unsigned shnum;
	const char *shstr;
	size_t shstr_size;
};

static bool elf_open(struct elf_file *f, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(f, 0, sizeof(*f));
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
		close(fd);
		return false;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return false;
	f->map = m;
	f->size = (size_t)st.st_size;

	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)f->map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff == 0 || eh->e_shoff > f->size ||
	    (f->size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum ||
	    eh->e_shstrndx >= eh->e_shnum)
		goto bad;
	f->sh = (const ElfW(Shdr) *)(f->map + eh->e_shoff);
	f->shnum = eh->e_shnum;
	const ElfW(Shdr) *ss = &f->sh[eh->e_shstrndx];
	if (ss->sh_offset > f->size || ss->sh_size > f->size - ss->sh_offset)
		goto bad;
	f->shstr = (const char *)f->map + ss->sh_offset;
	f->shstr_size = ss->sh_size;
	return true;
bad:
	munmap((void *)f->map, f->size);
	memset(f, 0, sizeof(*f));
	return false;
}

static struct sec elf_sec_at(const struct elf_file *f, unsigned i)
{
	struct sec s = { NULL, 0 };
	const ElfW(Shdr) *h;

	if (!f->map || i >= f->shnum)
		return s;
	h = &f->sh[i];
	if (h->sh_type == SHT_NOBITS || (h->sh_flags & SHF_COMPRESSED) ||
	    h->sh_offset > f->size || h->sh_size > f->size - h->sh_offset)
		return s;
	s.p = f->map + h->sh_offset;
	s.size = h->sh_size;
	return s;
}

static struct sec elf_sec(const struct elf_file *f, const char *name, unsigned *index)
{
	struct sec none = { NULL, 0 };

	for (unsigned i = 0; f->map && i < f->shnum; i++) {
		ElfW(Word) n = f->sh[i].sh_name;

		if (n < f->shstr_size && strnlen(f->shstr + n, f->shstr_size - n) < f->shstr_size - n &&
		    strcmp(f->shstr + n, name) == 0) {
			if (index)
				*index = i;
			return elf_sec_at(f, i);
		}
	}
	return none;
}

/* ---- symbols ------------------------------------------------------------ */

struct sym_hit {
	const char *name;
	uintptr_t value, size;
	bool covers;
	int rank;
};

/* Among aliases (printf, _IO_printf, __printf): global before weak before
 * local, then a name without a leading underscore. */
static int sym_rank(const ElfW(Sym) *s, const char *name)
{
	int b = ELF64_ST_BIND(s->st_info);

	return (b == STB_GLOBAL ? 4 : b == STB_WEAK ? 2 : 0) + (name[0] != '_');
}

/* Symbol i of table s (its strings str) against the best so far, for
 * addr: a function's (a data object's with `data`) that covers addr
 * beats one that does not, then the higher value, then the rank. */
static void sym_consider(const ElfW(Sym) *s, size_t i, struct sec str, uintptr_t addr,
			 struct sym_hit *best, bool data)
{
	uintptr_t v = (uintptr_t)s[i].st_value;

	/* Most symbols are above addr or end below it: those tests first. */
	if (v > addr || (addr - v >= s[i].st_size && s[i].st_size))
		return; /* above addr, or it ends below addr */
	int type = ELF64_ST_TYPE(s[i].st_info);
	bool covers = addr - v < s[i].st_size;

	if ((data ? type != STT_OBJECT : type != STT_FUNC && type != STT_GNU_IFUNC) ||
	    s[i].st_shndx == SHN_UNDEF || s[i].st_name >= str.size)
		return;
	int rank = sym_rank(&s[i], (const char *)str.p + s[i].st_name);
	if (best->name) {
		if (best->covers && !covers)
			return;
		if (best->covers == covers &&
		    (v < best->value || (v == best->value && rank <= best->rank)))
			return;
	}
	best->name = (const char *)str.p + s[i].st_name;
	best->value = v;
	best->size = s[i].st_size;
	best->covers = covers;
	best->rank = rank;
}

/*
 * A table's function symbols by address, made once it has been scanned
 * SYM_SCANS times (a report at exit looks up many addresses; one look-up
 * alone is cheaper as a scan): buckets of consecutive addresses, each
 * listing its symbols in the table's order, and for each bucket the
 * furthest end of a sized symbol in it or below.  A look-up reads the
 * bucket of its address and those below it only while one of them may
 * still hold a better symbol, and finds the scan's answer (symbols of one
 * value, whose order breaks ties, share a bucket).  In anonymous
 * mappings, as the kept descriptions.
 */
#define SYM_SCANS 1
#define SYM_INDEXES 8

struct sym_index {
	const uint8_t *tab;             /* the table indexed (NULL: slot free) */
	unsigned scans;
	bool made;                      /* false after SYM_SCANS: not made (no memory) */
	uintptr_t lo;
	unsigned shift;
	uint32_t nb;
	uint32_t *start;                /* nb + 1: bucket b's symbols are idx[start[b]..start[b+1]) */
	uint32_t *idx;
	uintptr_t *reach;               /* nb */
	void *map;
	size_t bytes;
};

static struct sym_index sym_indexes[SYM_INDEXES];
static unsigned sym_index_next;

static bool sym_indexed(const ElfW(Sym) *s, size_t i, struct sec str)
{
	int type = ELF64_ST_TYPE(s[i].st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s[i].st_shndx != SHN_UNDEF &&
	       s[i].st_name < str.size;
}

static void sym_index_make(struct sym_index *x, const ElfW(Sym) *s, size_t n, struct sec str)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	size_t m = 0;

	x->made = false;
	if (n > UINT32_MAX)
		return;
	for (size_t i = 0; i < n; i++)
		if (sym_indexed(s, i, str)) {
			uintptr_t v = (uintptr_t)s[i].st_value;

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			m++;
		}
	if (m == 0)
		return;
	unsigned shift = 0;
	uint64_t want = m / 2 ? m / 2 : 1;
	while (shift < 63 && ((uint64_t)(hi - lo) >> shift) >= want)
		shift++;
	uint32_t nb = (uint32_t)(((uint64_t)(hi - lo) >> shift) + 1);
	size_t bytes = m * sizeof(uint32_t) + (nb + 1) * sizeof(uint32_t) + nb * sizeof(uintptr_t);
	void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED)
		return;
	x->map = map;
	x->bytes = bytes;
	x->reach = map;
	x->start = (uint32_t *)(x->reach + nb);
	x->idx = x->start + nb + 1;
	x->lo = lo;
	x->shift = shift;
	x->nb = nb;
	for (size_t i = 0; i < n; i++)
		if (sym_indexed(s, i, str)) {
			uintptr_t v = (uintptr_t)s[i].st_value;
			uint32_t b = (uint32_t)((v - lo) >> shift);

			x->start[b + 1]++;
			uintptr_t end = v + s[i].st_size < v ? UINTPTR_MAX : v + s[i].st_size;

			if (s[i].st_size && end > x->reach[b])
				x->reach[b] = end;
		}
	for (uint32_t b = 0; b < nb; b++) {
		x->start[b + 1] += x->start[b];
		if (b && x->reach[b - 1] > x->reach[b])
			x->reach[b] = x->reach[b - 1];
	}
	/* start[b] counts up as bucket b fills, then is put back */
	for (size_t i = 0; i < n; i++)
		if (sym_indexed(s, i, str))
			x->idx[x->start[(uint32_t)(((uintptr_t)s[i].st_value - lo) >> shift)]++] = (uint32_t)i;
	for (uint32_t b = nb; b > 0; b--)
		x->start[b] = x->start[b - 1];
	x->start[0] = 0;
	x->made = true;
}

/* The table's index, made now if it has been scanned enough; NULL: scan. */
static const struct sym_index *sym_index_of(const struct sec *tab, const ElfW(Sym) *s, size_t n,
					    struct sec str)
{
	struct sym_index *x = NULL;

	for (unsigned i = 0; i < SYM_INDEXES; i++)
		if (sym_indexes[i].tab == tab->p)
			x = &sym_indexes[i];
	if (!x) {
		x = &sym_indexes[sym_index_next++ % SYM_INDEXES];
		if (x->map)
			munmap(x->map, x->bytes);
		memset(x, 0, sizeof(*x));
		x->tab = tab->p;
	}
	if (x->made)
		return x;
	if (x->scans++ == SYM_SCANS)
		sym_index_make(x, s, n, str);
	return x->made ? x : NULL;
}

/* The function symbol of table `tabname` whose size covers addr, else
 * the nearest sizeless one below it (a data object's symbol with `data`). */
static void sym_lookup_kind(const struct elf_file *f, const char *tabname, uintptr_t addr,
			    struct sym_hit *best, bool data)
{
	unsigned idx;
	struct sec tab = elf_sec(f, tabname, &idx);

	if (!tab.p)
		return;
	struct sec str = elf_sec_at(f, f->sh[idx].sh_link);
	if (!str.p)
		return;
	size_t n = tab.size / sizeof(ElfW(Sym));
	const ElfW(Sym) *s = (const ElfW(Sym) *)(const void *)tab.p;
	const struct sym_index *x = data || best->name ? NULL : sym_index_of(&tab, s, n, str);

	if (!x) {
		for (size_t i = 0; i < n; i++)
			sym_consider(s, i, str, addr, best, data);
		return;
	}
	if (addr < x->lo)
		return;         /* below every function */
	uint64_t b = (uint64_t)(addr - x->lo) >> x->shift;
	for (b = b < x->nb ? b : x->nb - 1;; b--) {
		for (uint32_t k = x->start[b]; k < x->start[b + 1]; k++)
			sym_consider(s, x->idx[k], str, addr, best, false);
		/* below: lower values; better only when covering addr, and
		 * only a sized symbol ending above addr can */
		if (b == 0 || (best->name && (best->covers || x->reach[b - 1] <= addr)))
			return;
	}
}

static void sym_lookup(const struct elf_file *f, const char *tabname, uintptr_t addr,
		       struct sym_hit *best)
{
	sym_lookup_kind(f, tabname, addr, best, false);
}

/* ---- DWARF .debug_line ------------------------------------------------- */

/* Read one attribute of form `form` of a DWARF 5 directory or file entry;
 * a string lands in *s, a number in *u. */
static void rd_form(struct rd *r, const struct dwarf *d, uint64_t form, unsigned offsize,
		    const char **s, uint64_t *u)
{
	*s = NULL;
	*u = 0;
	switch (form) {
	case 0x08: *s = rd_str(r); break;                                  /* string */
	case 0x0e: *s = sec_str(d->str, rd_u(r, offsize)); break;          /* strp */
	case 0x1f: *s = sec_str(d->line_str, rd_u(r, offsize)); break;     /* line_strp */
	case 0x0b: *u = rd_u(r, 1); break;                                 /* data1 */
	case 0x05: *u = rd_u(r, 2); break;                                 /* data2 */
	case 0x06: *u = rd_u(r, 4); break;                                 /* data4 */
	case 0x07: *u = rd_u(r, 8); break;                                 /* data8 */
	case 0x1e: rd_skip(r, 16); break;                                  /* data16 */
	case 0x0f: *u = rd_uleb(r); break;                                 /* udata */
	case 0x0d: (void)rd_sleb(r); break;                                /* sdata */
	case 0x09: rd_skip(r, rd_uleb(r)); break;                          /* block */
	case 0x0a: rd_skip(r, rd_u(r, 1)); break;                          /* block1 */
	case 0x03: rd_skip(r, rd_u(r, 2)); break;                          /* block2 */
	case 0x04: rd_skip(r, rd_u(r, 4)); break;                          /* block4 */
	default: r->bad = true; r->p = r->end; break;
	}
}

/* The name of file `want` in a line table header's file list (r is at the
 * start of the directory list). */
static const char *line_file_name(struct rd r, const struct dwarf *d, unsigned version,
				  unsigned offsize, uint64_t want)
{
	if (version < 5) {
		while (!r.bad) {        /* include_directories */
			const char *s = rd_str(&r);

			if (!s || !*s)
				break;
		}
		for (uint64_t i = 1; !r.bad; i++) {
			const char *s = rd_str(&r);

			if (!s || !*s)
				return NULL;
			(void)rd_uleb(&r);
			(void)rd_uleb(&r);
			(void)rd_uleb(&r);
			if (i == want)
				return s;
		}
		return NULL;
	}
	for (int pass = 0; pass < 2; pass++) {  /* directories, then files */
		uint64_t fmt[16][2];
		unsigned nf = (unsigned)rd_u(&r, 1);

		if (nf > 16)
			return NULL;
		for (unsigned i = 0; i < nf; i++) {
			fmt[i][0] = rd_uleb(&r);
			fmt[i][1] = rd_uleb(&r);
		}
		uint64_t count = rd_uleb(&r);
		for (uint64_t e = 0; e < count && !r.bad; e++) {
			const char *path = NULL;

			for (unsigned i = 0; i < nf; i++) {
				const char *s;
				uint64_t u;

				rd_form(&r, d, fmt[i][1], offsize, &s, &u);
				if (fmt[i][0] == 1) /* DW_LNCT_path */
					path = s;
			}
			if (pass == 1 && e == want)
				return path;
		}
		if (r.bad)
			return NULL;
	}
	return NULL;
}

/* One unit of .debug_line (DWARF 2-5 section 6.2.4): its header's fields
 * the program and the file list need. */
struct line_unit {
	unsigned version, offsize, addr_size, min_inst, line_range, opcode_base;
	int line_base;
	const uint8_t *std_len;    /* standard_opcode_lengths */
	struct rd files;           /* at the directory list */
	struct rd prog;            /* the line number program */
};

/* The unit at all.p, all advanced past it: 1 read, 0 skip it (another
 * version, a bad header), -1 nothing more can be read. */
static int line_unit_read(struct rd *all, struct line_unit *u)
{
	uint64_t len;

	u->offsize = 4;
	len = rd_u(all, 4);
	if (len == 0xffffffffu) {
		u->offsize = 8;
		len = rd_u(all, 8);
	}
	if (all->bad || len > (uint64_t)(all->end - all->p))
		return -1;
	struct rd r = { all->p, all->p + len, false };
	all->p += len;

	u->version = (unsigned)rd_u(&r, 2);
	u->addr_size = sizeof(void *);
	if (u->version < 2 || u->version > 5)
		return 0;
	if (u->version >= 5) {
		u->addr_size = (unsigned)rd_u(&r, 1);
		(void)rd_u(&r, 1); /* segment selector size */
	}
	uint64_t hlen = rd_u(&r, u->offsize);
	if (r.bad || hlen > (uint64_t)(r.end - r.p))
		return 0;
	u->prog = (struct rd){ r.p + hlen, r.end, false };
	u->min_inst = (unsigned)rd_u(&r, 1);
	if (u->version >= 4)
		(void)rd_u(&r, 1); /* maximum_operations_per_instruction */
	(void)rd_u(&r, 1);         /* default_is_stmt */
	u->line_base = (int8_t)rd_u(&r, 1);
	u->line_range = (unsigned)rd_u(&r, 1);
	u->opcode_base = (unsigned)rd_u(&r, 1);
	u->std_len = r.p;
	if (u->opcode_base == 0 || u->line_range == 0)
		return 0;
	rd_skip(&r, u->opcode_base - 1);
	if (r.bad)
		return 0;
	u->files = r;
	return 1;
}

/* File `want` of the line table unit at offset off (a unit's
 * DW_AT_stmt_list), without its directory; NULL if none. */
static const char *line_file_at(const struct dwarf *d, uint64_t off, uint64_t want)
{
	struct line_unit u;

	if (!d->line.p || off >= d->line.size)
		return NULL;
	struct rd all = { d->line.p + off, d->line.p + d->line.size, false };
	if (line_unit_read(&all, &u) != 1)
		return NULL;
	const char *name = line_file_name(u.files, d, u.version, u.offsize, want);
	if (!name)
		return NULL;
	const char *slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* The line program's registers a look-up keeps, and the row before. */
struct line_state {
	const uint8_t *at;              /* the next opcode */
	uint64_t a, prev_a, fileno, prev_file;
	int64_t ln, prev_ln;
	bool have_prev;
};

/* One opcode of u's program at st (DWARF 2-5 section 6.2.5): 1 when the
 * row it ends is the first after addr's (st->prev_* is addr's row), 0 to
 * go on, -1 at the program's end or a bad opcode.  [*lo, *hi) grows to
 * hold every row pair it tests. */
static int line_op(const struct line_unit *u, struct line_state *st, const uint8_t *end,
		   uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct rd p = { st->at, end, false };
	bool row = false, end_seq = false;

	if (p.p >= p.end)
		return -1;
	unsigned op = (unsigned)rd_u(&p, 1);

	if (op >= u->opcode_base) {
		unsigned adj = op - u->opcode_base;

		st->a += (uint64_t)(adj / u->line_range) * u->min_inst;
		st->ln += u->line_base + (int)(adj % u->line_range);
		row = true;
	} else if (op == 0) {
		uint64_t elen = rd_uleb(&p);

		if (p.bad || elen > (uint64_t)(p.end - p.p))
			return -1;
		const uint8_t *next = p.p + elen;
		unsigned sub = elen ? (unsigned)rd_u(&p, 1) : 0;

		if (sub == 1) {
			row = end_seq = true;
		} else if (sub == 2 && elen - 1 == u->addr_size) {
			st->a = rd_u(&p, u->addr_size);
		}
		p.p = next;
	} else {
		switch (op) {
		case 1: row = true; break;                                   /* copy */
		case 2: st->a += rd_uleb(&p) * u->min_inst; break;           /* advance_pc */
		case 3: st->ln += rd_sleb(&p); break;                        /* advance_line */
		case 4: st->fileno = rd_uleb(&p); break;                     /* set_file */
		case 8: st->a += (uint64_t)((255 - u->opcode_base) / u->line_range) * u->min_inst; break;
		case 9: st->a += rd_u(&p, 2); break;                         /* fixed_advance_pc */
		default:
			for (unsigned i = 0; i < u->std_len[op - 1]; i++)
				(void)rd_uleb(&p);
			break;
		}
	}
	st->at = p.p;
	if (p.bad)
		return -1;
	if (!row)
		return 0;
	if (st->have_prev && st->prev_a < st->a) {
		*lo = st->prev_a < *lo ? st->prev_a : *lo;
		*hi = st->a > *hi ? st->a : *hi;
		if (st->prev_a <= addr && addr < st->a)
			return 1;
	}
	if (end_seq) {
		st->have_prev = false;
		st->a = 0;
		st->fileno = 1;
		st->ln = 1;
	} else {
		st->have_prev = true;
		st->prev_a = st->a;
		st->prev_file = st->fileno;
		st->prev_ln = st->ln;
	}
	return 0;
}

/*
 * A unit's line program, marked as look-ups run it: every LINE_OPS opcodes
 * the registers are noted, with the addresses [lo, hi) that hold every
 * row pair tested from there to the next mark.  A look-up starts at the
 * first mark whose rows may hold its address, goes past the marks whose
 * rows cannot, and marks the program further where it is the first to
 * run it; it finds the row a run from the start finds.  The last
 * LINE_KEPT programs looked up, at most LINE_MARKS marks each, in
 * anonymous mappings.
 */
#define LINE_OPS 256
#define LINE_KEPT 8
#define LINE_MARKS 16384

struct line_mark {
	struct line_state st;
	uint64_t lo, hi;
	bool closed;            /* [lo, hi) is whole: a mark or the end after it */
};

static struct line_marks {
	const uint8_t *prog, *end;
	struct line_mark *v;
	size_t n, bytes;
} line_marks[LINE_KEPT];
static unsigned line_marks_next;

static struct line_marks *line_marks_of(const struct line_unit *u)
{
	struct line_marks *m;

	for (unsigned i = 0; i < LINE_KEPT; i++)
		if (line_marks[i].prog == u->prog.p && line_marks[i].end == u->prog.end && line_marks[i].n)
			return &line_marks[i];
	m = &line_marks[line_marks_next++ % LINE_KEPT];
	if (m->v)
		munmap(m->v, m->bytes);
	memset(m, 0, sizeof(*m));
	m->bytes = 4096;
	m->v = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->v == MAP_FAILED) {
		memset(m, 0, sizeof(*m));
		return NULL;
	}
	m->prog = u->prog.p;
	m->end = u->prog.end;
	m->n = 1;
	m->v[0] = (struct line_mark){ { u->prog.p, 0, 0, 1, 0, 1, 0, false }, ~(uint64_t)0, 0, false };
	return m;
}

/* A mark after the last, at st; false when there is no room. */
static bool line_mark_add(struct line_marks *m, const struct line_state *st)
{
	if ((m->n + 1) * sizeof(*m->v) > m->bytes) {
		void *p;

		if (m->n >= LINE_MARKS)
			return false;
		p = mremap(m->v, m->bytes, 2 * m->bytes, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			return false;
		m->v = p;
		m->bytes *= 2;
	}
	m->v[m->n++] = (struct line_mark){ *st, ~(uint64_t)0, 0, false };
	return true;
}

/* Run u's program for addr: true with st at addr's row. */
static bool line_run(const struct line_unit *u, uint64_t addr, struct line_state *st)
{
	struct line_marks *m = line_marks_of(u);
	uint64_t lo = ~(uint64_t)0, hi = 0;

	if (!m) {               /* no memory: from the start */
		*st = (struct line_state){ u->prog.p, 0, 0, 1, 0, 1, 0, false };
		for (;;) {
			int k = line_op(u, st, u->prog.end, addr, &lo, &hi);

			if (k)
				return k > 0;
		}
	}
	for (size_t j = 0; j < m->n; j++) {
		struct line_mark *x = &m->v[j];

		if (x->closed && !(x->lo <= addr && addr < x->hi))
			continue;       /* no row pair from here to the next mark holds addr */
		*st = x->st;
		if (x->closed) {
			const uint8_t *stop = j + 1 < m->n ? m->v[j + 1].st.at : NULL;

			while (st->at != stop) {
				int k = line_op(u, st, u->prog.end, addr, &lo, &hi);

				if (k > 0)
					return true;
				if (k < 0)
					return false;
			}
			continue;
		}
		/* the last mark, not run past yet: run on, marking */
		uint64_t xlo = ~(uint64_t)0, xhi = 0;
		unsigned ops = 0;
		bool marking = true;

		for (;;) {
			int k = line_op(u, st, u->prog.end, addr, &xlo, &xhi);

			if (k > 0)
				return true;
			if (k < 0) {
				if (marking) {
					x->lo = xlo;
					x->hi = xhi;
					x->closed = true;
				}
				return false;
			}
			if (marking && ++ops >= LINE_OPS) {
				x->lo = xlo;
				x->hi = xhi;
				if (!line_mark_add(m, st)) {
					marking = false;
					continue;
				}
				m->v[m->n - 2].closed = true;
				x = &m->v[m->n - 1];
				xlo = ~(uint64_t)0;
				xhi = 0;
				ops = 0;
			}
		}
	}
	return false;
}

/* Find addr in one unit's line number program: 1 with its file name and
 * line, 0 when no row of the unit holds addr, -1 when one does but names
 * no file or no line. */
static int line_unit_lookup(const struct dwarf *d, const struct line_unit *u, uint64_t addr,
			    const char **file, unsigned *line)
{
	struct line_state st;

	if (!line_run(u, addr, &st))
		return 0;
	const char *name = line_file_name(u->files, d, u->version, u->offsize, st.prev_file);
	if (!name || st.prev_ln <= 0)
		return -1;
	const char *slash = strrchr(name, '/');
	*file = slash ? slash + 1 : name;
	*line = (unsigned)st.prev_ln;
	return 1;
}

/* Find addr in the line tables, every unit's program in turn until one
 * holds it: its file name and line, true if found. */
static bool line_lookup_all(const struct dwarf *d, uint64_t addr, const char **file, unsigned *line)
{
	struct rd all = { d->line.p, d->line.p + d->line.size, false };

	while (all.p < all.end && !all.bad) {
		struct line_unit u;
		int k = line_unit_read(&all, &u);

		if (k < 0)
			return false;
		if (k == 0)
			continue;
		k = line_unit_lookup(d, &u, addr, file, line);
		if (k != 0)
			return k > 0;
	}
	return false;
}

/* The same answer, reading only the program of the unit whose code holds
 * addr (.debug_info's compilation unit, its DW_AT_stmt_list: dwarf.h),
 * and every unit's only when that does not hold it (no .debug_info, an
 * address outside every unit). */
static bool line_lookup(const struct dwarf *d, uint64_t addr, const char **file, unsigned *line)
{
	uint64_t off;

	if (shim_dwarf_line_unit(d, addr, &off) && off < d->line.size) {
		struct rd one = { d->line.p + off, d->line.p + d->line.size, false };
		struct line_unit u;

		if (line_unit_read(&one, &u) == 1) {
			int k = line_unit_lookup(d, &u, addr, file, line);

			if (k != 0)
				return k > 0;
		}
	}
	return line_lookup_all(d, addr, file, line);
}

static void dwarf_of(const struct elf_file *f, struct dwarf *d)
{
	d->line = elf_sec(f, ".debug_line", NULL);
	d->str = elf_sec(f, ".debug_str", NULL);
	d->line_str = elf_sec(f, ".debug_line_str", NULL);
	d->info = elf_sec(f, ".debug_info", NULL);
	d->abbrev = elf_sec(f, ".debug_abbrev", NULL);
	d->aranges = elf_sec(f, ".debug_aranges", NULL);
	d->ranges = elf_sec(f, ".debug_ranges", NULL);
	d->rnglists = elf_sec(f, ".debug_rnglists", NULL);
	d->addr = elf_sec(f, ".debug_addr", NULL);
	d->str_offsets = elf_sec(f, ".debug_str_offsets", NULL);
}

/* ---- modules -------------------------------------------------------------- */

#define SYM_MODULES 64

struct module {
	uintptr_t bias;
	char path[PATH_MAX];
	const char *name;        /* basename of path */
	bool tried;
	struct elf_file elf, dbg;
	struct dwarf dw;         /* the debug sections: elf's, else dbg's */
};

static struct module modules[SYM_MODULES];
static int nmodules;
static int sym_lock;

struct find {
	uintptr_t pc;
	bool found;
	uintptr_t bias;
	char path[PATH_MAX];
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || f->pc < lo || f->pc - lo >= ph->p_memsz)
			continue;
		f->found = true;
		f->bias = info->dlpi_addr;
		if (info->dlpi_name && info->dlpi_name[0]) {
			snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", f->path, sizeof(f->path) - 1);

			f->path[n > 0 ? n : 0] = '\0';
		}
		return 1;
	}
	return 0;
}

/* The separate debug file named by the module's build-id note. */
static void open_debug_file(struct module *m)
{
	struct sec note = elf_sec(&m->elf, ".note.gnu.build-id", NULL);
	char path[PATH_MAX];
	int o;

	if (!note.p || note.size < 16)
		return;
	uint32_t namesz, descsz, type;
	memcpy(&namesz, note.p, 4);
	memcpy(&descsz, note.p + 4, 4);
	memcpy(&type, note.p + 8, 4);
	size_t desc_off = 12 + ((namesz + 3u) & ~3u);
	if (type != NT_GNU_BUILD_ID || descsz < 2 || descsz > 64 || desc_off > note.size ||
	    descsz > note.size - desc_off)
		return;
	const uint8_t *id = note.p + desc_off;
	o = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (uint32_t i = 1; i < descsz; i++)
		o += snprintf(path + o, sizeof(path) - (size_t)o, "%02x", id[i]);
	snprintf(path + o, sizeof(path) - (size_t)o, ".debug");
	(void)elf_open(&m->dbg, path);
}

static struct module *module_of(uintptr_t pc)
{
	struct find f = { .pc = pc };
	struct module *m;

	(void)dl_iterate_phdr(find_cb, &f);
	if (!f.found)
		return NULL;
	for (int i = 0; i < nmodules; i++)
		if (modules[i].bias == f.bias && strcmp(modules[i].path, f.path) == 0)
			return &modules[i];
	if (nmodules == SYM_MODULES)
		return NULL;
	m = &modules[nmodules++];
	m->bias = f.bias;
	memcpy(m->path, f.path, sizeof(m->path));
	const char *slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	return m;
}

static void module_load(struct module *m)
{
	if (m->tried)
		return;
	m->tried = true;
	if (!m->path[0] || !elf_open(&m->elf, m->path))
		return;
	dwarf_of(&m->elf, &m->dw);
	if (!m->dw.line.p || !elf_sec(&m->elf, ".symtab", NULL).p)
		open_debug_file(m);
	if (!m->dw.line.p)
		dwarf_of(&m->dbg, &m->dw);
}

/* ---- the description ------------------------------------------------------ */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* The demangled name of a symbol into buf (or "" for none). */
static void sym_name(const char *name, char *buf, size_t len)
{
	char *dem = NULL;

	if (name && name[0] == '_' && name[1] == 'Z') {
		demangle_fn fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		int status = -1;

		if (fn) {
			dem = fn(name, NULL, NULL, &status);
			if (dem && status == 0)
				name = dem;
		}
	}
	snprintf(buf, len, "%s", name ? name : "");
	free(dem);
}


/* The parts of ra's description that need no line table: its module,
 * offset and function symbol; false: in no module.  The module is left
 * loaded in *mp (NULL: none). */
static bool lookup_func(const void *ra, struct shim_sym *s, struct module **mp)
{
	uintptr_t pc = (uintptr_t)ra;
	struct module *m = module_of(pc ? pc - 1 : 0);

	memset(s, 0, sizeof(*s));
	*mp = m;
	if (!m)
		return false;
	module_load(m);

	uintptr_t addr = pc - m->bias;     /* the module's virtual address */
	struct sym_hit hit = { NULL, 0, 0, false, 0 };

	snprintf(s->module, sizeof(s->module), "%s", m->name);
	s->offset = addr;
	sym_lookup(&m->elf, ".symtab", addr - 1, &hit);
	if (!hit.name)
		sym_lookup(&m->dbg, ".symtab", addr - 1, &hit);
	if (!hit.name)
		sym_lookup(&m->elf, ".dynsym", addr - 1, &hit);
	if (!hit.name)
		return true;
	sym_name(hit.name, s->func, sizeof(s->func));
	s->func_offset = addr - hit.value;
	s->size = hit.covers ? (unsigned long)hit.size : 0;
	return true;
}

/* The rest of the description (symbolize.h), from module m's line table
 * and inlined calls: s's file, line and inlined functions. */
static void lookup_lines(const struct module *m, struct shim_sym *s)
{
	uintptr_t addr = s->offset;
	const char *file = NULL;
	unsigned line = 0;
	const struct dwarf *d = &m->dw;
	struct shim_inline in;

	if (d->line.p && line_lookup(d, addr - 1, &file, &line)) {
		snprintf(s->file, sizeof(s->file), "%s", file);
		s->line = line;
	}
	/* In code inlined into the function: the line that calls it, not the
	 * line inside the inlined function (a header's, for std::mutex); the
	 * inlined functions below it, each at its call of the next. */
	if (d->line.p && shim_dwarf_inline(d, addr - 1, &in) &&
	    (file = line_file_at(d, in.stmt_list, in.call[0].file)) != NULL) {
		unsigned n = in.n < SHIM_SYM_INLINED ? in.n : SHIM_SYM_INLINED;

		for (unsigned k = n; k-- > 0;) {
			/* where inlined[k] is: its call of the next, else the row */
			bool next = k + 1 < in.n || in.more;
			uint64_t nfile = k + 1 < in.n ? in.call[k + 1].file : in.next_file;
			unsigned nline = k + 1 < in.n ? in.call[k + 1].line : in.next_line;
			const char *f = next ? line_file_at(d, in.stmt_list, nfile) : s->file;

			if (in.call[k].linkage)
				sym_name(in.call[k].name, s->inlined[k].func, sizeof(s->inlined[k].func));
			else
				snprintf(s->inlined[k].func, sizeof(s->inlined[k].func), "%s",
					 in.call[k].name ? in.call[k].name : "");
			snprintf(s->inlined[k].file, sizeof(s->inlined[k].file), "%.*s",
				 (int)sizeof(s->inlined[k].file) - 1, f ? f : "");
			s->inlined[k].line = !f ? 0 : next ? nline : s->line;
		}
		s->ninlined = n;
		snprintf(s->file, sizeof(s->file), "%s", file);
		s->line = in.call[0].line;
	}
}

/*
 * The descriptions made, by address, kept for the life of the process: a
 * report names a frame several times (its text, its name, whether it is
 * a wrapper), and the line tables are what a look-up costs.  A hash table
 * of SYM_KEPT entries in anonymous mappings (not malloc: the deadlock
 * watchdog symbolizes while the program's threads may hold malloc's
 * locks), taken as used; past SYM_KEPT addresses, each look-up is made
 * again.  An entry has its function only (lines false) until a
 * description that needs its line is asked for.
 */
#define SYM_KEPT_BITS 12
#define SYM_KEPT (1u << SYM_KEPT_BITS)
#define SYM_SLAB 64                     /* entries mapped at a time */

struct sym_kept {
	const void *ra;
	bool found, lines;
	struct module *m;       /* its module, loaded (found) */
	struct shim_sym s;
};

static struct sym_kept **sym_tab;       /* 2 * SYM_KEPT slots */
static struct sym_kept *sym_slab;
static unsigned sym_slab_used = SYM_SLAB, sym_nkept;

static void *sym_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* ra's description, at least its function, its lines too with `lines`
 * (NULL for out of memory: *scratch is used, made again each time). */
static const struct sym_kept *sym_of(const void *ra, bool lines, struct sym_kept *scratch)
{
	unsigned mask = 2 * SYM_KEPT - 1;
	unsigned i = (unsigned)(((uint64_t)(uintptr_t)ra * 0x9e3779b97f4a7c15ull) >> 40) & mask;
	struct sym_kept *k = NULL;
	struct module *m;

	if (!sym_tab)
		sym_tab = sym_map(2 * SYM_KEPT * sizeof(*sym_tab));
	for (unsigned n = 0; sym_tab && n <= mask; n++, i = (i + 1) & mask) {
		if (!sym_tab[i])
			break;
		if (sym_tab[i]->ra == ra) {
			k = sym_tab[i];
			break;
		}
	}
	if (k && (k->lines || !lines))
		return k;
	if (k) {                        /* its lines, now */
		if (k->found)
			lookup_lines(k->m, &k->s);
		k->lines = true;
		return k;
	}
	if (sym_tab && !sym_tab[i] && sym_nkept < SYM_KEPT) {
		if (sym_slab_used == SYM_SLAB) {
			struct sym_kept *slab = sym_map(SYM_SLAB * sizeof(*slab));

			if (slab) {
				sym_slab = slab;
				sym_slab_used = 0;
			}
		}
		if (sym_slab_used < SYM_SLAB) {
			k = &sym_slab[sym_slab_used++];
			sym_nkept++;
		}
	}
	if (!k)
		k = scratch;
	k->ra = ra;
	k->found = lookup_func(ra, &k->s, &m);
	k->m = m;
	k->lines = lines;
	if (k->found && lines)
		lookup_lines(m, &k->s);
	if (k != scratch)
		sym_tab[i] = k;
	return k;
}

static int describe(const void *ra, char *buf, size_t len)
{
	static struct sym_kept scratch; /* under sym_lock */
	const struct sym_kept *k = sym_of(ra, true, &scratch);
	const struct shim_sym *s = &k->s;

	if (!k->found)
		return snprintf(buf, len, "%#lx", (unsigned long)(uintptr_t)ra);
	if (!s->func[0]) {
		if (s->file[0])
			return snprintf(buf, len, "%s+%#lx (%s:%u)", s->module, s->offset, s->file, s->line);
		return snprintf(buf, len, "%s+%#lx", s->module, s->offset);
	}
	if (s->file[0])
		return snprintf(buf, len, "%s (%s:%u)", s->func, s->file, s->line);
	return snprintf(buf, len, "%s+%#lx (%s)", s->func, s->func_offset, s->module);
}

static void sym_take(void)
{
	int expect = 0;

	while (!qa_try_cmpxchg_acquire(&sym_lock, &expect, 1)) {
		expect = 0;
		syscall(SYS_sched_yield); /* not the drop-in's (offcpu.c) */
	}
}

int shim_symbolize(const void *ra, char *buf, size_t len)
{
	sym_take();
	int n = describe(ra, buf, len);
	/* Pairs with the acquire in sym_take(): the module cache is handed over. */
	qa_write_release(&sym_lock, 0);
	return n;
}

int shim_symbolize_func(const void *ra, char *name, size_t len, unsigned long *size,
			char *module, size_t mlen)
{
	uintptr_t pc = (uintptr_t)ra;
	struct sym_hit hit = { NULL, 0, 0, false, 0 };
	struct module *m;

	sym_take();
	m = module_of(pc ? pc - 1 : 0);
	if (m) {
		module_load(m);
		uintptr_t addr = pc - m->bias;

		sym_lookup(&m->elf, ".symtab", addr - 1, &hit);
		if (!hit.name)
			sym_lookup(&m->dbg, ".symtab", addr - 1, &hit);
		if (!hit.name)
			sym_lookup(&m->elf, ".dynsym", addr - 1, &hit);
	}
	sym_name(hit.name, name, len);
	*size = hit.covers ? (unsigned long)hit.size : 0;
	snprintf(module, mlen, "%s", m ? m->name : "");
	qa_write_release(&sym_lock, 0); /* pairs with sym_take() */
	return hit.name != NULL;
}

int shim_symbolize_data(const void *addr, char *buf, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	struct sym_hit hit = { NULL, 0, 0, false, 0 };
	struct module *m;
	int n;

	sym_take();
	m = module_of(a);
	if (!m) {
		qa_write_release(&sym_lock, 0);
		return snprintf(buf, len, "%#lx", (unsigned long)a);
	}
	module_load(m);
	uintptr_t v = a - m->bias;

	sym_lookup_kind(&m->elf, ".symtab", v, &hit, true);
	if (!hit.name)
		sym_lookup_kind(&m->dbg, ".symtab", v, &hit, true);
	if (!hit.name)
		sym_lookup_kind(&m->elf, ".dynsym", v, &hit, true);
	if (hit.name && hit.covers) {
		char name[200];

		sym_name(hit.name, name, sizeof name);
		if (v == hit.value)
			n = snprintf(buf, len, "%s (%s)", name, m->name);
		else
			n = snprintf(buf, len, "%s+%#lx (%s)", name, (unsigned long)(v - hit.value),
				     m->name);
	} else {
		n = snprintf(buf, len, "%s+%#lx", m->name, (unsigned long)v);
	}
	qa_write_release(&sym_lock, 0); /* pairs with sym_take() */
	return n;
}

/* The kept description of ra into *s, with its file, line and inlined
 * calls when `lines` (read now if they were not), without them otherwise
 * (so that what *s says does not depend on what was kept before). */
static bool sym_copy(const void *ra, bool lines, struct shim_sym *s)
{
	static struct sym_kept scratch; /* under sym_lock */

	sym_take();
	const struct sym_kept *k = sym_of(ra, lines, &scratch);
	bool found = k->found;

	if (found) {
		*s = k->s;
		if (!lines) {
			s->file[0] = '\0';
			s->line = 0;
			s->ninlined = 0;
			memset(s->inlined, 0, sizeof(s->inlined));
		}
	} else {
		memset(s, 0, sizeof(*s));
	}
	qa_write_release(&sym_lock, 0); /* pairs with sym_take() */
	return found;
}

bool shim_symbolize_sym(const void *ra, struct shim_sym *s)
{
	return sym_copy(ra, true, s);
}

bool shim_symbolize_sym_func(const void *ra, struct shim_sym *s)
{
	return sym_copy(ra, false, s);
}
