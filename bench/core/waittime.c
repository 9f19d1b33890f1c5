/* SPDX-License-Identifier: MIT */
/* Wait-time histograms and the timestamp's calibration (waittime.h). */
#include <time.h>

#include "lb.h"
#include "waittime.h"

void lb_wait_merge(struct lb_wait_hist *into, const struct lb_wait_hist *h)
{
	for (unsigned i = 0; i < LB_WAIT_BUCKETS; i++)
		into->n[i] += h->n[i];
	into->count += h->count;
	if (h->max > into->max)
		into->max = h->max;
}

/* Largest value that falls in bucket b. */
static uint64_t lb_wait_bucket_top(unsigned b)
{
	unsigned e, m;

	if (b < (1u << LB_WAIT_SUB_BITS))
		return b;
	e = (b >> LB_WAIT_SUB_BITS) + LB_WAIT_SUB_BITS - 1;
	m = b & ((1u << LB_WAIT_SUB_BITS) - 1);
	if (e >= 63)
		return UINT64_MAX;
	return (((uint64_t)((1u << LB_WAIT_SUB_BITS) | m) + 1)
		<< (e - LB_WAIT_SUB_BITS)) - 1;
}

double lb_wait_quantile_ns(const struct lb_wait_hist *h, double q)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return -1;
	want = (uint64_t)(q * (double)h->count + 0.5);
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < LB_WAIT_BUCKETS; b++) {
		seen += h->n[b];
		if (seen >= want) {
			uint64_t top = lb_wait_bucket_top(b);

			return (double)(top < h->max ? top : h->max) /
			       lb_stamp_ticks_per_ns();
		}
	}
	return lb_wait_max_ns(h);
}

double lb_wait_max_ns(const struct lb_wait_hist *h)
{
	return h->count ? (double)h->max / lb_stamp_ticks_per_ns() : -1;
}

const char *lb_stamp_source(void)
{
#if defined(__x86_64__)
	return "rdtsc";
#else
	return "clock_gettime(CLOCK_MONOTONIC)";
#endif
}

double lb_stamp_ticks_per_ns(void)
{
	static double tpn;

	if (tpn == 0) {
		uint64_t n0 = qc_now_ns(), s0 = lb_stamp(), n1, s1;
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
		n1 = qc_now_ns();
		s1 = lb_stamp();
		tpn = n1 > n0 && s1 > s0 ? (double)(s1 - s0) / (double)(n1 - n0)
					 : 1;
	}
	return tpn;
}

double lb_stamp_cost_ns(void)
{
	static double cost = -1;
	double v[9];

	if (cost >= 0)
		return cost;
	for (unsigned r = 0; r < 9; r++) {
		uint64_t t0 = qc_now_ns();
		volatile uint64_t sink = 0;

		for (unsigned i = 0; i < 100000; i++)
			sink += lb_stamp();
		(void)sink;
		v[r] = (double)(qc_now_ns() - t0) / 100000.0;
	}
	return cost = lb_median(v, 9);
}
