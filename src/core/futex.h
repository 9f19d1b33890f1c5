/* SPDX-License-Identifier: MIT */
/*
 * Futex layer: wait and wake on 32-bit words, private to the process,
 * counted per lock class and operation (see lockevent.h).
 *
 * qc_futex_wait() returns 0 when the caller must look at the word again
 * (woken, spurious wake-up, the word no longer held `val`, or a signal):
 * a futex wait orders nothing, so callers re-read the word with acquire.
 * It returns ETIMEDOUT when the absolute deadline `abs` (on clock `clk`,
 * CLOCK_MONOTONIC or CLOCK_REALTIME) has passed, and EINVAL for a
 * malformed deadline or an unsupported clock.  abs == NULL waits forever.
 *
 * QLOCK_MODEL (core/model.h) replaces the system calls and the clock with
 * a model for model checkers (futex.c): a queued waiter returns only when
 * a wake reaches it or, timed, when it times out, so a lost wake-up
 * blocks it for ever, as it would a real sleeper.
 */
#ifndef QLOCK_CORE_FUTEX_H
#define QLOCK_CORE_FUTEX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lockevent.h"

int qc_futex_wait(uint32_t *uaddr, uint32_t val, const struct timespec *abs,
		  clockid_t clk, enum qc_class c, enum qc_op op);

/* The futex waits this thread has made (modulo 2^32), counted as each
 * begins (one that returns at once, the word changed, counts too): a
 * caller that reads it around a lock call knows whether the call may
 * have slept. */
extern __thread uint32_t qc_futex_sleeps __attribute__((tls_model("initial-exec")));

/* Wake up to `nr` waiters of uaddr; returns how many were woken. */
int qc_futex_wake(uint32_t *uaddr, int nr, enum qc_class c, enum qc_op op);

/*
 * If *uaddr still holds `val`, wake `nr_wake` waiters of uaddr and move up
 * to `nr_requeue` others to wait on uaddr2 (condition variables requeue
 * onto their mutex).  Returns woken + requeued, or -1 when *uaddr changed
 * (the caller retries).  With the model it only wakes (nothing to requeue).
 */
int qc_futex_cmp_requeue(uint32_t *uaddr, uint32_t val, int nr_wake,
			 uint32_t *uaddr2, int nr_requeue, enum qc_class c,
			 enum qc_op op);

/* A deadline is valid when tv_nsec is in [0, 1e9) and tv_sec >= 0. */
bool qc_timespec_valid(const struct timespec *ts);

/* Has the absolute deadline on `clk` passed? */
bool qc_deadline_passed(const struct timespec *abs, clockid_t clk);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t qc_now_ns(void);

/* An absolute CLOCK_MONOTONIC deadline `ns` from now (tests, benchmark). */
struct timespec qc_deadline_in(uint64_t ns);

/*
 * Wait until adding `add` to *word would set no bit of `full` (a reader
 * count at its limit: a reader that holds the lock must leave first), or
 * until the
 * absolute deadline `abs` on `clk` passes (NULL: no deadline).  Polls
 * with a growing sleep (up to 1 ms): the readers that leave do not know
 * anyone waits for room, a state a program reaches only with millions of
 * read locks held at once.  Returns 0 or ETIMEDOUT.
 */
int qc_wait_room(const uint32_t *word, uint32_t add, uint32_t full,
		 const struct timespec *abs, clockid_t clk);

#endif /* QLOCK_CORE_FUTEX_H */
