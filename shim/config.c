/* SPDX-License-Identifier: MIT */
/*
 * The drop-in's configuration: which algorithm serves each object class
 * (QLOCK_MUTEX, QLOCK_RWLOCK, QLOCK_SPIN), glibc's functions, and the
 * one-time set-up every entry point runs first (config.h).  What it
 * decides is kept in state.h.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fork.h"
#include "lockdep.h"
#include "qlock/qlock.h"
#include "state.h"
#include "exit_report.h"

static bool malg_built(enum shim_malg a)
{
	switch (a) {
	case MALG_GLIBC:
	case MALG_QSPINLOCK:
		return true;
#ifdef SHIM_WITH_TP
	case MALG_TP:
		return true;
#endif
	default:
		return false;
	}
}

static bool ralg_built(enum shim_ralg a)
{
	switch (a) {
	case RALG_GLIBC:
		return true;
#ifdef SHIM_WITH_QRWLOCK
	case RALG_QRWLOCK:
		return true;
#endif
#ifdef SHIM_WITH_RWSEM
	case RALG_RWSEM:
		return true;
#endif
#ifdef SHIM_WITH_TP
	case RALG_TP:
		return true;
#endif
	default:
		return false;
	}
}

/* Defaults: the best algorithm built in (see docs/pthread-dropin.md). */
static enum shim_malg malg_default(void)
{
#ifdef SHIM_WITH_TP
	return MALG_TP;
#else
	return MALG_QSPINLOCK;
#endif
}

/* The qrwlock: in the drop-in map (docs/performance.md) it is ahead of the
 * TP rwlock wherever readers share the lock (its readers take it with one
 * fetch_add; the TP word holds a writer's tid, so TP readers need a
 * cmpxchg), as fair, with shorter maximum waits. */
static enum shim_ralg ralg_default(void)
{
#if defined(SHIM_WITH_QRWLOCK)
	return RALG_QRWLOCK;
#elif defined(SHIM_WITH_TP)
	return RALG_TP;
#elif defined(SHIM_WITH_RWSEM)
	return RALG_RWSEM;
#else
	return RALG_GLIBC;
#endif
}

static int pick(const char *var, const char *const *names, int nr,
		bool (*built)(int), int dflt)
{
	const char *v = getenv(var);
	/* Never null for a built default; said so for the compiler, whose
	 * -O3 inlining otherwise sees names[dflt] as possibly null. */
	const char *dname = names[dflt] ? names[dflt] : "?";

	if (!v || !*v)
		return dflt;
	for (int i = 0; i < nr; i++)
		if (names[i] && strcmp(v, names[i]) == 0 && built(i))
			return i;
	fprintf(stderr, "libqlock-pthread: %s=%s is not available here; "
		"using %s (choices:", var, v, dname);
	for (int i = 0; i < nr; i++)
		if (names[i] && built(i))
			fprintf(stderr, " %s", names[i]);
	fprintf(stderr, ")\n");
	return dflt;
}

static bool malg_built_i(int a) { return malg_built((enum shim_malg)a); }
static bool ralg_built_i(int a) { return ralg_built((enum shim_ralg)a); }
static bool salg_built_i(int a) { return a >= 0 && a < SALG_NR; }


/* The drop-in's own defaults, where the environment sets none.
 * QLOCK_HANDOFF_NS 1 ms instead of the library's 4 ms (the kernel rwsem's
 * RWSEM_WAIT_TIMEOUT, which the seed presets keep): in the drop-in map
 * (docs/performance.md, "Defaults and why") 1 ms raised the slowest
 * thread's share in the lock-bound oversubscribed mutex cells (32 threads,
 * cs 200, gap 0: 21 % against 11 % of the mean; 8 threads: 55 % against
 * 14 %) at the same throughput (within the A/A noise in every cell). */
#define SHIM_HANDOFF_NS 1000000L

static void shim_tune_defaults(void)
{
	const char *v = getenv("QLOCK_HANDOFF_NS");

	if (!v || !*v)
		(void)qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, SHIM_HANDOFF_NS);
}

/* QLOCK_RWLOCK_BIAS=1 turns the rwlocks' read bias on (rwlock.c).  Off
 * by default: on a shared 2-CPU machine it has not yet lifted a
 * read-mostly cell out of glibc's A/A band and it costs write-heavy cells
 * (docs/performance.md "Read bias"). */
static __attribute__((noinline)) uint8_t rwlock_bias_default(void)
{
	const char *v = getenv("QLOCK_RWLOCK_BIAS");

	return shim_ralg != RALG_GLIBC && v && strcmp(v, "1") == 0;
}

void shim_setup(void)
{
	int expect = 0;

	if (!qa_try_cmpxchg_acquire(&shim_state, &expect, 1)) {
		/* Someone else sets up; dlsym/getenv do not take pthread
		 * locks, so this wait is short and cannot recurse. */
		while (qa_read_acquire(&shim_state) != 2)
			sched_yield();
		return;
	}
#define X(name, ret, args) real.name = (ret(*) args)dlsym(RTLD_NEXT, #name);
	REAL_LIST(X)
#undef X
	shim_malg = (enum shim_malg)pick("QLOCK_MUTEX", shim_malg_names, MALG_NR,
					 malg_built_i, malg_default());
	shim_ralg = (enum shim_ralg)pick("QLOCK_RWLOCK", shim_ralg_names, RALG_NR,
					 ralg_built_i, ralg_default());
	shim_salg = (enum shim_salg)pick("QLOCK_SPIN", shim_salg_names, SALG_NR,
					 salg_built_i, SALG_QSPINLOCK);
	shim_tune_defaults();
	(void)qlock_set_misuse_handler(shim_on_misuse);
	shim_fork_setup();
	(void)pthread_atfork(NULL, NULL, shim_atfork_child);
	shim_stats_setup();
	shim_lockdep_setup();
	uint8_t fast = (uint8_t)(shim_lockdep_on ? 0u
			   : shim_stats_on ? SHIM_FAST_ON | SHIM_FAST_COUNT
			   : SHIM_FAST_ON);

	qa_write(&shim_mutex_fast, shim_malg == MALG_TP ? fast : 0u);
	qa_write(&shim_rwlock_bias, rwlock_bias_default());
	qa_write(&shim_rwlock_fast, shim_ralg == RALG_TP ||
				     shim_ralg == RALG_QRWLOCK ? fast : 0u);
	qa_write_release(&shim_state, 2);
}

__attribute__((constructor)) static void shim_ctor(void)
{
	ready();
}

/* Which algorithm serves each object class (tests, diagnostics). */
EXPORT const char *qlock_pthread_algorithm(const char *what)
{
	ready();
	return shim_alg_name(what);
}
