/* SPDX-License-Identifier: MIT */
/*
 * Registry entries for the TP futex locks of seed 004: tp-mutex,
 * tp-rwlock (readers grouped) and tp-rwlock-nogroup (the same source
 * without grouping, seed 004's "before"), see docs/tp-locks.md.
 */
#include "lockreg.h"

#include "lock/tp_internal.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

static int tpm_init(void *l) { qlock_tp_mutex_init(l); return 0; }
static void tpm_lock(void *l) { qlock_tp_mutex_lock(l); }
static void tpm_unlock(void *l) { qlock_tp_mutex_unlock(l); }
static bool tpm_trylock(void *l) { return qlock_tp_mutex_trylock(l); }
static int tpm_timedlock(void *l, const struct timespec *abs)
{
	return qlock_tp_mutex_timedlock(l, abs, CLOCK_MONOTONIC);
}

static int tprw_init(void *l) { qlock_tp_rwlock_init(l); return 0; }
static void tprw_wrlock(void *l) { qlock_tp_rwlock_wrlock(l); }
static void tprw_wrunlock(void *l) { qlock_tp_rwlock_wrunlock(l); }
static bool tprw_trywrlock(void *l) { return qlock_tp_rwlock_trywrlock(l); }
static int tprw_timedwrlock(void *l, const struct timespec *abs)
{
	return qlock_tp_rwlock_timedwrlock(l, abs, CLOCK_MONOTONIC);
}
static void tprw_rdlock(void *l) { qlock_tp_rwlock_rdlock(l); }
static void tprw_rdunlock(void *l) { qlock_tp_rwlock_rdunlock(l); }
static bool tprw_tryrdlock(void *l) { return qlock_tp_rwlock_tryrdlock(l); }
static int tprw_timedrdlock(void *l, const struct timespec *abs)
{
	return qlock_tp_rwlock_timedrdlock(l, abs, CLOCK_MONOTONIC);
}

/* No grouping: a reader that misses the fast path queues alone. */
static void tprw_ng_rdlock(void *l)
{
	if (!qlock_tp_rwlock_tryrdlock(l))
		tp_rwlock_rdlock_common(l, false, NULL, CLOCK_MONOTONIC);
}
static int tprw_ng_timedrdlock(void *l, const struct timespec *abs)
{
	if (qlock_tp_rwlock_tryrdlock(l))
		return 0;
	return tp_rwlock_rdlock_common(l, false, abs, CLOCK_MONOTONIC);
}

#define TP_RWLOCK_OPS                                                       \
	.kind = LR_RWLOCK, .size = sizeof(qlock_tp_rwlock_t),               \
	.stats_class = "tp-rwlock", .init = tprw_init,                      \
	.lock = tprw_wrlock, .unlock = tprw_wrunlock,                       \
	.trylock = tprw_trywrlock, .timedlock = tprw_timedwrlock,           \
	.rdunlock = tprw_rdunlock, .tryrdlock = tprw_tryrdlock

const struct lr_lock lr_tp[] = {
	{ .name = "tp-mutex",
	  .desc = "TP futex mutex: tid word, top waiter spins, steal then hand-off (seed 004)",
	  .kind = LR_MUTEX, .size = sizeof(qlock_tp_mutex_t),
	  .stats_class = "tp-mutex", .init = tpm_init,
	  .lock = tpm_lock, .unlock = tpm_unlock, .trylock = tpm_trylock,
	  .timedlock = tpm_timedlock },
	{ .name = "tp-rwlock",
	  .desc = "TP futex rwlock: shared-mode word, writer-preferring, readers grouped (seed 004)",
	  TP_RWLOCK_OPS, .rdlock = tprw_rdlock, .timedrdlock = tprw_timedrdlock },
	{ .name = "tp-rwlock-nogroup",
	  .desc = "TP futex rwlock without reader grouping (seed 004 before)",
	  TP_RWLOCK_OPS, .rdlock = tprw_ng_rdlock,
	  .timedrdlock = tprw_ng_timedrdlock },
	{ .name = NULL },
};
