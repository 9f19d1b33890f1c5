/* SPDX-License-Identifier: MIT */
/*
 * The lock registry: every lock the benchmark and the test rig know, as
 * one table of uniform operations.  Lock families plug in by adding a
 * reg_<family>.c that defines a `const struct lr_lock lr_<family>[]`
 * array ended by an entry with name == NULL, and one line in lockreg.c.
 *
 * Operations take `void *` to the lock object, which the caller allocates
 * (size bytes, 64-byte aligned, zeroed) and passes to init first.
 */
#ifndef QLOCK_HARNESS_LOCKREG_H
#define QLOCK_HARNESS_LOCKREG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

enum lr_kind {
	LR_MUTEX,  /* exclusive only: read ops are NULL */
	LR_RWLOCK, /* shared and exclusive */
};

enum lr_flags {
	/* Waiters never sleep: oversubscribed runs can crawl, so tests and
	 * presets scale their work down (pure spinlocks, on purpose). */
	LR_SPIN_ONLY = 1u << 0,
	/* Readers may starve writers, or writers readers, by design (glibc's
	 * reader-preferring rwlock): starvation checks skip that side. */
	LR_MAY_STARVE_WRITERS = 1u << 1,
	LR_MAY_STARVE_READERS = 1u << 2,
	/* Only built when an optional dependency was found (CK). */
	LR_OPTIONAL = 1u << 3,
};

struct lr_lock {
	const char *name;  /* lockbench name, e.g. "ww-mutex" */
	const char *desc;  /* one line for --list */
	enum lr_kind kind;
	unsigned flags;    /* enum lr_flags */
	size_t size;       /* bytes of the lock object */
	const char *stats_class; /* qc class name for counters, or NULL */

	/* 0 or an errno value. */
	int (*init)(void *l);
	void (*destroy)(void *l);

	void (*lock)(void *l);
	void (*unlock)(void *l);
	/* true when taken; NULL when the lock has no trylock. */
	bool (*trylock)(void *l);
	/* 0, or ETIMEDOUT once the CLOCK_MONOTONIC deadline passed; NULL
	 * when the lock has no timed lock. */
	int (*timedlock)(void *l, const struct timespec *abs);

	/* Shared mode, LR_RWLOCK only. */
	void (*rdlock)(void *l);
	void (*rdunlock)(void *l);
	bool (*tryrdlock)(void *l);
	int (*timedrdlock)(void *l, const struct timespec *abs);
};

/* Every registered lock, in --list order. */
size_t lr_count(void);
const struct lr_lock *lr_at(size_t i);
/* The lock with this name, or NULL. */
const struct lr_lock *lr_find(const char *name);

/* Allocate and init a lock object (64-byte aligned; its own cache
 * line(s)); NULL with errno set on failure.  lr_free destroys and frees. */
void *lr_new(const struct lr_lock *lk);
void lr_free(const struct lr_lock *lk, void *l);

#endif /* QLOCK_HARNESS_LOCKREG_H */
