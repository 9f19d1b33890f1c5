/* SPDX-License-Identifier: MIT */
/*
 * The TP locks' thread ids and the table of threads off the CPU
 * (tp_tid.h): the per-thread gettid() cache, kept right across fork(),
 * and qlock_tp_off_cpu_begin()/_end().
 */
#ifndef QLOCK_MODEL
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/model.h"
#include "lock/tp_tid.h"
#include "qlock/qlock.h"
#include "qlock/tp_mutex.h"

__thread uint32_t tp_tid_cache __attribute__((tls_model("initial-exec")));

#ifndef QLOCK_MODEL

/*
 * fork(): the child's thread is the forking thread, with a new tid.  A lock
 * it held across the fork (the pthread_atfork pattern: lock everything in
 * prepare, unlock in the parent and child handlers) still names its tid in
 * the parent, so the child remembers the tids the forking thread had in its
 * ancestors (the last TP_FORK_TIDS forks made by the same line of threads)
 * and the unlock paths accept them from that thread (tp_fork_self) as its
 * own (tp_tid_forked_self()).  Written only in the child handler, while the
 * child has one thread; threads it creates later see them through
 * pthread_create.
 */
#define TP_FORK_TIDS 4
static uint32_t tp_fork_tids[TP_FORK_TIDS];
static uint32_t tp_fork_self; /* the thread they belong to, 0 = none */

static void tp_atfork_child(void)
{
	uint32_t old = tp_tid_cache;

	if (old != tp_fork_self) /* another thread forked: its own line */
		for (int i = 0; i < TP_FORK_TIDS; i++)
			tp_fork_tids[i] = 0;
	for (int i = TP_FORK_TIDS - 1; i > 0; i--)
		tp_fork_tids[i] = tp_fork_tids[i - 1];
	tp_fork_tids[0] = old; /* 0 if it never asked its tid: no lock */
	tp_tid_cache = tp_fork_self = (uint32_t)syscall(SYS_gettid);
}

bool tp_tid_forked_self(uint32_t owner)
{
	if (owner == 0 || tp_fork_self == 0 || tp_self_tid() != tp_fork_self)
		return false;
	for (int i = 0; i < TP_FORK_TIDS; i++)
		if (tp_fork_tids[i] == owner)
			return true;
	return false;
}

static pthread_once_t tp_atfork_once = PTHREAD_ONCE_INIT;

static void tp_atfork_register(void)
{
	pthread_atfork(NULL, NULL, tp_atfork_child);
}

uint32_t tp_tid_slow(void)
{
	pthread_once(&tp_atfork_once, tp_atfork_register);
	tp_tid_cache = (uint32_t)syscall(SYS_gettid);
	return tp_tid_cache;
}

#else /* QLOCK_MODEL: no gettid() or fork; a thread's id is its index + 1 */

uint32_t tp_tid_slow(void)
{
	tp_tid_cache = (uint32_t)qc_model_self() + 1;
	return tp_tid_cache;
}

bool tp_tid_forked_self(uint32_t owner)
{
	(void)owner;
	return false;
}

#endif /* QLOCK_MODEL */

uint32_t tp_off_cpu_tids[TP_OFF_CPU_SLOTS] __attribute__((aligned(64)));

#ifndef QLOCK_MODEL
QLOCK_API void qlock_tp_off_cpu_begin(void)
{
	uint32_t tid = tp_self_tid();

	qa_write(tp_off_cpu_slot(tid), tid);
}

QLOCK_API void qlock_tp_off_cpu_end(void)
{
	uint32_t tid = tp_self_tid_cached();
	uint32_t *slot = tp_off_cpu_slot(tid);

	/* Only our own entry: another thread may have taken the slot since.
	 * No RMW: one that takes it between our read and our store loses
	 * its hint, which the slot's sharing allows (tp_tid.h). */
	if (tid != 0 && qa_read(slot) == tid)
		qa_write(slot, 0u);
}
#endif
