// SPDX-License-Identifier: MIT
/*
 * Optional peer baseline: absl::Mutex (built only when libabsl-dev was
 * found at configure time; QLOCK_HAVE_ABSL).  A sleeping reader-writer
 * mutex that spins briefly, lets arriving threads barge and wakes waiters
 * in a queue, the design `lockbench map` compares the TP locks with.
 *
 * Debian's absl is not built with ThreadSanitizer, so TSan cannot see its
 * synchronisation: every acquire and release is announced (tsan_note.h).
 */
#include <new>

#include <absl/synchronization/mutex.h>

extern "C" {
#include "lockreg.h"
#include "tsan_note.h"
}

namespace {

absl::Mutex *as_mutex(void *l) { return static_cast<absl::Mutex *>(l); }

int amutex_init(void *l)
{
	new (l) absl::Mutex();
	return 0;
}

void amutex_destroy(void *l) { as_mutex(l)->~Mutex(); }

void amutex_lock(void *l)
{
	as_mutex(l)->Lock();
	tsan_acquired(l);
}

bool amutex_trylock(void *l)
{
	if (!as_mutex(l)->TryLock())
		return false;
	tsan_acquired(l);
	return true;
}

void amutex_unlock(void *l)
{
	tsan_releasing(l);
	as_mutex(l)->Unlock();
}

void amutex_rdlock(void *l)
{
	as_mutex(l)->ReaderLock();
	tsan_acquired(l);
}

bool amutex_tryrdlock(void *l)
{
	if (!as_mutex(l)->ReaderTryLock())
		return false;
	tsan_acquired(l);
	return true;
}

void amutex_rdunlock(void *l)
{
	tsan_releasing(l);
	as_mutex(l)->ReaderUnlock();
}

} // namespace

extern "C" const struct lr_lock lr_absl[] = {
	{ .name = "absl-mutex",
	  .desc = "absl::Mutex (spin, then queue and sleep; barging; shared mode)",
	  .kind = LR_RWLOCK, .flags = LR_OPTIONAL,
	  .size = sizeof(absl::Mutex), .stats_class = nullptr,
	  .init = amutex_init, .destroy = amutex_destroy,
	  .lock = amutex_lock, .unlock = amutex_unlock,
	  .trylock = amutex_trylock, .timedlock = nullptr,
	  .rdlock = amutex_rdlock, .rdunlock = amutex_rdunlock,
	  .tryrdlock = amutex_tryrdlock, .timedrdlock = nullptr },
	{ .name = nullptr },
};
