/* SPDX-License-Identifier: MIT */
/*
 * The TP locks' thread ids (tp_tid.c): the gettid() a thread writes into a
 * lock word as its owner, cached per thread, and the table of the threads
 * that are off the CPU by their own doing, keyed by that id.  The lock
 * files, the serial lock (tp_serial.h) and the uncontended paths the
 * pthread drop-in inlines (tp_fast.h) use them.  Not installed.
 */
#ifndef QLOCK_LOCK_TP_TID_H
#define QLOCK_LOCK_TP_TID_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"
#include "core/lockevent.h"

/* ---- thread ids ------------------------------------------------------------
 * gettid() of the calling thread, cached per thread.  Linux pids are at most
 * PID_MAX_LIMIT = 2^22, so a tid fits the 29-bit owner fields of both
 * words.  The cache is refreshed in a child of fork() by a
 * pthread_atfork handler, which also remembers the forking thread's old tid:
 * the child's thread may unlock what it held across the fork.  A lock held
 * by another thread of the parent stays held in the child (as glibc's).
 */
extern __thread uint32_t tp_tid_cache __attribute__((tls_model("initial-exec")));
uint32_t tp_tid_slow(void);
/* Is `owner` a tid the calling thread had before a fork() that made this
 * process (so a lock it names was held by this thread across the fork)?
 * For the unlock paths' misuse checks (tp_mutex.c) and the drop-in's
 * question whether the caller write-holds an rwlock (shim/rwlock.c). */
bool tp_tid_forked_self(uint32_t owner);

static inline uint32_t tp_self_tid(void)
{
	uint32_t t = tp_tid_cache;

	if (qa_likely(t != 0))
		return t;
	return tp_tid_slow();
}

/* The cached tid, or 0 before this thread's first tp_self_tid(): for fast
 * paths that fall back to a slow path (which fills the cache) rather than
 * make a call, so that they need no stack frame. */
static inline uint32_t tp_self_tid_cached(void)
{
	return tp_tid_cache;
}

/*
 * Owners that are off the CPU by their own doing.  User space cannot see
 * whether a lock's owner runs (the kernel's mutex spinner reads
 * owner->on_cpu), but a thread about to yield or sleep can say so
 * (qlock_tp_off_cpu_begin(); the pthread drop-in says it in sched_yield(),
 * nanosleep(), usleep(), ...).  A top waiter whose owner is listed here
 * stops spinning and sleeps at once: spinning on a thread that is not
 * running burns the CPU that thread needs, and a holder that calls
 * sched_yield() would even hand its CPU to the spinner.
 *
 * One word per tid modulo TP_OFF_CPU_SLOTS, holding that tid while the
 * thread is off.  Two threads off at once in one slot lose a hint (the
 * waiter spins its normal budget, as without the hint), never a wake-up:
 * the hint only decides between spinning and sleeping, and sleeping is
 * always correct (the SLEEPER protocol wakes the sleeper).  Relaxed
 * accesses: the hint orders nothing; read late, it costs one poll gap of
 * spinning.
 *
 * The slot of a tid is spread (tp_off_cpu_slot()): consecutive tids, the
 * threads a program starts together, fall in different cache lines (64
 * of them before two share one).  Slot tid % 1024 put 16 such threads in
 * one line, which every sched_yield() of any of them wrote twice: under
 * sysbench threads (16 threads yielding while holding) the line moved
 * between the CPUs at nearly every yield.  The map is a permutation of
 * tid % 1024, so which tids share a slot is unchanged.
 */
#define TP_OFF_CPU_SLOTS 1024u
#define TP_OFF_CPU_LINES 64u /* 16 slots of 4 bytes a cache line */
extern uint32_t tp_off_cpu_tids[TP_OFF_CPU_SLOTS];

static inline uint32_t *tp_off_cpu_slot(uint32_t tid)
{
	uint32_t per_line = TP_OFF_CPU_SLOTS / TP_OFF_CPU_LINES;

	return &tp_off_cpu_tids[tid % TP_OFF_CPU_LINES * per_line +
				tid / TP_OFF_CPU_LINES % per_line];
}

/* A lock call whose wait found its owner off the CPU (at most once a
 * call): the event, and the thread's count (core/lockevent.h). */
static inline void tp_count_off_cpu_wait(enum qc_class cls)
{
	qc_event_inc(cls, QC_EV_owner_off_cpu);
#ifndef QLOCK_MODEL
	qc_off_cpu_waits++;
#endif
}

static inline bool tp_owner_off_cpu(uint32_t tid)
{
#ifdef QLOCK_MODEL
	(void)tid; /* the models have no yield or sleep */
	return false;
#else
	return tid != 0 && qa_read(tp_off_cpu_slot(tid)) == tid;
#endif
}

#endif /* QLOCK_LOCK_TP_TID_H */
