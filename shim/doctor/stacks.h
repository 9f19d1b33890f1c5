/* SPDX-License-Identifier: MIT */
/*
 * The profile's stacks (QLOCK_PROFILE_DEPTH, qlock-run --profile-depth=N):
 * the call stack of a sampled contended acquisition, kept per lock with
 * the waits it stands for, and named at report time by its site: the
 * first frame outside lock wrappers.
 *
 * Captured while the thread is about to wait (lockstat_wait_begin()), so
 * the unwind costs the waiter, never the lock's holder: glibc's
 * backtrace() (libgcc's unwinder, the DWARF call frame information every
 * x86-64 and AArch64 object has; no frame pointers needed), primed at
 * set-up, since its first call loads libgcc_s (malloc, the loader's lock).
 * A thread's capture is recorded (stacks.c, the stack table) at its next
 * wait, at its exit or before a report, outside any lock of the program.
 *
 * Which waits: the 1 in PF_SAMPLE that the profile's sampling times
 * (contention.h), each standing for PF_SAMPLE waits, and a lock's first
 * contended acquisition in the thread when the lock has no stack yet
 * (standing for itself), so that every contended lock shows a stack.  A
 * report scales a lock's stacks to its exact count of contended
 * acquisitions and its wait total.
 *
 * What is a wrapper: the doctor's one rule (wrapper.h), on the frame's
 * function name, size and module.
 */
#ifndef QLOCK_SHIM_STACKS_H
#define QLOCK_SHIM_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize.h"

#define PF_DEPTH_MAX 64
#define PF_DEPTH_DEFAULT 8

/* Frames kept per stack (0: no stacks); set before the profile turns on. */
extern unsigned pf_depth;

/* QLOCK_PROFILE_DEPTH, the wrapper patterns (wrapper.h); the unwinder primed. */
void pf_stacks_setup(void);

/* Stacks are kept (a depth above 0) and the unwinder is primed: a
 * capture may be made. */
bool pf_stacks_ready(void);

/* The calling thread's stack above the drop-in's own frames, at most
 * max (<= PF_DEPTH_MAX) return addresses, innermost first.  Async-
 * signal-unsafe, lock-free after set-up. */
unsigned pf_stack_capture(uintptr_t *pc, unsigned max);

/* Record n frames waited at for the lock of row key `key` (ls_key()),
 * standing for `weight` waits of `ns` nanoseconds in all. */
void pf_stack_add(uintptr_t key, const uintptr_t *pc, unsigned n, uint64_t weight, uint64_t ns);

/* ---- reading (reports) --------------------------------------------------- */

struct pf_stack {
	uint64_t hash;          /* of key and frames; 0 = free */
	uintptr_t key;          /* the lock's row key */
	uint32_t depth;
	uint32_t ready;         /* key, depth and pc written (release) */
	uint64_t weight;        /* the waits it stands for */
	uint64_t wait_ns;       /* their wait, estimated */
	uintptr_t pc[PF_DEPTH_MAX];
};

/* The recorded stacks: pf_stack_at(k), k < pf_stacks_used(), NULL while
 * being written. */
unsigned pf_stacks_used(void);
const struct pf_stack *pf_stack_at(unsigned k);
/* Stacks not recorded: the table was full. */
extern uint64_t pf_stacks_lost;

/* A frame, symbolized once (not thread-safe: reports are made one at a
 * time).  pf_frame_of() gives it whole; pf_frame_func_of() only what its
 * symbol tells (named, wrapper, name; sym without file, line and inlined
 * calls, text empty), so that a report reads the line tables only for
 * the frames whose lines it prints. */
struct pf_frame {
	uintptr_t pc;
	bool named;             /* a function symbol covers it */
	bool wrapper;
	bool lines;             /* text and sym's lines filled (pf_frame_of()) */
	char text[320];         /* as shim_symbolize() describes it */
	char name[300];         /* the function without parameters, or module+offset */
	struct shim_sym sym;
};
const struct pf_frame *pf_frame_of(uintptr_t pc);
const struct pf_frame *pf_frame_func_of(uintptr_t pc);
/* The index of the stack's site: its first frame outside wrappers (the
 * last frame when all are wrappers). */
unsigned pf_stack_site(const struct pf_stack *s);

/*
 * The stacks of one report, estimates scaled per lock: each lock's
 * stacks' counts add up to its contended acquisitions and their waits to
 * its wait total.  pf_report_stacks() (pprof.c, which reads the
 * contention table for it) gathers them (after lockstat_flush_counts());
 * the array lives until the next call.
 */
struct pf_rstack {
	const struct pf_stack *s;
	uint64_t count, wait_ns;
	unsigned site;
};
unsigned pf_report_stacks(const struct pf_rstack **out);

/* The stacks as a gzip'd pprof profile (of the time since t0,
 * qc_now_ns()), or as folded stacks, written to `path` (%p = the pid;
 * replaced) (pprof.c).  False: out of memory. */
bool pf_write_pprof(const char *path, uint64_t t0);
bool pf_write_folded(const char *path);

#endif /* QLOCK_SHIM_STACKS_H */
