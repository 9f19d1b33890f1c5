/* SPDX-License-Identifier: MIT */
#include "futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

bool qc_timespec_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

uint64_t qc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec qc_deadline_in(uint64_t ns)
{
	uint64_t t = qc_now_ns() + ns;
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000000000u),
		.tv_nsec = (long)(t % 1000000000u),
	};
	return ts;
}

bool qc_deadline_passed(const struct timespec *abs, clockid_t clk)
{
	struct timespec now;

	clock_gettime(clk, &now);
	return now.tv_sec > abs->tv_sec ||
	       (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
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

#ifndef QLOCK_FUTEX_MODEL

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

#else /* QLOCK_FUTEX_MODEL */

int qc_futex_wait(uint32_t *uaddr, uint32_t val, const struct timespec *abs,
		  clockid_t clk, enum qc_class c, enum qc_op op)
{
	int err = check_deadline(abs, clk);

	if (err)
		return err;
	qc_fx_add(c, op, QC_FX_WAIT, 1);
	while (qa_read_acquire(uaddr) == val) {
		if (abs && qc_deadline_passed(abs, clk))
			return ETIMEDOUT;
		qa_cpu_relax();
	}
	return 0;
}

int qc_futex_wake(uint32_t *uaddr, int nr, enum qc_class c, enum qc_op op)
{
	(void)uaddr;
	(void)nr;
	qc_fx_add(c, op, QC_FX_WAKE, 1);
	return 0;
}

int qc_futex_cmp_requeue(uint32_t *uaddr, uint32_t val, int nr_wake,
			 uint32_t *uaddr2, int nr_requeue, enum qc_class c,
			 enum qc_op op)
{
	(void)uaddr2;
	(void)nr_requeue;
	if (qa_read(uaddr) != val)
		return -1;
	return qc_futex_wake(uaddr, nr_wake, c, op);
}

#endif /* QLOCK_FUTEX_MODEL */
