/* SPDX-License-Identifier: MIT */
/*
 * The live deadlock report: a watchdog thread that, once a second, looks
 * at what every thread waits for and holds, and when each thread of a
 * waits-for cycle has been blocked for QLOCK_DEADLOCK_AFTER seconds (10 by
 * default; 0 = off), prints the cycle on stderr, once: each thread's
 * waiting call site and the holder's locking call site.
 *
 * The watchdog is fed by a snapshot function: the profile's thread records
 * (contention.c, QLOCK_PROFILE) or lockdep's held-lock stacks register one
 * with shim_deadlock_setup() (the last registered serves).  It starts at
 * the first contended wait after that (shim_deadlock_arm(), from the
 * waiting thread; cheap after the first call), so a program that never
 * blocks on a lock never gets the extra thread.  It blocks every signal,
 * and does not exist in a fork child.
 */
#ifndef QLOCK_SHIM_DEADLOCK_H
#define QLOCK_SHIM_DEADLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DL_HELD 16      /* held locks a view carries */
#define DL_THREADS 1024 /* threads a snapshot holds */

/* Lock kinds, as lockstat_kind and lockdep's ld_obj number them. */
#define DL_MUTEX 0
#define DL_RWLOCK_READ 1
#define DL_RWLOCK_WRITE 2
#define DL_SPIN 3

struct dl_held {
	uintptr_t lock;     /* the pthread object */
	uintptr_t pc;       /* the return address of the call that took it */
	uint32_t kind;      /* DL_* */
};

/* One thread, as the snapshot function saw it. */
struct dl_view {
	int32_t tid;
	uintptr_t wait_lock;  /* 0: not waiting for a lock */
	uintptr_t wait_pc;    /* the call that waits */
	uint32_t wait_kind;   /* DL_* */
	uint32_t wait_behind; /* a read that queues behind waiting writers
			       * (a writer-preferring rwlock) */
	uint64_t wait_seq;    /* differs between two waits of the thread */
	unsigned nheld;
	struct dl_held held[DL_HELD];
};

/* Fill v[0 .. max-1] with the threads that hold or wait for locks; return
 * how many.  Runs on the watchdog thread, concurrently with the threads:
 * a thread's view must be consistent when that thread is blocked (its
 * waiting state read before and after its held locks, unchanged). */
typedef unsigned (*dl_snapshot_fn)(struct dl_view *v, unsigned max);
/* Describe a lock for the report (e.g. "first locked at f (x.c:3)"), or
 * leave buf empty; may be NULL. */
typedef void (*dl_describe_fn)(uintptr_t lock, uint32_t kind, char *buf, size_t len);

/* Copy n bytes at src, which another thread may have freed or unmapped
 * meanwhile, to dst: false when they cannot be read.  For a snapshot
 * function that reads lock objects (process_vm_readv(2) on this process,
 * which fails on an unmapped page; where that call is refused, a plain
 * copy). */
bool shim_peek(void *dst, const volatile void *src, size_t n);

/* Register the source (reads QLOCK_DEADLOCK_AFTER; at set-up). */
void shim_deadlock_setup(dl_snapshot_fn snap, dl_describe_fn describe);
/* A thread is about to block for a lock: start the watchdog if it is not
 * running yet. */
void shim_deadlock_arm(void);

#endif /* QLOCK_SHIM_DEADLOCK_H */
