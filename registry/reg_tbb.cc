// SPDX-License-Identifier: MIT
/*
 * Optional peer baselines: oneTBB's spin_mutex (test-and-set with
 * exponential backoff, then yield), queuing_mutex (an MCS queue; the node
 * is a scoped_lock), spin_rw_mutex (writer-preferring: a waiting writer
 * sets WRITER_PENDING and new readers hold back) and queuing_rw_mutex (one
 * FIFO queue of readers and writers, adjacent readers share the lock).  Built only when
 * libtbb-dev was found at configure time (QLOCK_HAVE_TBB).  None of them
 * sleeps.  TSan sees their atomics (all inline) but the annotations of
 * tsan_note.h keep it exact across the yields.
 */
#include <new>

#include <oneapi/tbb/queuing_mutex.h>
#include <oneapi/tbb/queuing_rw_mutex.h>
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
 * queuing_mutex and queuing_rw_mutex need a queue node (scoped_lock) per
 * (thread, lock held): a few per thread, found again by lock address at
 * unlock, as the CK MCS adapter does.
 */
constexpr int QM_NEST = 4;

template <class M> struct q_slot {
	void *lock = nullptr;
	typename M::scoped_lock node;
};

template <class M> q_slot<M> *q_slot_of(void *l)
{
	thread_local q_slot<M> slots[QM_NEST];

	for (auto &s : slots)
		if (s.lock == l)
			return &s;
	return nullptr; /* nesting deeper than QM_NEST: a test bug */
}

/* queuing_mutex: acquire(m); queuing_rw_mutex: acquire(m, write). */
template <class M, bool... W> void q_lock(void *l)
{
	q_slot<M> *s = q_slot_of<M>(nullptr);

	s->node.acquire(*as<M>(l), W...);
	s->lock = l;
	tsan_acquired(l);
}

template <class M, bool... W> bool q_trylock(void *l)
{
	q_slot<M> *s = q_slot_of<M>(nullptr);

	if (!s->node.try_acquire(*as<M>(l), W...))
		return false;
	s->lock = l;
	tsan_acquired(l);
	return true;
}

template <class M> void q_unlock(void *l)
{
	q_slot<M> *s = q_slot_of<M>(l);

	tsan_releasing(l);
	s->node.release();
	s->lock = nullptr;
}

using qm = tbb::queuing_mutex;
using qrw = tbb::queuing_rw_mutex;

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
	  .lock = q_lock<qm>, .unlock = q_unlock<qm>,
	  .trylock = q_trylock<qm> },
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
	/* Readers and writers in one FIFO queue: adjacent readers share.  Its
	 * try_acquire succeeds only on an empty queue, so it refuses a reader
	 * while the lock is read-held: not a try-read in the registry's sense,
	 * and left out. */
	{ .name = "tbb-queuing-rw-mutex",
	  .desc = "oneTBB queuing_rw_mutex (fair queue, readers share)",
	  .kind = LR_RWLOCK, .flags = LR_SPIN_ONLY | LR_OPTIONAL,
	  .size = sizeof(qrw), .stats_class = nullptr,
	  .init = construct<qrw>, .destroy = destruct<qrw>,
	  .lock = q_lock<qrw, true>, .unlock = q_unlock<qrw>,
	  .trylock = q_trylock<qrw, true>, .timedlock = nullptr,
	  .rdlock = q_lock<qrw, false>, .rdunlock = q_unlock<qrw>,
	  .tryrdlock = nullptr },
	{ .name = nullptr },
};
