/* SPDX-License-Identifier: MIT */
/*
 * The calls by which a thread leaves the CPU of its own accord:
 * sched_yield() (and pthread_yield(), thrd_yield()), nanosleep(),
 * clock_nanosleep(), usleep() and sleep().
 * Around each, the thread says it is off the CPU (qlock_tp_off_cpu_begin()
 * and _end()), so that a waiter that would spin on a TP lock it holds
 * sleeps at once instead.  glibc's mutex never spins, so a program whose
 * lock holder yields or sleeps (sysbench threads: lock, sched_yield(),
 * unlock) lost up to half its speed to waiters spinning on a holder that
 * was not running, and a yielding holder even handed its CPU to them.
 *
 * Every other behaviour is glibc's: the calls go to glibc's functions
 * (found with dlsym(RTLD_NEXT) on first use, so they work before the
 * shim's set-up and keep their cancellation points), and errno and the
 * return value are theirs.  Calls glibc makes internally (sleep() inside
 * glibc, say) do not pass through here: the hint is then missing, and the
 * waiter spins its normal bounded budget.  The condition variable's
 * signal and broadcast (cond.c) give the same hint around their
 * FUTEX_WAKE.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/* glibc's function `name`, resolved once; NULL if there is none. */
#define REAL_FN(type, name) __extension__({                              \
	static type fn_;                                                  \
	type f_ = qa_read_acquire(&fn_);                                  \
	if (qa_unlikely(!f_)) {                                           \
		f_ = (type)dlsym(RTLD_NEXT, #name);                       \
		qa_write_release(&fn_, f_);                               \
	}                                                                 \
	f_;                                                               \
})

EXPORT int sched_yield(void)
{
	int ret;

	qlock_tp_off_cpu_begin();
	/* A system call with no cancellation point, as glibc's. */
	ret = (int)syscall(SYS_sched_yield);
	qlock_tp_off_cpu_end();
	return ret;
}

/* `name` (params), calling glibc's with (args) between the two hints;
 * `missing`: what it does when glibc has none. */
#define OFF_CPU_CALL(ret, name, params, args, missing)                        \
	EXPORT ret name params                                               \
	{                                                                    \
		typedef ret (*fn_t) params;                                  \
		fn_t f = REAL_FN(fn_t, name);                                \
		ret r;                                                       \
									     \
		if (!f) {                                                    \
			missing;                                             \
		}                                                            \
		qlock_tp_off_cpu_begin();                                    \
		r = f args;                                                  \
		qlock_tp_off_cpu_end();                                      \
		return r;                                                    \
	}

OFF_CPU_CALL(int, nanosleep, (const struct timespec *req, struct timespec *rem),
	     (req, rem), return (int)syscall(SYS_nanosleep, req, rem))
OFF_CPU_CALL(int, clock_nanosleep,
	     (clockid_t clk, int flags, const struct timespec *req, struct timespec *rem),
	     (clk, flags, req, rem), return ENOSYS)
OFF_CPU_CALL(int, usleep, (useconds_t usec), (usec), errno = ENOSYS; return -1)
OFF_CPU_CALL(unsigned int, sleep, (unsigned int seconds), (seconds), return seconds)

/* glibc's pthread_yield() and C11's thrd_yield() call sched_yield()
 * inside glibc, past our definition: both are given here as well.
 * <pthread.h> renames pthread_yield to sched_yield for new programs, so
 * the definition names its symbol itself (old binaries, sysbench among
 * them, still call pthread_yield). */
EXPORT int shim_pthread_yield(void) __asm__("pthread_yield");
EXPORT int shim_pthread_yield(void)
{
	return sched_yield();
}

EXPORT void thrd_yield(void);
EXPORT void thrd_yield(void)
{
	(void)sched_yield();
}
