/* SPDX-License-Identifier: MIT */
/*
 * qlock_tp_cond_t: a condition variable for qlock_tp_mutex_t.
 *
 * A sequence word the waiters sleep on.  signal wakes one waiter;
 * broadcast, when the caller holds the mutex (the usual case), wakes one
 * waiter and requeues the others onto the mutex word, so they are woken
 * one by one as the mutex is released instead of all rushing at it.
 * Waits may return spuriously (as with pthread_cond): wait in a loop on
 * your predicate.  16 bytes (64-bit), zero-initialised, no destructor.
 */
#ifndef QLOCK_TP_COND_H
#define QLOCK_TP_COND_H

#include <stdint.h>
#include <time.h>

#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qlock_tp_cond {
	uint32_t seq;     /* bumped by every signal/broadcast; the futex word */
	uint32_t waiters; /* threads inside wait */
	qlock_tp_mutex_t *mutex; /* mutex of the current waiters */
} qlock_tp_cond_t;

#define QLOCK_TP_COND_INIT { 0, 0, 0 }

static inline void qlock_tp_cond_init(qlock_tp_cond_t *c)
{
	c->seq = c->waiters = 0;
	c->mutex = 0;
}

/* Atomically release m and wait; m is held again on return. */
QLOCK_API void qlock_tp_cond_wait(qlock_tp_cond_t *c, qlock_tp_mutex_t *m);
/* As wait; ETIMEDOUT once the absolute deadline on clk passed (m held
 * again), EINVAL for a malformed deadline or clock (m never released). */
QLOCK_API int qlock_tp_cond_timedwait(qlock_tp_cond_t *c, qlock_tp_mutex_t *m,
				      const struct timespec *abs,
				      int clk);
QLOCK_API void qlock_tp_cond_signal(qlock_tp_cond_t *c);
QLOCK_API void qlock_tp_cond_broadcast(qlock_tp_cond_t *c);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_TP_COND_H */
