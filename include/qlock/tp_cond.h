/* SPDX-License-Identifier: MIT */
/*
 * qlock_tp_cond_t: a condition variable for qlock_tp_mutex_t.
 *
 * A sequence word the waiters sleep on.  signal wakes one waiter;
 * broadcast, when the caller holds the mutex (the usual case), wakes one
 * waiter and requeues the others onto the mutex word, so they are woken
 * one by one as the mutex is released instead of all rushing at it.
 * Waits may return spuriously (as with pthread_cond): wait in a loop on
 * your predicate.  16 bytes (64-bit), zero-initialised.
 *
 * Lifetime: call qlock_tp_cond_destroy() before the memory is freed or
 * reused.  It may be called as soon as every waiter has been woken
 * (broadcast, or one signal per waiter), also while woken waiters have
 * not yet returned from their wait: it returns once none of them touches
 * the condition variable any more (they may still wait for the mutex,
 * which must outlive them).  A thread still blocked in a wait when
 * destroy is called is woken (a spurious wake-up) and must not wait on
 * the destroyed condition variable again.  After destroy, init it again
 * to reuse it: a wait on a destroyed one is a misuse (reported, EINVAL,
 * the mutex stays held).
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
 * again), EINVAL for a malformed deadline or clock (m never released);
 * abs == NULL: no deadline.  EPERM when the caller does not hold m: a
 * misuse, reported through qlock_set_misuse_handler() (default: message
 * and abort); if the handler returns, nothing waits and m is not taken
 * (qlock_tp_cond_wait() then returns at once, the same way). */
QLOCK_API int qlock_tp_cond_timedwait(qlock_tp_cond_t *c, qlock_tp_mutex_t *m,
				      const struct timespec *abs,
				      int clk);
QLOCK_API void qlock_tp_cond_signal(qlock_tp_cond_t *c);
QLOCK_API void qlock_tp_cond_broadcast(qlock_tp_cond_t *c);
/* Before the condition variable's memory is freed or reused: waits
 * until woken waiters no longer touch it (see above). */
QLOCK_API void qlock_tp_cond_destroy(qlock_tp_cond_t *c);

#ifdef __cplusplus
}
#endif

#endif /* QLOCK_TP_COND_H */
