/* SPDX-License-Identifier: MIT */
#include "futex.h"

#include <errno.h>
#ifndef QLOCK_MODEL
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

bool qc_timespec_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

static uint64_t timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

#ifndef QLOCK_MODEL

uint64_t qc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_ns(&ts);
}

bool qc_deadline_passed(const struct timespec *abs, clockid_t clk)
{
	struct timespec now;

	clock_gettime(clk, &now);
	return now.tv_sec > abs->tv_sec ||
	       (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
}

#else /* QLOCK_MODEL */

/*
 * The model clock (core/model.h): per thread, 1 ns per reading, the same
 * for both clocks.  A timed futex wait that times out moves it to the
 * deadline, so a lock that then looks at the clock agrees with the futex.
 */
static __thread uint64_t model_now;

uint64_t qc_now_ns(void)
{
	return ++model_now;
}

bool qc_deadline_passed(const struct timespec *abs, clockid_t clk)
{
	(void)clk;
	return qc_now_ns() >= timespec_ns(abs);
}

static void model_sleep_until(const struct timespec *abs)
{
	if (model_now < timespec_ns(abs))
		model_now = timespec_ns(abs);
}

#endif /* QLOCK_MODEL */

struct timespec qc_deadline_in(uint64_t ns)
{
	uint64_t t = qc_now_ns() + ns;
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000u),
		.tv_nsec = (long)(t % 1000000000u),
	};
	return ts;
}

static int check_deadline(const struct timespec *abs, clockid_t clk)
{
	if (!abs)
		return 0;
	if (clk != CLOCK_MONOTONIC && clk != CLOCK_REALTIME)
		return EINVAL;
	if (!qc_timespec_valid(abs))
		return EINVAL;
	return 0;
}

#ifndef QLOCK_MODEL

int qc_futex_wait(uint32_t *uaddr, uint32_t val, const struct timespec *abs,
		  clockid_t clk, enum qc_class c, enum qc_op op)
{
	int flags = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	int err = check_deadline(abs, clk);

	if (err)
		return err;
	if (abs && clk == CLOCK_REALTIME)
		flags |= FUTEX_CLOCK_REALTIME;
	qc_fx_add(c, op, QC_FX_WAIT, 1);
	/* WAIT_BITSET takes an absolute deadline, unlike plain WAIT. */
	if (syscall(SYS_futex, uaddr, flags, val, abs, NULL,
		    FUTEX_BITSET_MATCH_ANY) == 0)
		return 0;
	switch (errno) {
	case ETIMEDOUT:
		return ETIMEDOUT;
	case EINVAL:
		return EINVAL;
	default: /* EAGAIN: the word changed; EINTR: a signal */
		return 0;
	}
}

int qc_futex_wake(uint32_t *uaddr, int nr, enum qc_class c, enum qc_op op)
{
	long r = syscall(SYS_futex, uaddr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
			 nr, NULL, NULL, 0);

	qc_fx_add(c, op, QC_FX_WAKE, 1);
	if (r > 0)
		qc_fx_add(c, op, QC_FX_WOKEN, (uint64_t)r);
	return r > 0 ? (int)r : 0;
}

int qc_futex_cmp_requeue(uint32_t *uaddr, uint32_t val, int nr_wake,
			 uint32_t *uaddr2, int nr_requeue, enum qc_class c,
			 enum qc_op op)
{
	/* The kernel reads nr_requeue from the timeout argument's slot. */
	long r = syscall(SYS_futex, uaddr,
			 FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG, nr_wake,
			 (void *)(long)nr_requeue, uaddr2, val);

	qc_fx_add(c, op, QC_FX_WAKE, 1);
	if (r < 0)
		return -1;
	qc_fx_add(c, op, QC_FX_WOKEN, (uint64_t)r);
	return (int)r;
}

#else /* QLOCK_MODEL */

/*
 * The futex model: each thread has one queue entry, the address it sleeps
 * on (NULL: awake).  A waiter queues itself, then reads the word; a waker
 * changed the word before it scans the entries.  The fences make this a
 * Dekker pair, as the kernel's hash-bucket lock and barriers do: either
 * the waiter sees the new word and does not sleep, or the waker sees the
 * entry.  A queued waiter returns only when a wake (or requeue and wake)
 * clears its entry, or, timed, when it withdraws the entry itself first:
 * a lost wake-up leaves it blocked, which GenMC reports with
 * -check-liveness.  The entries are relaxed: a futex orders nothing for
 * its caller.  Wakes pick sleepers in thread order, not FIFO, and there are
 * no spurious wake-ups.
 */
static uint32_t *model_sleeping_on[QC_MODEL_THREADS];

/* Withdraw our entry; false if a waker took it first (we were woken). */
static bool model_withdraw(uint32_t **entry, uint32_t *uaddr)
{
	uint32_t *expected = uaddr;

	return qa_try_cmpxchg_relaxed(entry, &expected, (uint32_t *)0);
}

int qc_futex_wait(uint32_t *uaddr, uint32_t val, const struct timespec *abs,
		  clockid_t clk, enum qc_class c, enum qc_op op)
{
	uint32_t **entry = &model_sleeping_on[qc_model_self()];
	int err = check_deadline(abs, clk);

	if (err)
		return err;
	qc_fx_add(c, op, QC_FX_WAIT, 1);
	qa_write(entry, uaddr);
	qa_smp_mb(); /* pairs with the fence in model_wake() */
	if (qa_read(uaddr) != val) {
		(void)model_withdraw(entry, uaddr);
		return 0;
	}
	if (abs) {
		/* Time out at any point the other threads have reached:
		 * the checker explores the wake before and after this. */
		if (!model_withdraw(entry, uaddr))
			return 0;
		model_sleep_until(abs);
		return ETIMEDOUT;
	}
	while (qa_read(entry) == uaddr)
		qc_model_relax();
	return 0;
}

/* Wake up to nr sleepers on uaddr, or move them to `to` if not NULL. */
static int model_wake(uint32_t *uaddr, int nr, uint32_t *to)
{
	int n = 0;

	qa_smp_mb(); /* pairs with the fence in qc_futex_wait() */
	for (int i = 0; i < QC_MODEL_THREADS && n < nr; i++) {
		uint32_t *expected = uaddr;

		if (qa_read(&model_sleeping_on[i]) == uaddr &&
		    qa_try_cmpxchg_relaxed(&model_sleeping_on[i], &expected, to))
			n++;
	}
	return n;
}

int qc_futex_wake(uint32_t *uaddr, int nr, enum qc_class c, enum qc_op op)
{
	qc_fx_add(c, op, QC_FX_WAKE, 1);
	return model_wake(uaddr, nr, (uint32_t *)0);
}

int qc_futex_cmp_requeue(uint32_t *uaddr, uint32_t val, int nr_wake,
			 uint32_t *uaddr2, int nr_requeue, enum qc_class c,
			 enum qc_op op)
{
	int n;

	qc_fx_add(c, op, QC_FX_WAKE, 1);
	qa_smp_mb(); /* the kernel compares under the bucket lock */
	if (qa_read(uaddr) != val)
		return -1;
	n = model_wake(uaddr, nr_wake, (uint32_t *)0);
	return n + model_wake(uaddr, nr_requeue, uaddr2);
}

#endif /* QLOCK_MODEL */
