/* SPDX-License-Identifier: MIT */
/*
 * A CLOCK_MONOTONIC that never advances, preloaded after the drop-in: what
 * a faked or failing clock looks like to the statistics' clock set-up
 * (ticks.c), which must not wait for it to move (qlock_run.sh).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);

	if (clk == CLOCK_MONOTONIC) {
		ts->tv_sec = 1000;
		ts->tv_nsec = 0;
		return 0;
	}
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	return real(clk, ts);
}
