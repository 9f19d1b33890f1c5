/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's set-up (config.c): on the first call of any entry point,
 * glibc's functions are looked up, the environment read, the algorithm
 * of each object class chosen (state.h) and the fork, statistics and
 * lockdep units set up.
 */
#ifndef QLOCK_SHIM_CONFIG_H
#define QLOCK_SHIM_CONFIG_H

#include "core/atomic.h"
#include "state.h"

void shim_setup(void);

static inline void ready(void)
{
	if (qa_unlikely(qa_read_acquire(&shim_state) != 2))
		shim_setup();
}

/* Which algorithm serves "mutex", "rwlock", "spin" or "cond", after the
 * set-up (exported: tests and diagnostics ask it). */
EXPORT const char *qlock_pthread_algorithm(const char *what);

#endif /* QLOCK_SHIM_CONFIG_H */
