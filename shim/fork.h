/* SPDX-License-Identifier: MIT */
/*
 * fork() in the child (fork.c): a generation that every fork bumps in
 * the child, and the claim an object's repair takes, so that the first
 * thread to find an object of an older generation repairs it alone
 * (mutex.c, cond.c).
 */
#ifndef QLOCK_SHIM_FORK_H
#define QLOCK_SHIM_FORK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"

#define GEN_BUSY UINT32_MAX
#define SHIM_FORK_ALIVE 1u
extern uint32_t shim_forkgen;
extern uint32_t *shim_fork_alive; /* 0 in a fork child until noticed */
/* Set-up, once: the page that tells a child from its parent. */
void shim_fork_setup(void);
/* The pthread_atfork child handler. */
void shim_atfork_child(void);
void shim_fork_noticed(void);
bool shim_fork_claim(uint32_t *gen, uint32_t g);
void shim_fork_repaired(uint32_t *gen, uint32_t g);

/* The current fork generation, bumped first if this is a child that has
 * not noticed its fork yet. */
static inline uint32_t shim_fork_check(void)
{
	if (qa_unlikely(qa_read_acquire(qa_read_acquire(&shim_fork_alive)) !=
			SHIM_FORK_ALIVE))
		shim_fork_noticed();
	return qa_read(&shim_forkgen);
}

#endif /* QLOCK_SHIM_FORK_H */
