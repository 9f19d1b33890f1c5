/* SPDX-License-Identifier: MIT */
/*
 * The model harnesses (tests/model) are whole programs in one file.  gcc's
 * ipa-reference then sees every writer of a harness's static plain data
 * and may keep it in a register across a call whose visible code never
 * writes it, acquires notwithstanding: `while (!ready) wait()` reads
 * `ready` once and loops for ever (gcc 12 did so in tests/model/tp_cond.c
 * for s390x and aarch64: a "lost wake-up" under qemu).  model_core.h turns
 * the pass off; this program, shaped like a harness (model_core.h first,
 * a static flag set under a lock by another thread, a loop that drops and
 * re-takes the lock until it sees the flag), checks that it stays off.
 * With the pass on, gcc 12 on x86-64 compiles the loop below into one
 * that never reads `ready` again, and the check in relock() fails.
 */
#include "../model/model_core.h"

#include <sched.h>

static uint32_t lockword;
static int ready;              /* plain: protected by lockword */
static uint32_t waiter_in;     /* the waiter is in its loop */
static uint32_t waker_done;    /* set after the waker's unlock */
static bool waiter_saw_done;   /* the waiter's own */

static void lock(void)
{
	while (qa_xchg_acquire(&lockword, 1u))
		sched_yield();
}

static void unlock(void)
{
	qa_write_release(&lockword, 0u);
}

/*
 * Drop the lock and take it again, as a condition wait does.  Once a
 * re-take has seen the waker done, the waker's ready = 1 happened before
 * it (its unlock, then its release of waker_done), so the caller's next
 * read of `ready` under the lock must see 1 and not call us again.
 */
__attribute__((noinline)) static void relock(void)
{
	assert(!waiter_saw_done &&
	       "ready = 1 before the lock was re-taken, yet the loop read 0");
	qa_write_release(&waiter_in, 1u);
	unlock();
	sched_yield();
	lock();
	waiter_saw_done = qa_read_acquire(&waker_done);
}

static void *waiter(void *arg)
{
	lock();
	while (!ready)
		relock();
	unlock();
	return arg;
}

/* Only once the waiter has read ready == 0: the loop must read it again. */
static void *waker(void *arg)
{
	while (!qa_read_acquire(&waiter_in))
		sched_yield();
	lock();
	ready = 1;
	unlock();
	qa_write_release(&waker_done, 1u);
	return arg;
}

int main(void)
{
	model_spawn(waiter, NULL);
	model_spawn(waker, NULL);
	model_join_all();
	return 0;
}
