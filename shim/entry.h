/* SPDX-License-Identifier: MIT */
/*
 * The lock entry points' shapes (mutex.c, rwlock.c, spin.c), each written
 * once: every pthread_*lock and *unlock instantiates one of these with its
 * own fast path, lockdep object and call, so the hooks (lock-order checks,
 * statistics, profile) sit in the same place for every lock.
 *
 * Call sites: SHIM_CALLER() and LOCKDEP_PC() are return addresses, so the
 * macros expand inside the exported function itself and the names they
 * record are the program's call sites.
 */
#ifndef QLOCK_SHIM_ENTRY_H
#define QLOCK_SHIM_ENTRY_H

#include "config.h"
#include "lockdep.h"
#include "contention.h"
#include "state.h"
#include "symbolize.h"

/* Is lockdep on?  Sets the drop-in up first (config.c, which sets lockdep
 * up), so that the very first lock call of a process (often in a
 * library's constructor) is tracked too. */
#define SHIM_LOCKDEP_ON() (ready(), LOCKDEP_ON())

/*
 * An acquisition: `fast` (the inline uncontended path, true when it took
 * the lock; `false` for none), else `call` (0 or an error), with lockdep's
 * checks around it when lockdep is on (`obj`, `mode`: LD_*).
 * SHIM_LOCKDEP_ON() sets the shim up first, so `call` always runs set
 * up.  Evaluates to 0 or the error.
 */
#define SHIM_LOCK(lock, fast, obj, mode, call) __extension__({                \
	int shim_err_ = 0;                                                   \
	if (!(fast))                                                         \
		shim_err_ = SHIM_LOCKDEP_ON()                                \
			? LOCKDEP_ACQUIRE((lock), (obj), (mode), (call))     \
			: (call);                                            \
	shim_err_;                                                           \
})

/*
 * A blocking acquisition that its inline path did not take (out of line,
 * SHIM_LOCK_CALLS): with lockdep's checks on, `inltry` first (the inline
 * path's code where it applies, true when it took the lock, never an
 * error) while the statistics are off: a lock taken there never waited,
 * and lockdep checks and records it in one call (lockdep_took(),
 * lockdep.h); else `call` (0 or an error) with the checks around it.
 * `pc`: the program's call site (this runs in a function of its own, so
 * LOCKDEP_PC() would name the entry point).
 */
#define SHIM_LOCK_BLOCKING(lock, obj, pc, inltry, call) __extension__({      \
	int shim_err_ = 0;                                                   \
	if (!SHIM_LOCKDEP_ON())                                              \
		shim_err_ = (call);                                          \
	else if (!qa_read(&shim_stats_on) && (inltry))                       \
		lockdep_took((lock), (obj), (uintptr_t)(pc));                \
	else                                                                 \
		shim_err_ = LOCKDEP_ACQUIRE_AT((lock), (obj), LD_BLOCK,      \
					       (uintptr_t)(pc), (call));     \
	shim_err_;                                                           \
})

/*
 * The general path of a blocking acquisition: with the statistics on,
 * `trycall` first and `blockcall` only when that found the lock busy, the
 * wait timed and the acquisition counted against `pc` (LOCKSTAT_ACQUIRE);
 * with lockdep's checks on (every call its inline path did not take, or
 * every call while the statistics are on too), `trycall` first as well, whose code is the inline path's where that
 * applies, and `blockcall` only when the lock was busy; else `blockcall`
 * alone.
 */
#define SHIM_COUNTED(lock, kind, pc, trycall, blockcall)                      \
	(qa_unlikely(shim_stats_on)                                          \
		 ? LOCKSTAT_ACQUIRE((lock), (kind), (pc), (trycall),         \
				    (blockcall))                             \
		 : LOCKDEP_ON() ? SHIM_TRY_FIRST((trycall), (blockcall))    \
		 : (blockcall))

#define SHIM_TRY_FIRST(trycall, blockcall) __extension__({                    \
	int shim_try_ = (trycall);                                           \
	shim_try_ == EBUSY ? (blockcall) : shim_try_;                        \
})

/*
 * What a blocking call's inline path did: took the lock, tried and found
 * it held, or did not apply.  While the statistics count
 * (SHIM_FAST_COUNT), a blocking lock's inline path counts what it takes
 * (the uncontended case of LOCKSTAT_ACQUIRE, without the general path's
 * call and checks, which cost a lock that changes hands between running
 * threads more than the counting does) and an unlock's tells the
 * statistics before it releases.  After a miss, the general path's first
 * try is the general try, so only a lock that is really held counts as
 * contended.  While lockdep's checks are on (SHIM_FAST_LOCKDEP), the
 * inline paths tell lockdep instead: a lock taken there never waited and
 * is checked and pushed by lockdep_took(), an unlock popped by
 * lockdep_unlocking() (lockdep.h); with the statistics on too, the inline
 * paths are off (state.h).
 */
#define SHIM_FAST_TAKEN   1
#define SHIM_FAST_MISSED  0
#define SHIM_FAST_NONE  (-1)
/* Taken, and the statistics or lockdep must be told: SHIM_FAST_TOLD plus
 * the shim_*_fast bits the inline path read (so the telling, out of line,
 * acts on the switches the take saw). */
#define SHIM_FAST_TOLD    2
#define SHIM_FAST_TELL(f) (SHIM_FAST_TOLD + (int)(f))
/* Codes below SHIM_FAST_NONE are the lock's own: work its inline path
 * left to its `finish` (SHIM_LOCK_CALLS), so that it calls nothing. */
#define SHIM_FAST_OWN   (-2)

/*
 * A timed call's deadline: glibc's <pthread.h> declares it nonnull, so the
 * compiler would take it as such (and drop the checks for NULL), but
 * glibc's code takes NULL as no deadline, and programs rely on that.
 */
static inline const struct timespec *shim_deadline(const struct timespec *abs)
{
	__asm__("" : "+r"(abs));
	return abs;
}

/*
 * The four acquisition calls of one lock mode, all alike: NAME (blocking),
 * TRY, TIMED (CLOCK_REALTIME deadline) and CLOCK (the caller's clock), on
 * an object of type T.  `fast(l)` is TRY's inline uncontended path (true
 * when it took the lock), `lock_fast(l)` NAME's (SHIM_FAST_*: it only
 * takes; what it took while the statistics count or lockdep checks is
 * told out of line, counted against the call site);
 * `finish(l, fast_)` (out of line) turns a code of the lock's own (below
 * SHIM_FAST_NONE: what the inline path left undone so that it calls
 * nothing) into one of the others;
 * `acquire(l, mode, clk, abs)` the general one (mode 0 block, 1 try, 2
 * timed; a NULL abs is no deadline, as in glibc); `obj` the lockdep object, `kind` the statistics' kind.
 *
 * NAME is the inline path and a tail call: everything else (the telling,
 * lockdep's checks, the wait) is NAME_slow's, out of line, so that the
 * uncontended call saves no register and builds no frame.  NAME's general
 * path is NAME_general, counted by the statistics: its first try is
 * `first_try(l, missed)` (0 or EBUSY; `missed`: the inline path has just
 * found the lock held); TRY and the timed calls are not counted
 * (contention.h).  `inline_try(l)`: the inline path's code where it
 * applies whatever the switches say (true when it took the lock), the
 * first try with lockdep's checks on (SHIM_LOCK_BLOCKING).
 */
#define SHIM_LOCK_CALLS(T, NAME, TRY, TIMED, CLOCK, fast, lock_fast, finish, \
			acquire, first_try, inline_try, obj, kind)           \
	static __attribute__((noinline)) int NAME##_general(T *l,            \
							    const void *pc,   \
							    bool missed)      \
	{                                                                    \
		ready();                                                     \
		return SHIM_COUNTED(l, kind, pc, first_try(l, missed),       \
				    acquire(l, 0, CLOCK_REALTIME, NULL));    \
	}                                                                    \
	/* What an inline path took while the statistics count, or lockdep \
	 * checks, told (an inline path's lock names its holder: no push): \
	 * a function of its own for each, small, which the told take       \
	 * reaches by a tail call, without NAME_slow's frame. */            \
	static __attribute__((noinline)) int NAME##_counted(T *l, const void *pc) \
	{                                                                    \
		lockstat_acquired_as(l, kind, pc, false);                    \
		return 0;                                                    \
	}                                                                    \
	static __attribute__((noinline)) int NAME##_checked(T *l, const void *pc) \
	{                                                                    \
		lockdep_took(l, obj, (uintptr_t)pc);                         \
		return 0;                                                    \
	}                                                                    \
	static inline int NAME##_told(T *l, const void *pc, int fast_)       \
	{                                                                    \
		if ((fast_ - SHIM_FAST_TOLD) & SHIM_FAST_COUNT)              \
			return NAME##_counted(l, pc);                        \
		return NAME##_checked(l, pc);                                \
	}                                                                    \
	static __attribute__((noinline)) int NAME##_slow(T *l, const void *pc, \
							 int fast_)           \
	{                                                                    \
		if (fast_ < SHIM_FAST_NONE) {                                \
			fast_ = finish(l, fast_);                            \
			if (fast_ == SHIM_FAST_TAKEN)                        \
				return 0;                                    \
		}                                                            \
		if (fast_ >= SHIM_FAST_TOLD)                                 \
			return NAME##_told(l, pc, fast_);                    \
		return SHIM_LOCK_BLOCKING(l, obj, pc, inline_try(l),         \
					  NAME##_general(l, pc,              \
							 fast_ == SHIM_FAST_MISSED)); \
	}                                                                    \
	EXPORT int NAME(T *l)                                                \
	{                                                                    \
		int fast_ = lock_fast(l);                                    \
		if (qa_likely(fast_ == SHIM_FAST_TAKEN))                     \
			return 0;                                            \
		if (fast_ >= SHIM_FAST_TOLD)                                 \
			return NAME##_told(l, SHIM_CALLER(), fast_);         \
		return NAME##_slow(l, SHIM_CALLER(), fast_);                 \
	}                                                                    \
	EXPORT int TRY(T *l)                                                 \
	{                                                                    \
		return SHIM_LOCK(l, fast(l), obj, LD_TRY,                    \
				 SHIM_HELD(l, kind, acquire(l, 1, CLOCK_REALTIME, NULL))); \
	}                                                                    \
	EXPORT int TIMED(T *l, const struct timespec *abs)                   \
	{                                                                    \
		const struct timespec *d_ = shim_deadline(abs);              \
		return SHIM_LOCK(l, false, obj, d_ ? LD_TIMED : LD_BLOCK,    \
				 SHIM_HELD(l, kind, acquire(l, 2, CLOCK_REALTIME, d_))); \
	}                                                                    \
	EXPORT int CLOCK(T *l, clockid_t clk, const struct timespec *abs)    \
	{                                                                    \
		const struct timespec *d_ = shim_deadline(abs);              \
		return SHIM_LOCK(l, false, obj, d_ ? LD_TIMED : LD_BLOCK,    \
				 SHIM_HELD(l, kind, acquire(l, 2, clk, d_)));  \
	}

/*
 * A trylock's or a timed lock's general path: with the profile on, a lock
 * it took goes on the held-lock stack (not counted; contention.h), so that
 * the deadlock watchdog knows its holder and where it was taken.  While
 * the profile is on, the trylocks' inline paths are off (SHIM_FAST_ON,
 * state.h), so every trylock comes here.
 */
#define SHIM_HELD(lock, kind, call) __extension__({                           \
	int shim_held_ = (call);                                             \
	if (qa_unlikely(shim_profile_on) && shim_held_ == 0)                 \
		lockstat_held((lock), (kind), SHIM_CALLER());                \
	shim_held_;                                                          \
})

/*
 * A release: `fast` (the inline path, true when it released the lock),
 * else lockdep's bookkeeping when it is on, then `call` (set up by
 * SHIM_LOCKDEP_ON(); it tells the statistics with SHIM_RELEASED()).
 */
#define SHIM_UNLOCK(lock, fast, obj, call) __extension__({                    \
	int shim_err_ = 0;                                                   \
	if (!(fast)) {                                                       \
		if (SHIM_LOCKDEP_ON())                                       \
			lockdep_unlocking((lock), (obj), LOCKDEP_PC());      \
		shim_err_ = (call);                                          \
	}                                                                    \
	shim_err_;                                                           \
})

/* The statistics' side of a release, before the lock is released. */
#define SHIM_RELEASED(lock)                                                   \
	do {                                                                 \
		if (qa_unlikely(shim_stats_on))                              \
			lockstat_release(lock);                              \
	} while (0)

/* glibc also exports the lock calls as __pthread_* (GLIBC_2.2.5), which
 * old binaries may call: each forwards to its pthread_* entry point. */
#define SHIM_GLIBC_ALIAS(name, params, args)                                  \
	EXPORT int __##name params;                                          \
	int __##name params                                                  \
	{                                                                    \
		return name args;                                            \
	}

#endif /* QLOCK_SHIM_ENTRY_H */
