/* SPDX-License-Identifier: MIT */
/*
 * Internal: the rwsem's count word layout (for tests) and the wake-up
 * variant of seed 002's "before" (rwsem-wake-front: an unlock whose first
 * waiter is a reader wakes only the readers in front of the first queued
 * writer).  Built from the same slow path as the public qlock_* functions
 * in src/lock/rwsem.c; the public ones are seed 002's "after".
 */
#ifndef QLOCK_LOCK_RWSEM_VARIANTS_H
#define QLOCK_LOCK_RWSEM_VARIANTS_H

#include "qlock/rwsem.h"

#define QRWSEM_WRITER_LOCKED  0x00000001u
#define QRWSEM_FLAG_WAITERS   0x00000002u
#define QRWSEM_FLAG_HANDOFF   0x00000004u
#define QRWSEM_READER_SHIFT   8
#define QRWSEM_READER_BIAS    (1u << QRWSEM_READER_SHIFT)
#define QRWSEM_FLAG_READFAIL  0x80000000u
#define QRWSEM_READER_MASK    (~(QRWSEM_READER_BIAS - 1) & ~QRWSEM_FLAG_READFAIL)
#define QRWSEM_LOCK_MASK      (QRWSEM_WRITER_LOCKED | QRWSEM_READER_MASK)
/* The reader count is full: bit 30 (2^22 readers, one more than
 * QLOCK_RWSEM_MAX_READERS) or the READFAIL guard above it. */
#define QRWSEM_READ_FULL      (0x40000000u | QRWSEM_FLAG_READFAIL)
#define QRWSEM_READ_FAILED_MASK (QRWSEM_WRITER_LOCKED | QRWSEM_FLAG_WAITERS | \
				 QRWSEM_FLAG_HANDOFF | QRWSEM_READ_FULL)

/* owner field flags */
#define QRWSEM_READER_OWNED   ((uintptr_t)1)
#define QRWSEM_NONSPINNABLE   ((uintptr_t)2)
#define QRWSEM_OWNER_FLAGS    ((uintptr_t)3)

/* Most readers one wake-up grants the lock to (the kernel's 256). */
#define QRWSEM_MAX_READERS_WAKEUP 256

void qrwsem_front_down_read(qlock_rwsem_t *sem);
int qrwsem_front_down_read_timed(qlock_rwsem_t *sem, const struct timespec *abs,
				 clockid_t clk);
void qrwsem_front_up_read(qlock_rwsem_t *sem);
void qrwsem_front_down_write(qlock_rwsem_t *sem);
int qrwsem_front_down_write_timed(qlock_rwsem_t *sem, const struct timespec *abs,
				  clockid_t clk);
void qrwsem_front_up_write(qlock_rwsem_t *sem);
void qrwsem_front_downgrade_write(qlock_rwsem_t *sem);
/* The trylocks never wake anyone: the public ones serve both variants. */

/*
 * Tests: the wait queue as a string, first waiter first, 'R' per reader
 * and 'W' per writer (at most n - 1 of them, NUL-terminated), taken under
 * the wait lock.  Returns the queue length.
 */
unsigned qrwsem_queue_snapshot(qlock_rwsem_t *sem, char *buf, unsigned n);

#endif /* QLOCK_LOCK_RWSEM_VARIANTS_H */
