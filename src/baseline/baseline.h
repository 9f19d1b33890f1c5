/* SPDX-License-Identifier: MIT */
/*
 * Baseline locks: the reference points qlock's locks are measured and
 * tested against.  Benchmark and test use only, not public API.
 *
 *   ticket.c     ticket spinlock (FIFO, pure spinner)
 *   ttas.c       test-and-test-and-set spinlock (pure spinner)
 *   ww_mutex.c   seed 004 "WW" wait-wake futex mutex (0/1/2)
 *   ww_rwlock.c  WW event-count futex rwlock, reader- or writer-preferring
 *
 * Every lock is a zero-initialised struct (init just zeroes it); each
 * file opens with its word layout and transitions.  Timed operations
 * take an absolute CLOCK_MONOTONIC deadline and return 0, ETIMEDOUT, or
 * EINVAL for a malformed deadline.
 */
#ifndef QLOCK_BASELINE_H
#define QLOCK_BASELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* ---- ticket spinlock ---------------------------------------------------- */
struct ticket_lock {
	uint32_t word; /* bits 0-15 owner (now serving), 16-31 next ticket */
};
void ticket_init(struct ticket_lock *l);
void ticket_lock(struct ticket_lock *l);
bool ticket_trylock(struct ticket_lock *l);
int ticket_timedlock(struct ticket_lock *l, const struct timespec *abs);
void ticket_unlock(struct ticket_lock *l);

/* ---- TTAS spinlock ------------------------------------------------------ */
struct ttas_lock {
	uint32_t word; /* 0 free, 1 locked */
};
void ttas_init(struct ttas_lock *l);
void ttas_lock(struct ttas_lock *l);
bool ttas_trylock(struct ttas_lock *l);
int ttas_timedlock(struct ttas_lock *l, const struct timespec *abs);
void ttas_unlock(struct ttas_lock *l);

/* ---- WW futex mutex ----------------------------------------------------- */
struct ww_mutex {
	uint32_t word; /* 0 free, 1 locked, 2 locked and maybe waiters */
};
void ww_mutex_init(struct ww_mutex *m);
void ww_mutex_lock(struct ww_mutex *m);
bool ww_mutex_trylock(struct ww_mutex *m);
int ww_mutex_timedlock(struct ww_mutex *m, const struct timespec *abs);
void ww_mutex_unlock(struct ww_mutex *m);

/* ---- WW futex rwlock ---------------------------------------------------- */
struct ww_rwlock {
	uint32_t lock;     /* see ww_rwlock.c: writer byte + reader count */
	uint32_t read_ec;  /* reader event count (futex word) */
	uint32_t write_ec; /* writer event count (futex word) */
	uint32_t wwait;    /* writers in the slow path (writer-preferring) */
	uint32_t wpref;    /* 1: writer-preferring; set at init, then read-only */
};
void ww_rwlock_init(struct ww_rwlock *l, bool prefer_writer);
void ww_rwlock_rdlock(struct ww_rwlock *l);
bool ww_rwlock_tryrdlock(struct ww_rwlock *l);
int ww_rwlock_timedrdlock(struct ww_rwlock *l, const struct timespec *abs);
void ww_rwlock_rdunlock(struct ww_rwlock *l);
void ww_rwlock_wrlock(struct ww_rwlock *l);
bool ww_rwlock_trywrlock(struct ww_rwlock *l);
int ww_rwlock_timedwrlock(struct ww_rwlock *l, const struct timespec *abs);
void ww_rwlock_wrunlock(struct ww_rwlock *l);

#endif /* QLOCK_BASELINE_H */
