/* SPDX-License-Identifier: MIT */
/*
 * The profile's stacks (stacks.h): capture above the drop-in's frames,
 * a table of distinct (lock, stack) pairs with the waits they stand for
 * (open addressing on a hash of both, claimed once with a cmpxchg and
 * never freed, like the lock rows), and the frames' names and wrappers
 * for the reports.  The table is written by the contention hooks
 * (contention.c) and read by the reports; it reads nothing of theirs.
 */
#define _GNU_SOURCE
#include "stacks.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "core/atomic.h"
#include "unwinder.h"
#include "wrapper.h"

unsigned pf_depth = PF_DEPTH_DEFAULT;
static bool pf_primed; /* pf_stacks_setup() has loaded the unwinder */

/* ---- capture --------------------------------------------------------------- */

/* The drop-in's own loaded segments: frames there are skipped. */
static uintptr_t shim_lo, shim_hi;

static int range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t self = (uintptr_t)arg, lo = UINTPTR_MAX, hi = 0;
	bool mine = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, e = a + ph->p_memsz;

		if (ph->p_type != PT_LOAD)
			continue;
		lo = a < lo ? a : lo;
		hi = e > hi ? e : hi;
		mine |= self >= a && self < e;
	}
	if (!mine)
		return 0;
	shim_lo = lo;
	shim_hi = hi;
	return 1;
}

/*
 * The unwinder backtrace() calls (unwinder.h), called here directly, so
 * that a capture stops once it has the frames it keeps: backtrace() goes
 * on to as many as asked for, 12 more than kept (for the drop-in's own
 * frames).  uw.backtrace NULL when not found: backtrace() then.
 */
static struct shim_unwinder uw;

void pf_stacks_setup(void)
{
	const char *v = getenv("QLOCK_PROFILE_DEPTH");
	void *prime[4];

	if (v && *v) {
		char *end;
		unsigned long n = strtoul(v, &end, 10);

		if (*end || n > PF_DEPTH_MAX)
			fprintf(stderr, "libqlock-pthread: QLOCK_PROFILE_DEPTH=%s: not a depth "
				"from 0 to %d; the stacks keep %u frames\n", v, PF_DEPTH_MAX, pf_depth);
		else
			pf_depth = (unsigned)n;
	}
	shim_wrapper_setup();
	if (!pf_depth)
		return;
	(void)dl_iterate_phdr(range_cb, (void *)&shim_lo);
	/* The first backtrace() loads the unwinder: now, not on a lock path. */
	(void)backtrace(prime, 4);
	shim_unwinder_find(&uw);
	qa_write_release(&pf_primed, true);
}

bool pf_stacks_ready(void)
{
	return qa_read_acquire(&pf_primed) && pf_depth;
}

static inline bool pf_in_shim(const void *pc)
{
	return (uintptr_t)pc >= shim_lo && (uintptr_t)pc < shim_hi;
}

/* A capture under way: the frames kept, as backtrace() would give them. */
struct capture {
	uintptr_t *pc;
	unsigned max, k;        /* frames kept, at most max */
	unsigned limit;         /* frames seen (backtrace()'s count, last.n) at most */
	bool above;             /* past the drop-in's own frames */
	struct shim_unwind_at last;
};

static _Unwind_Reason_Code capture_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct capture *c = arg;
	uintptr_t ip;

	if (!shim_unwind_step(&uw, ctx, &c->last, &ip))
		return _URC_END_OF_STACK;
	if (!c->above && !pf_in_shim((const void *)ip))
		c->above = true;
	if (c->above)
		c->pc[c->k++] = ip;
	return c->k == c->max || c->last.n == c->limit ? _URC_END_OF_STACK : _URC_NO_REASON;
}

unsigned pf_stack_capture(uintptr_t *pc, unsigned max)
{
	if (uw.backtrace && max) {
		/* The first frame is this function's (backtrace()'s caller's). */
		struct capture c = { pc, max, 0, max + 12, false, { 0, 0, 0 } };

		(void)uw.backtrace(capture_frame, &c);
		/* backtrace() drops a last frame without an address */
		if (c.k && c.last.n > 1 && pc[c.k - 1] == 0)
			c.k--;
		return c.k;
	}
	void *buf[PF_DEPTH_MAX + 12];
	int n = backtrace(buf, (int)(max + 12));
	unsigned k = 0;
	int i = 0;

	/* A sanitizer's interceptor of backtrace() puts a frame of its own
	 * before the drop-in's: skip it when the drop-in's frames follow. */
	if (n > 1 && !pf_in_shim(buf[0]) && pf_in_shim(buf[1]))
		i = 1;
	while (i < n && pf_in_shim(buf[i]))
		i++;
	for (; i < n && k < max; i++)
		pc[k++] = (uintptr_t)buf[i];
	return k;
}

/* ---- the table ------------------------------------------------------------- */

#define PF_STACK_BITS 12
#define PF_STACKS (1u << PF_STACK_BITS)  /* 2.3 MiB, touched as used */
#define PF_STACK_PROBES 64

static struct pf_stack pf_stacks[PF_STACKS];
static uint32_t pf_used[PF_STACKS];     /* index + 1, in claim order; 0 = being written */
static uint32_t pf_nused;
uint64_t pf_stacks_lost;

static uint64_t stack_hash(uintptr_t key, const uintptr_t *pc, unsigned n)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < n; i++) {
		h ^= (uint64_t)pc[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

void pf_stack_add(uintptr_t key, const uintptr_t *pc, unsigned n, uint64_t weight, uint64_t ns)
{
	uint64_t h = stack_hash(key, pc, n);
	unsigned i = (unsigned)(h >> (64 - PF_STACK_BITS));

	for (int p = 0; p < PF_STACK_PROBES; p++, i = (i + 1) & (PF_STACKS - 1)) {
		struct pf_stack *s = &pf_stacks[i];
		uint64_t cur = qa_read(&s->hash);

		if (cur == 0 && qa_try_cmpxchg_relaxed(&s->hash, &cur, h)) {
			s->key = key;
			s->depth = n;
			memcpy(s->pc, pc, n * sizeof(pc[0]));
			/* Release: key, depth and frames before the mark
			 * (pairs with the acquire in pf_stack_at()). */
			qa_write_release(&s->ready, 1u);
			uint32_t k = qa_fetch_add(&pf_nused, 1u);
			qa_write_release(&pf_used[k], i + 1);
			cur = h;
		}
		if (cur != h)
			continue;
		qa_fetch_add_relaxed(&s->weight, weight);
		qa_fetch_add_relaxed(&s->wait_ns, ns);
		return;
	}
	qa_fetch_add_relaxed(&pf_stacks_lost, 1);
}

unsigned pf_stacks_used(void)
{
	uint32_t n = qa_read(&pf_nused);

	return n < PF_STACKS ? n : PF_STACKS;
}

const struct pf_stack *pf_stack_at(unsigned k)
{
	uint32_t i = qa_read_acquire(&pf_used[k]);

	if (!i || !qa_read_acquire(&pf_stacks[i - 1].ready))
		return NULL;
	return &pf_stacks[i - 1];
}

/* ---- names and wrappers (wrapper.h) -------------------------------------- */

#define PF_FRAME_BITS 13
static struct pf_frame *frames[1u << PF_FRAME_BITS];

/* pc's frame, made with its function only (lines: with its lines too). */
static const struct pf_frame *frame_of(uintptr_t pc, bool lines)
{
	static struct pf_frame none;
	unsigned i = (unsigned)(((uint64_t)pc * 0x9e3779b97f4a7c15ull) >> (64 - PF_FRAME_BITS));
	struct pf_frame *f = NULL;

	for (unsigned n = 0; n < (1u << PF_FRAME_BITS); n++, i = (i + 1) & ((1u << PF_FRAME_BITS) - 1)) {
		if (frames[i] && frames[i]->pc == pc) {
			f = frames[i];
			break;
		}
		if (!frames[i])
			break;
	}
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f) {
			none.pc = pc;
			none.lines = true;
			snprintf(none.text, sizeof(none.text), "%#lx", (unsigned long)pc);
			snprintf(none.name, sizeof(none.name), "%#lx", (unsigned long)pc);
			return &none;
		}
		f->pc = pc;
		if (!shim_symbolize_sym_func((const void *)pc, &f->sym)) {
			snprintf(f->name, sizeof(f->name), "%#lx", (unsigned long)pc);
		} else if (f->sym.func[0]) {
			f->named = true;
			shim_func_strip_params(f->sym.func, f->name, sizeof(f->name));
			f->wrapper = shim_is_wrapper(f->sym.func, f->sym.size, f->sym.module);
		} else {
			snprintf(f->name, sizeof(f->name), "%s+%#lx", f->sym.module, f->sym.offset);
		}
		if (!frames[i])
			frames[i] = f;
	}
	if (lines && !f->lines) {
		shim_symbolize((const void *)pc, f->text, sizeof(f->text));
		(void)shim_symbolize_sym((const void *)pc, &f->sym);
		f->lines = true;
	}
	return f;
}

const struct pf_frame *pf_frame_of(uintptr_t pc)
{
	return frame_of(pc, true);
}

const struct pf_frame *pf_frame_func_of(uintptr_t pc)
{
	return frame_of(pc, false);
}

unsigned pf_stack_site(const struct pf_stack *s)
{
	for (unsigned i = 0; i < s->depth; i++)
		if (!pf_frame_func_of(s->pc[i])->wrapper)
			return i;
	return s->depth ? s->depth - 1 : 0;
}
