/* SPDX-License-Identifier: MIT */
#include "futex.h"

#include "atomic.h"

#include <errno.h>
#ifdef QLOCK_MODEL
#include <assert.h>
#endif
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
 * The model clock (core/model.h): per thread, the same for both clocks.
 * A timed futex wait that times out moves it to the deadline, so a lock
 * that then looks at the clock agrees with the futex.  Run as a test it
 * also advances 1 ns per reading, so every spin budget runs out; under
 * GenMC it stands still, since a loop that stores (even to its own clock)
 * is no longer an idle spin the checker can cut: budgets of 0 expire at
 * once, longer ones never, and the awaited condition ends the spin.
 */
static __thread uint64_t model_now;

uint64_t qc_now_ns(void)
{
#ifdef QLOCK_UNDER_GENMC
	return model_now;
#else
	return ++model_now;
#endif
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

__thread uint32_t qc_futex_sleeps __attribute__((tls_model("initial-exec")));

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
	qc_futex_sleeps++;
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
 * The futex model, as the kernel does it: a hash-bucket lock serialises
 * the waiter's check of the word with its queueing and the wakers' scans
 * of the queue.  So a waker that changed the word before waking either
 * finds the waiter queued or the waiter finds the new word, and does not
 * sleep.  Each thread has one queue entry: the address it sleeps on, or
 * NULL.  A queued waiter returns only when a wake clears its entry or,
 * timed, when it withdraws the entry itself first.  Wakes pick sleepers
 * in thread order, not FIFO; there are no spurious wake-ups.  What the
 * bucket lock orders is the futex's business: callers still re-read
 * their word with acquire, as with the real system call.
 *
 * Lost wake-ups: model_awake counts the threads that can still wake a
 * sleeper (running; main not while it joins; a timed sleeper is awake, it
 * wakes itself), and above MODEL_ALIVE the started threads that have not
 * returned.  The last thread awake that stops (sleeps, returns, or main
 * joins) while another has not returned leaves it asleep for ever: an
 * assertion in that update, so the first execution that loses a wake-up
 * fails.  The count's updates are RMWs ordered with the wakes (bucket
 * lock) and the starts and joins, so its old value is never stale: 1
 * means nobody else can run again.  Run as a test, a sleeper also polls
 * it.  Under GenMC the count costs executions (every order of its
 * updates), so it is kept only with QC_MODEL_LOST_WAKE_CHECK (`make
 * modelcheck`'s wake-mutant runs); without it a lost wake-up is a
 * blocked execution, not an error.
 */
#if !defined(QLOCK_UNDER_GENMC) || defined(QC_MODEL_LOST_WAKE_CHECK)
#define MODEL_COUNT_AWAKE 1
#endif
static uint32_t model_bucket;
static uint32_t *model_sleeping_on[QC_MODEL_THREADS];
static uint32_t model_awake = 1; /* main (core/model.h) */
#define MODEL_ALIVE (1u << 16)
#ifdef MODEL_COUNT_AWAKE
/* Under the bucket lock: the sleeper's wait is timed (counted awake). */
static uint32_t model_sleep_timed[QC_MODEL_THREADS];
#endif

#ifdef MODEL_COUNT_AWAKE
/* Add n (awake) and n * MODEL_ALIVE if `thread`; the old value.  A
 * subtraction as such: GenMC 0.10.3 does not wrap a 32-bit add of
 * 2^32 - 1 around. */
static uint32_t model_count_add(int n, bool thread)
{
	uint32_t d = (uint32_t)(n < 0 ? -n : n) * (thread ? MODEL_ALIVE + 1 : 1);

	if (n < 0)
		return qa_fetch_sub_relaxed(&model_awake, d);
	return qa_fetch_add_relaxed(&model_awake, d);
}

/* A thread stopped; `old` the count before; `asleep` threads sleep. */
static void model_check_stop(uint32_t old, uint32_t asleep)
{
	assert(!((old & (MODEL_ALIVE - 1)) == 1 && asleep) &&
	       "lost wake-up: every other thread sleeps or has returned");
	(void)old;
	(void)asleep;
}
#endif

void qc_model_awake_add(int n)
{
#ifndef MODEL_COUNT_AWAKE
	(void)n; /* the count costs executions, see above */
#else
	uint32_t old = model_count_add(n, false);

	if (n < 0) /* main joins: a thread that has not returned sleeps */
		model_check_stop(old, old / MODEL_ALIVE);
#endif
}

void qc_model_thread_add(int n)
{
#ifndef MODEL_COUNT_AWAKE
	(void)n;
#else
	uint32_t old = model_count_add(n, true);

	if (n < 0) /* returns: another that has not returned sleeps */
		model_check_stop(old, old / MODEL_ALIVE - 1);
#endif
}

static void model_bucket_take(void)
{
	uint32_t free_ = 0;

	while (!qa_try_cmpxchg_acquire(&model_bucket, &free_, 1))
		free_ = 0;
}

#ifdef QC_MODEL_FUTEX_OUT_OF_LINE
/*
 * GenMC 0.10.3 inlines every function whose whole call tree it can see,
 * then, for each loop, walks every path from its latch back to its header
 * (SpinAssumePass), a number that grows as the product of the branches
 * inlined into the loop.  The rwsem's slow paths (wait_lock, futex wait
 * and wake, the reader wake-up, in one retry loop) put it past hours
 * before any execution is explored.  A call through a pointer is a call
 * the inliner cannot see: the futex, and everything that calls it, stay
 * out of line; the atomics in them are still inlined, so their CAS and
 * spin loops are still cut.  A harness opts in (before model_core.h).
 */
static void (*model_bucket_take_fn)(void) = model_bucket_take;
#define model_bucket_lock() model_bucket_take_fn()
#else
#define model_bucket_lock() model_bucket_take()
#endif

static void model_bucket_unlock(void)
{
	qa_write_release(&model_bucket, 0);
}

/* Under the bucket lock: withdraw our entry, false if a wake took it. */
static bool model_withdraw(uint32_t **entry)
{
	bool queued = qa_read(entry) != 0;

	if (queued)
		qa_write(entry, (uint32_t *)0);
	return queued;
}

int qc_futex_wait(uint32_t *uaddr, uint32_t val, const struct timespec *abs,
		  clockid_t clk, enum qc_class c, enum qc_op op)
{
	int self = qc_model_self();
	uint32_t **entry = &model_sleeping_on[self];
	int err = check_deadline(abs, clk);

	if (err)
		return err;
	qc_fx_add(c, op, QC_FX_WAIT, 1);
	model_bucket_lock();
	if (qa_read(uaddr) != val) {
		model_bucket_unlock();
		return 0;
	}
	qa_write(entry, uaddr);
#ifdef MODEL_COUNT_AWAKE
	qa_write(&model_sleep_timed[self], (uint32_t)(abs != NULL));
	if (!abs) /* we sleep, unless someone is awake to wake us */
		model_check_stop(model_count_add(-1, false), 1);
#endif
	model_bucket_unlock();
	if (abs) {
		/* Time out at any point the other threads have reached:
		 * the checker explores the wakes before and after this. */
		bool timed_out;

		model_bucket_lock();
		timed_out = model_withdraw(entry);
		model_bucket_unlock();
		if (!timed_out)
			return 0;
		model_sleep_until(abs);
		return ETIMEDOUT;
	}
#ifdef QLOCK_UNDER_GENMC
	/*
	 * Asleep until a wake clears the entry (read compared with 0 only:
	 * GenMC turns the loop into an assume).  Without the lost-wake
	 * count (above) a lost wake-up leaves the execution blocked.
	 */
#ifdef MODEL_COUNT_AWAKE
	while (qa_read_acquire(entry)) /* see model_wake_one() */
		;
#else
	while (qa_read(entry))
		;
#endif
#else
	/* Asleep until a wake clears the entry, or nobody is left to do it. */
	while (qa_read_acquire(entry) && qa_read(&model_awake) % MODEL_ALIVE)
		qc_model_relax();
	assert(!qa_read(entry) &&
	       "lost wake-up: every other thread sleeps or has returned");
#endif
	qc_model_step(); /* see core/model.h */
	return 0;
}

/* Under the bucket lock: wake thread i if it sleeps on uaddr (or move it
 * to `to` if not NULL); 1 if it did. */
static int model_wake_one(int i, uint32_t *uaddr, uint32_t *to)
{
	if (qa_read(&model_sleeping_on[i]) != uaddr)
		return 0;
#ifdef MODEL_COUNT_AWAKE
	/* Counted awake before it can see the wake: release pairs with the
	 * sleeper's acquire, so its later updates follow ours. */
	if (!to && !qa_read(&model_sleep_timed[i]))
		qc_model_awake_add(1);
	qa_write_release(&model_sleeping_on[i], to);
#else
	qa_write(&model_sleeping_on[i], to);
#endif
	return 1;
}

/* Under the bucket lock: wake up to nr sleepers on uaddr, or move them to
 * `to` if not NULL. */
static int model_wake(uint32_t *uaddr, int nr, uint32_t *to)
{
	int n = 0;

#ifdef QLOCK_UNDER_GENMC
	/* No loop: -unroll=N would cut the scan after thread N-1, and a
	 * wake of a later thread would end its execution unexplored (the
	 * harnesses' -unroll=2 hid every wake of threads 2 and 3). */
	_Static_assert(QC_MODEL_THREADS == 4, "one line per model thread");
	if (n < nr)
		n += model_wake_one(0, uaddr, to);
	if (n < nr)
		n += model_wake_one(1, uaddr, to);
	if (n < nr)
		n += model_wake_one(2, uaddr, to);
	if (n < nr)
		n += model_wake_one(3, uaddr, to);
#else
	for (int i = 0; i < QC_MODEL_THREADS && n < nr; i++)
		n += model_wake_one(i, uaddr, to);
#endif
	return n;
}

int qc_futex_wake(uint32_t *uaddr, int nr, enum qc_class c, enum qc_op op)
{
	int n;

	qc_fx_add(c, op, QC_FX_WAKE, 1);
	model_bucket_lock();
	n = model_wake(uaddr, nr, (uint32_t *)0);
	model_bucket_unlock();
	return n;
}

int qc_futex_cmp_requeue(uint32_t *uaddr, uint32_t val, int nr_wake,
			 uint32_t *uaddr2, int nr_requeue, enum qc_class c,
			 enum qc_op op)
{
	int n = -1;

	qc_fx_add(c, op, QC_FX_WAKE, 1);
	model_bucket_lock();
	if (qa_read(uaddr) == val) {
		n = model_wake(uaddr, nr_wake, (uint32_t *)0);
		n += model_wake(uaddr, nr_requeue, uaddr2);
	}
	model_bucket_unlock();
	return n;
}

#endif /* QLOCK_MODEL */

int qc_wait_room(const uint32_t *word, uint32_t add, uint32_t full,
		 const struct timespec *abs, clockid_t clk)
{
	for (uint32_t i = 0; (qa_read(word) + add) & full; i++) {
		if (abs && qc_deadline_passed(abs, clk))
			return ETIMEDOUT;
#ifndef QLOCK_MODEL
		if (i >= 64) {
			long us = i < 64 + 10 ? 1L << (i - 64) : 1000;
			struct timespec ts = { 0, us * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
#endif
		qa_cpu_relax();
	}
	return 0;
}
