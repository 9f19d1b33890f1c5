/* SPDX-License-Identifier: MIT */
/*
 * fork() in the child: the generation by which the first thread that finds
 * a queued mutex (mutex.c) or a condition variable (cond.c) of the parent
 * repairs it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fork.h"

/*
 * fork(): the child has only the forking thread, but a queued lock may
 * still record waiters of the parent's other threads (a qspinlock tail,
 * the TP mutex's serial word, a SLOW byte, a WAITERS bit, a condvar's
 * waiter count); the first child thread to contend would wait behind a
 * ghost forever.  So every fork bumps a generation in the child, each
 * object remembers the generation it was last checked in, and the first
 * thread that finds a mutex contended (or unlocks it) in a new generation
 * repairs it: it keeps "held" and drops all waiter state.  The
 * uncontended lock path does not look at it; unlock pays three loads.
 * Spinlocks (4 bytes) have no room for a generation: re-initialise them
 * in the child.
 *
 * The fork is noticed without help from pthread_atfork: the handlers of a
 * library loaded before the shim was set up run first in the child, and
 * may unlock their mutex there.  A word in a MADV_WIPEONFORK page reads
 * ALIVE in the process that set it and 0 in every child (the kernel hands
 * the child a zeroed page), so the first look at it in a child bumps the
 * generation.  Kernels before 4.14 refuse the advice; then the atfork
 * child handler bumps it (and handler order matters again).
 */
#define FORK_BUMPING 2u

uint32_t shim_forkgen;
static uint32_t fork_alive_fallback = SHIM_FORK_ALIVE;
uint32_t *shim_fork_alive = &fork_alive_fallback;
static bool fork_wipes; /* the page is wiped in a child */
static pid_t fork_noticed_pid; /* the process that last saw the wiped page */

static void fork_bump(void)
{
	uint32_t g = qa_read(&shim_forkgen) + 1;

	qa_write(&shim_forkgen, g == GEN_BUSY ? 0 : g);
}

void shim_fork_setup(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (madvise(p, (size_t)psz, MADV_WIPEONFORK) != 0) {
		(void)munmap(p, (size_t)psz);
		return;
	}
	qa_write((uint32_t *)p, SHIM_FORK_ALIVE);
	fork_wipes = true;
	qa_write_release(&shim_fork_alive, (uint32_t *)p);
}

/* The first thread to see the wiped word bumps the generation; others
 * wait the few instructions that takes (release/acquire: the new
 * generation is visible to whoever sees ALIVE again). */
__attribute__((noinline)) void shim_fork_noticed(void)
{
	uint32_t *alive = shim_fork_alive, s = 0;

	if (qa_try_cmpxchg_acquire(alive, &s, FORK_BUMPING)) {
		qa_write(&fork_noticed_pid, getpid());
		fork_bump();
		qa_write_release(alive, SHIM_FORK_ALIVE);
		return;
	}
	while (qa_read_acquire(alive) != SHIM_FORK_ALIVE)
		sched_yield();
}

/*
 * In the child, the page must have been wiped, so the check notices the
 * fork now unless a lock call noticed it first (both record this pid).
 * If neither did, the advice was accepted but not carried out (qemu-user
 * answers madvise with success and ignores it): count the fork here and
 * rely on this handler from now on.
 */
void shim_atfork_child(void)
{
	if (fork_wipes) {
		shim_fork_check();
		if (qa_read(&fork_noticed_pid) == getpid())
			return;
		fork_wipes = false;
	}
	fork_bump();
}

/* Claim the repair of an object whose generation is not `g`: true = ours
 * to repair (its generation word reads BUSY until shim_fork_repaired());
 * false = it is, or has just been made, current. */
bool shim_fork_claim(uint32_t *gen, uint32_t g)
{
	uint32_t cur;

	for (;;) {
		cur = qa_read_acquire(gen);
		if (cur == g)
			return false;
		if (cur == GEN_BUSY) {
			sched_yield();
			continue;
		}
		if (qa_try_cmpxchg_acquire(gen, &cur, GEN_BUSY))
			return true;
	}
}

void shim_fork_repaired(uint32_t *gen, uint32_t g)
{
	qa_write_release(gen, g);
}
