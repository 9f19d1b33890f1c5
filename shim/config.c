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
#include "contention.h"
#include "fork.h"
#include "lockdep.h"
#include "qlock/qlock.h"
#include "state.h"
#include "exit_report.h"

/* The defaults (docs/pthread-dropin.md): mutexes on the TP mutex; rwlocks
 * on the qrwlock, which in the drop-in map (docs/performance.md) is ahead
 * of the TP rwlock wherever readers share the lock (its readers take it
 * with one fetch_add; the TP word holds a writer's tid, so TP readers need
 * a cmpxchg), as fair, with shorter maximum waits; spinlocks on the
 * qspinlock. */
static int pick(const char *var, const char *const *names, int nr, int dflt)
{
	const char *v = getenv(var);
	/* Never null; said so for the compiler, whose -O3 inlining otherwise
	 * sees names[dflt] as possibly null. */
	const char *dname = names[dflt] ? names[dflt] : "?";

	if (!v || !*v)
		return dflt;
	for (int i = 0; i < nr; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	fprintf(stderr, "libqlock-pthread: %s=%s is unknown; "
		"using %s (choices:", var, v, dname);
	for (int i = 0; i < nr; i++)
		fprintf(stderr, " %s", names[i]);
	fprintf(stderr, ")\n");
	return dflt;
}

/* The drop-in's own defaults, where the environment sets none.
 * QLOCK_HANDOFF_NS 1 ms instead of the library's 4 ms (the kernel rwsem's
 * RWSEM_WAIT_TIMEOUT, which the seed presets keep): in the drop-in map it
 * raised the slowest thread's share in the lock-bound oversubscribed
 * mutex cells at the same throughput (docs/performance.md, "Defaults and
 * why"). */
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

/*
 * This thread runs the set-up and has made the choices the lock paths read
 * (glibc's functions, the algorithms, the tunables).  The diagnostics'
 * set-up loads the unwinder (dlopen), which allocates; a program whose
 * allocator locks a pthread mutex comes back into the drop-in on this
 * thread, and must not wait for the set-up it is part of: its call goes
 * on through the general paths (the fast paths and the diagnostics are
 * switched on only at the end).
 */
static __thread bool shim_setup_mine __attribute__((tls_model("initial-exec")));

void shim_setup(void)
{
	int expect = 0;

	if (!qa_try_cmpxchg_acquire(&shim_state, &expect, 1)) {
		if (shim_setup_mine)
			return;
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
					 MALG_TP);
	shim_ralg = (enum shim_ralg)pick("QLOCK_RWLOCK", shim_ralg_names, RALG_NR,
					 RALG_QRWLOCK);
	shim_salg = (enum shim_salg)pick("QLOCK_SPIN", shim_salg_names, SALG_NR,
					 SALG_QSPINLOCK);
	shim_tune_defaults();
	shim_setup_mine = true;
	(void)qlock_set_misuse_handler(shim_on_misuse);
	shim_fork_setup();
	(void)pthread_atfork(NULL, NULL, shim_atfork_child);
	shim_stats_setup();
	shim_lockdep_setup();
	uint8_t fast = (uint8_t)(shim_lockdep_on ? (shim_stats_on ? 0u : SHIM_FAST_LOCKDEP)
			   : shim_stats_on ? SHIM_FAST_COUNT |
						     (shim_profile_on ? SHIM_FAST_PROFILE
								      : SHIM_FAST_ON)
			   : SHIM_FAST_ON);

	qa_write(&shim_mutex_fast, shim_malg == MALG_TP ? fast : 0u);
	qa_write(&shim_rwlock_bias, rwlock_bias_default());
	qa_write(&shim_rwlock_fast, shim_ralg == RALG_TP ||
				     shim_ralg == RALG_QRWLOCK ? fast : 0u);
	shim_setup_mine = false;
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
