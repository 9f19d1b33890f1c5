/* SPDX-License-Identifier: MIT */
/*
 * Acquisition wait times for lockbench map: a cheap timestamp taken just
 * before the lock call and just after it returns, and a log-linear
 * histogram per worker (8 sub-buckets per power of two: quantiles within
 * 12.5%, the maximum exact).
 *
 * The timestamp is the TSC (rdtsc, not serialising: it may move by a few
 * instructions, which is far below the waits that matter) on x86-64, and
 * clock_gettime(CLOCK_MONOTONIC) (vDSO) elsewhere.  Both stamps of a pair
 * are taken by the same thread, so an unsynchronised TSC across CPUs only
 * matters when the thread migrates inside the lock call.  Its cost, added
 * once per operation outside the critical section and once inside it, is
 * measured by lb_stamp_cost_ns() and printed with every map.
 */
#ifndef QLOCK_BENCH_WAITTIME_H
#define QLOCK_BENCH_WAITTIME_H

#include <stdint.h>

#include "core/futex.h"

#define LB_WAIT_SUB_BITS 3
#define LB_WAIT_BUCKETS (64 << LB_WAIT_SUB_BITS)

struct lb_wait_hist {
	uint64_t n[LB_WAIT_BUCKETS];
	uint64_t count, max;   /* in stamp ticks */
};

static inline uint64_t lb_stamp(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return qc_now_ns();
#endif
}

/* Bucket of a value: exact below 2^SUB_BITS, then SUB_BITS bits of
 * mantissa per power of two. */
static inline unsigned lb_wait_bucket(uint64_t v)
{
	unsigned e;

	if (v < (1u << LB_WAIT_SUB_BITS))
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
	return ((e - LB_WAIT_SUB_BITS + 1) << LB_WAIT_SUB_BITS) |
	       (unsigned)((v >> (e - LB_WAIT_SUB_BITS)) &
			  ((1u << LB_WAIT_SUB_BITS) - 1));
}

static inline void lb_wait_add(struct lb_wait_hist *h, uint64_t ticks)
{
	h->n[lb_wait_bucket(ticks)]++;
	h->count++;
	if (ticks > h->max)
		h->max = ticks;
}

void lb_wait_merge(struct lb_wait_hist *into, const struct lb_wait_hist *h);
/* The q-quantile (0 < q <= 1) in ns (upper edge of its bucket, clamped
 * to the maximum); -1 for an empty histogram. */
double lb_wait_quantile_ns(const struct lb_wait_hist *h, double q);
double lb_wait_max_ns(const struct lb_wait_hist *h);
/* "rdtsc" or "clock_gettime(CLOCK_MONOTONIC)". */
const char *lb_stamp_source(void);
/* Ticks per ns (1 for clock_gettime), calibrated once against
 * CLOCK_MONOTONIC over 20 ms. */
double lb_stamp_ticks_per_ns(void);
/* Median cost of one lb_stamp() call in ns, measured once. */
double lb_stamp_cost_ns(void);

#endif /* QLOCK_BENCH_WAITTIME_H */
