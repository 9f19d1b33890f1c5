/* SPDX-License-Identifier: MIT */
/*
 * The statistics' clock: a cheap time stamp for the waits and holds they
 * time, some of it read while the lock is held.  Where the kernel keeps
 * its own time with the TSC (x86-64, clocksource "tsc": invariant and
 * synchronised across CPUs), ticks_now() is one RDTSC, where the vDSO's
 * clock_gettime() adds a fence and the scaling to the same instruction;
 * elsewhere it is qc_now_ns().  ticks_ns() turns a difference of two
 * into nanoseconds with the rate measured at set-up against
 * CLOCK_MONOTONIC.  RDTSC is not ordered against the loads around it, so
 * a stamp may move by the few nanoseconds the CPU runs ahead: nothing a
 * wait histogram of power-of-two buckets sees.
 */
#ifndef QLOCK_SHIM_TICKS_H
#define QLOCK_SHIM_TICKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/futex.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* Set up by ticks_setup(): true when ticks are TSC cycles; the rate in
 * nanoseconds per tick, times 2^32. */
extern bool ticks_tsc;
extern uint64_t ticks_mult;

/* Decide the clock (and measure the TSC's rate: a 50 us spin); call
 * once, before any stamp is taken. */
void ticks_setup(void);

static inline uint64_t ticks_now(void)
{
#if defined(__x86_64__)
	if (ticks_tsc)
		return __rdtsc();
#endif
	return qc_now_ns();
}

/* Nanoseconds from stamp t0 to stamp t1 (0 if t1 is earlier: a thread
 * that moved CPU may see a stamp a few cycles behind). */
static inline uint64_t ticks_ns(uint64_t t0, uint64_t t1)
{
	if (t1 <= t0)
		return 0;
	if (!ticks_tsc)
		return t1 - t0;
	return (uint64_t)(((unsigned __int128)(t1 - t0) * ticks_mult) >> 32);
}

#endif /* QLOCK_SHIM_TICKS_H */
