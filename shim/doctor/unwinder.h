/* SPDX-License-Identifier: MIT */
/*
 * libgcc's unwinder, the one glibc's backtrace() loads (at its first
 * call) and walks with, called directly by the doctor's stack captures
 * (lockdep.c, stacks.c) so that a walk stops at the last frame a capture
 * keeps: backtrace() walks as many frames as it is asked for, and each
 * frame costs the unwinder a look-up of its unwind table and a run of its
 * call-frame program (about 2,000 instructions).
 */
#ifndef QLOCK_SHIM_UNWINDER_H
#define QLOCK_SHIM_UNWINDER_H

#include <stdbool.h>
#include <stdint.h>
#include <unwind.h>

struct shim_unwinder {
	_Unwind_Reason_Code (*backtrace)(_Unwind_Trace_Fn, void *);
	_Unwind_Ptr (*get_ip)(struct _Unwind_Context *);
	_Unwind_Word (*get_cfa)(struct _Unwind_Context *);
};

/* Where a walk is: the last frame's address and canonical frame address,
 * and how many frames it has seen. */
struct shim_unwind_at {
	uintptr_t ip;
	_Unwind_Word cfa;
	unsigned n;
};

/* A walk's callback reached ctx: its frame's address into *ip, and false
 * at the end backtrace() finds there too, a frame that makes no progress
 * (the same address and CFA again). */
static inline bool shim_unwind_step(const struct shim_unwinder *u, struct _Unwind_Context *ctx,
				    struct shim_unwind_at *at, uintptr_t *ip)
{
	uintptr_t i = (uintptr_t)u->get_ip(ctx);
	_Unwind_Word cfa = u->get_cfa(ctx);

	if (at->n > 0 && i == at->ip && cfa == at->cfa)
		return false;
	at->ip = i;
	at->cfa = cfa;
	at->n++;
	*ip = i;
	return true;
}

/* The unwinder's entry points into *u; call after a first backtrace(),
 * which loads it.  u->backtrace stays NULL when they are not all found
 * (the caller then uses backtrace()). */
void shim_unwinder_find(struct shim_unwinder *u);

#endif /* QLOCK_SHIM_UNWINDER_H */
