/* SPDX-License-Identifier: MIT */
/*
 * Optional Concurrency Kit baselines (built only when libck-dev was found
 * at configure time; QLOCK_HAVE_CK).  All three are pure spinners.
 *
 * CK implements its atomics in inline assembly, which ThreadSanitizer
 * cannot see; under TSan every acquire and release is annotated
 * (tsan_note.h).
 */
#include "lockreg.h"

#include <ck_rwlock.h>
#include <ck_spinlock.h>
#include <errno.h>

#include "tsan_note.h"

/* ---- ck_spinlock_mcs: the lock is the queue tail -------------------------- */

/*
 * An MCS lock needs a queue node per (thread, lock held).  Each thread
 * keeps a few in TLS, enough for the nesting the benchmark and tests use;
 * unlock finds the node by lock address.
 */
#define MCS_NEST 4

struct mcs_ctx {
	void *lock;
	struct ck_spinlock_mcs node;
};

static __thread struct mcs_ctx mcs_ctx[MCS_NEST];

static struct ck_spinlock_mcs *mcs_node_take(void *l)
{
	for (int i = 0; i < MCS_NEST; i++) {
		if (!mcs_ctx[i].lock) {
			mcs_ctx[i].lock = l;
			return &mcs_ctx[i].node;
		}
	}
	return NULL; /* nesting deeper than MCS_NEST: a test bug */
}

static struct ck_spinlock_mcs *mcs_node_find(void *l)
{
	for (int i = 0; i < MCS_NEST; i++)
		if (mcs_ctx[i].lock == l)
			return &mcs_ctx[i].node;
	return NULL;
}

static void mcs_node_put(void *l)
{
	for (int i = 0; i < MCS_NEST; i++)
		if (mcs_ctx[i].lock == l)
			mcs_ctx[i].lock = NULL;
}

static int mcs_init(void *l)
{
	ck_spinlock_mcs_init(l);
	return 0;
}

static void mcs_lock(void *l)
{
	ck_spinlock_mcs_lock(l, mcs_node_take(l));
	tsan_acquired(l);
}

static bool mcs_trylock(void *l)
{
	struct ck_spinlock_mcs *n = mcs_node_take(l);

	if (ck_spinlock_mcs_trylock(l, n)) {
		tsan_acquired(l);
		return true;
	}
	mcs_node_put(l);
	return false;
}

static void mcs_unlock(void *l)
{
	tsan_releasing(l);
	ck_spinlock_mcs_unlock(l, mcs_node_find(l));
	mcs_node_put(l);
}

/* ---- ck_spinlock_ticket ------------------------------------------------------ */

static int cticket_init(void *l)
{
	ck_spinlock_ticket_init(l);
	return 0;
}

static void cticket_lock(void *l)
{
	ck_spinlock_ticket_lock(l);
	tsan_acquired(l);
}

static bool cticket_trylock(void *l)
{
	if (!ck_spinlock_ticket_trylock(l))
		return false;
	tsan_acquired(l);
	return true;
}

static void cticket_unlock(void *l)
{
	tsan_releasing(l);
	ck_spinlock_ticket_unlock(l);
}

/* ---- ck_rwlock ------------------------------------------------------------------- */

static int crw_init(void *l)
{
	ck_rwlock_init(l);
	return 0;
}

static void crw_wrlock(void *l)
{
	ck_rwlock_write_lock(l);
	tsan_acquired(l);
}

static bool crw_trywrlock(void *l)
{
	if (!ck_rwlock_write_trylock(l))
		return false;
	tsan_acquired(l);
	return true;
}

static void crw_wrunlock(void *l)
{
	tsan_releasing(l);
	ck_rwlock_write_unlock(l);
}

static void crw_rdlock(void *l)
{
	ck_rwlock_read_lock(l);
	tsan_acquired(l);
}

static bool crw_tryrdlock(void *l)
{
	if (!ck_rwlock_read_trylock(l))
		return false;
	tsan_acquired(l);
	return true;
}

static void crw_rdunlock(void *l)
{
	tsan_releasing(l);
	ck_rwlock_read_unlock(l);
}

const struct lr_lock lr_ck[] = {
	{ .name = "ck-mcs",
	  .desc = "Concurrency Kit ck_spinlock_mcs (queued FIFO spinner, per-thread nodes)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY | LR_OPTIONAL,
	  .size = sizeof(ck_spinlock_mcs_t),
	  .init = mcs_init, .lock = mcs_lock, .unlock = mcs_unlock,
	  .trylock = mcs_trylock },
	{ .name = "ck-ticket",
	  .desc = "Concurrency Kit ck_spinlock_ticket (FIFO spinner)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY | LR_OPTIONAL,
	  .size = sizeof(ck_spinlock_ticket_t),
	  .init = cticket_init, .lock = cticket_lock,
	  .unlock = cticket_unlock, .trylock = cticket_trylock },
	/* Writers announce themselves and wait for readers to drain, so
	 * readers cannot starve writers; writers may starve readers. */
	{ .name = "ck-rwlock",
	  .desc = "Concurrency Kit ck_rwlock (writer-preferring spinner)",
	  .kind = LR_RWLOCK,
	  .flags = LR_SPIN_ONLY | LR_OPTIONAL | LR_MAY_STARVE_READERS,
	  .size = sizeof(ck_rwlock_t),
	  .init = crw_init, .lock = crw_wrlock, .unlock = crw_wrunlock,
	  .trylock = crw_trywrlock, .rdlock = crw_rdlock,
	  .rdunlock = crw_rdunlock, .tryrdlock = crw_tryrdlock },
	{ .name = NULL },
};
