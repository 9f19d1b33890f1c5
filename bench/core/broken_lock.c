/* SPDX-License-Identifier: MIT */
/*
 * dev-broken: a lock without mutual exclusion, so that a test can prove
 * lockbench's verification catches one (lockbench_verify_catches_broken_lock).
 * Built into the test-only lockbench_dev, never into the installed lockbench
 * (bench/core/locks.c looks it up after the registry).
 */
#include <stdint.h>

#include "lockreg.h"

static void db_lock(void *l) { (void)l; }
static void db_unlock(void *l) { (void)l; }

const struct lr_lock lb_dev_locks[] = {
	{ .name = "dev-broken", .desc = "dev only: no mutual exclusion at all",
	  .kind = LR_MUTEX, .size = sizeof(uint32_t),
	  .lock = db_lock, .unlock = db_unlock },
	{ .name = NULL },
};
