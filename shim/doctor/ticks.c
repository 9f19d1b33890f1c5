/* SPDX-License-Identifier: MIT */
/*
 * The statistics' clock (ticks.h): is the TSC the kernel's own clock, and
 * at what rate does it run?
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "ticks.h"

#define TICKS_CALIBRATE_NS 50000u

bool ticks_tsc;
uint64_t ticks_mult;

#if defined(__x86_64__)
/* The kernel keeps time with the TSC only when it found it invariant
 * and in step on every CPU; a VM whose host cannot promise that gets
 * another clocksource. */
static bool tsc_is_clocksource(void)
{
	char buf[32] = { 0 };
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
}

static bool tsc_invariant(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return d & (1u << 8);
}

/* A (TSC, CLOCK_MONOTONIC) pair read as close together as the CPU
 * allows: the tightest of three. */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t a = __rdtsc(), t = qc_now_ns(), b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = t;
		}
	}
}
#endif

void ticks_setup(void)
{
#if defined(__x86_64__)
	uint64_t c0 = 0, n0 = 0, c1 = 0, n1 = 0;

	if (!tsc_invariant() || !tsc_is_clocksource())
		return;
	/* Both clocks run between the two pairs, however long the thread
	 * is off the CPU there: only the pairs' tightness limits the
	 * rate's error, typically a few ns in TICKS_CALIBRATE_NS (under
	 * 0.02 %).  A short spin, not a sleep: every process started with
	 * the statistics on pays for it (a 1 ms sleep costs 1.4 ms).  The
	 * spin also ends after as many TSC cycles as 20 GHz would make in
	 * that time, so a monotonic clock that does not advance (a faked
	 * or failing clock_gettime()) cannot hold it: the rate check
	 * below then refuses the TSC. */
	tsc_pair(&c0, &n0);
	do
		tsc_pair(&c1, &n1);
	while (n1 - n0 < TICKS_CALIBRATE_NS && c1 - c0 < 20ull * TICKS_CALIBRATE_NS);
	/* A rate outside 0.05-20 GHz means a TSC not worth trusting. */
	if (c1 <= c0 || n1 <= n0)
		return;
	unsigned __int128 mult = ((unsigned __int128)(n1 - n0) << 32) / (c1 - c0);

	if (mult < ((unsigned __int128)1 << 32) / 20 || mult > ((unsigned __int128)20 << 32))
		return;
	ticks_mult = (uint64_t)mult;
	ticks_tsc = true;
#endif
}
