// SPDX-License-Identifier: MIT
/*
 * Optional peer baselines: oneTBB's spin_mutex (test-and-set with
 * exponential backoff, then yield), queuing_mutex (an MCS queue; the node
 * is a scoped_lock) and spin_rw_mutex (writer-preferring: a waiting writer
 * sets WRITER_PENDING and new readers hold back).  Built only when
 * libtbb-dev was found at configure time (QLOCK_HAVE_TBB).  None of them
 * sleeps.  TSan sees their atomics (all inline) but the annotations of
 * tsan_note.h keep it exact across the yields.
 */
#include <new>

#include <oneapi/tbb/queuing_mutex.h>
#include <oneapi/tbb/spin_mutex.h>
#include <oneapi/tbb/spin_rw_mutex.h>

extern "C" {
#include "lockreg.h"
#include "tsan_note.h"
}

namespace {

template <class M> M *as(void *l) { return static_cast<M *>(l); }

template <class M> int construct(void *l)
{
	new (l) M();
	return 0;
}

template <class M> void destruct(void *l) { as<M>(l)->~M(); }

template <class M> void wlock(void *l)
{
	as<M>(l)->lock();
	tsan_acquired(l);
}

template <class M> bool trywlock(void *l)
{
	if (!as<M>(l)->try_lock())
		return false;
	tsan_acquired(l);
	return true;
}

template <class M> void wunlock(void *l)
{
	tsan_releasing(l);
	as<M>(l)->unlock();
}

using rw = tbb::spin_rw_mutex;

void rw_rdlock(void *l)
{
	as<rw>(l)->lock_shared();
	tsan_acquired(l);
}

bool rw_tryrdlock(void *l)
{
	if (!as<rw>(l)->try_lock_shared())
		return false;
	tsan_acquired(l);
	return true;
}

void rw_rdunlock(void *l)
{
	tsan_releasing(l);
	as<rw>(l)->unlock_shared();
}

/*
 * queuing_mutex needs a queue node (scoped_lock) per (thread, lock held):
 * a few per thread, found again by lock address at unlock, as the CK MCS
 * adapter does.
 */
using qm = tbb::queuing_mutex;
constexpr int QM_NEST = 4;

struct qm_slot {
	void *lock = nullptr;
	qm::scoped_lock node;
};

thread_local qm_slot qm_slots[QM_NEST];

qm_slot *qm_slot_of(void *l)
{
	for (auto &s : qm_slots)
		if (s.lock == l)
			return &s;
	return nullptr; /* nesting deeper than QM_NEST: a test bug */
}

void qm_lock(void *l)
{
	qm_slot *s = qm_slot_of(nullptr);

	s->node.acquire(*as<qm>(l));
	s->lock = l;
	tsan_acquired(l);
}

bool qm_trylock(void *l)
{
	qm_slot *s = qm_slot_of(nullptr);

	if (!s->node.try_acquire(*as<qm>(l)))
		return false;
	s->lock = l;
	tsan_acquired(l);
	return true;
}

void qm_unlock(void *l)
{
	qm_slot *s = qm_slot_of(l);

	tsan_releasing(l);
	s->node.release();
	s->lock = nullptr;
}

} // namespace

extern "C" const struct lr_lock lr_tbb[] = {
	{ .name = "tbb-spin-mutex",
	  .desc = "oneTBB spin_mutex (test-and-set, backoff then yield)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY | LR_OPTIONAL,
	  .size = sizeof(tbb::spin_mutex), .stats_class = nullptr,
	  .init = construct<tbb::spin_mutex>,
	  .destroy = destruct<tbb::spin_mutex>,
	  .lock = wlock<tbb::spin_mutex>, .unlock = wunlock<tbb::spin_mutex>,
	  .trylock = trywlock<tbb::spin_mutex> },
	{ .name = "tbb-queuing-mutex",
	  .desc = "oneTBB queuing_mutex (MCS queue, FIFO, spins then yields)",
	  .kind = LR_MUTEX, .flags = LR_SPIN_ONLY | LR_OPTIONAL,
	  .size = sizeof(qm), .stats_class = nullptr,
	  .init = construct<qm>, .destroy = destruct<qm>,
	  .lock = qm_lock, .unlock = qm_unlock, .trylock = qm_trylock },
	/* A waiting writer blocks new readers: writers may starve readers. */
	{ .name = "tbb-spin-rw-mutex",
	  .desc = "oneTBB spin_rw_mutex (writer-preferring spinner)",
	  .kind = LR_RWLOCK,
	  .flags = LR_SPIN_ONLY | LR_OPTIONAL | LR_MAY_STARVE_READERS,
	  .size = sizeof(rw), .stats_class = nullptr,
	  .init = construct<rw>, .destroy = destruct<rw>,
	  .lock = wlock<rw>, .unlock = wunlock<rw>, .trylock = trywlock<rw>,
	  .timedlock = nullptr, .rdlock = rw_rdlock,
	  .rdunlock = rw_rdunlock, .tryrdlock = rw_tryrdlock },
	{ .name = nullptr },
};
