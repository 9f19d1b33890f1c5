/* SPDX-License-Identifier: MIT */
/*
 * rwsem (src/lock/rwsem.c), both wake-up variants:
 *  - layout: zero-init is unlocked, count word values after each operation,
 *    owner word (writer tag, reader-owned flag);
 *  - single-thread semantics of the try and timed variants; EINVAL for a
 *    malformed deadline or clock; CLOCK_REALTIME deadlines;
 *  - timeouts leave the lock consistent for everyone else: a timed-out
 *    reader under a writer, a timed-out first writer with a reader queued
 *    behind it (which must still get the lock), a timed-out reader behind a
 *    writer, and a timed-out first writer that had set the hand-off bit
 *    with another writer queued behind it;
 *  - the wake-up rule: with the queue R W R behind a writer, the unlock
 *    grants both readers in "rwsem" and only the first in
 *    "rwsem-wake-front" (which then grants the writer, then the reader);
 *  - downgrade_write: readers queued in front are admitted while the
 *    downgrader still reads, a queued writer is not.
 * Threads wait for each other by polling the queue (qrwsem_queue_snapshot)
 * and flags, never by sleeping.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "lock/rwsem_variants.h"
#include "qlock/qlock.h"
#include "qlock/rwsem.h"

struct ops {
	const char *name;
	bool front;
	void (*down_read)(qlock_rwsem_t *);
	int (*down_read_timed)(qlock_rwsem_t *, const struct timespec *, clockid_t);
	void (*up_read)(qlock_rwsem_t *);
	void (*down_write)(qlock_rwsem_t *);
	int (*down_write_timed)(qlock_rwsem_t *, const struct timespec *, clockid_t);
	void (*up_write)(qlock_rwsem_t *);
	void (*downgrade)(qlock_rwsem_t *);
};

static const struct ops variants[] = {
	{ "rwsem", false, qlock_down_read, qlock_down_read_timed, qlock_up_read,
	  qlock_down_write, qlock_down_write_timed, qlock_up_write,
	  qlock_downgrade_write },
	{ "rwsem-wake-front", true, qrwsem_front_down_read,
	  qrwsem_front_down_read_timed, qrwsem_front_up_read,
	  qrwsem_front_down_write, qrwsem_front_down_write_timed,
	  qrwsem_front_up_write, qrwsem_front_downgrade_write },
};

static const struct ops *O;
static qlock_rwsem_t S;

static uint32_t count(void) { return qa_read(&S.count); }

static void wait_queue(const char *want)
{
	char buf[32];

	for (;;) {
		qrwsem_queue_snapshot(&S, buf, sizeof(buf));
		if (!strcmp(buf, want))
			return;
		sched_yield();
	}
}

/* ---- a helper thread that takes the lock and holds it until told ------- */

enum job_op { J_READ, J_WRITE, J_READ_TIMED, J_WRITE_TIMED };

struct job {
	enum job_op op;
	uint64_t timeout_ns;  /* timed ops: relative deadline */
	uint32_t got;         /* 1 once holding (or 2 when timed out) */
	uint32_t release;     /* set by main: unlock now */
	int result;
	pthread_t t;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct timespec dl = qc_deadline_in(j->timeout_ns);
	int r = 0;

	switch (j->op) {
	case J_READ: O->down_read(&S); break;
	case J_WRITE: O->down_write(&S); break;
	case J_READ_TIMED: r = O->down_read_timed(&S, &dl, CLOCK_MONOTONIC); break;
	case J_WRITE_TIMED: r = O->down_write_timed(&S, &dl, CLOCK_MONOTONIC); break;
	}
	j->result = r;
	if (r) {
		qa_write_release(&j->got, 2);
		return NULL;
	}
	qa_write_release(&j->got, 1);
	while (!qa_read_acquire(&j->release))
		sched_yield();
	if (j->op == J_READ || j->op == J_READ_TIMED)
		O->up_read(&S);
	else
		O->up_write(&S);
	return NULL;
}

static void job_start(struct job *j, enum job_op op, uint64_t timeout_ns)
{
	memset(j, 0, sizeof(*j));
	j->op = op;
	j->timeout_ns = timeout_ns;
	assert(!pthread_create(&j->t, NULL, job_main, j));
}

/*
 * Wait for the queue `want` while the timed job `j` still waits: false
 * if it timed out first (the main thread was descheduled for longer than
 * its deadline), so the caller retries with a longer one instead of
 * waiting forever for a queue that cannot form.
 */
static bool wait_queue_while_timed(const char *want, struct job *j)
{
	char buf[32];

	for (;;) {
		qrwsem_queue_snapshot(&S, buf, sizeof(buf));
		if (!strcmp(buf, want))
			return true;
		if (qa_read_acquire(&j->got) == 2)
			return false;
		sched_yield();
	}
}

static void job_wait_got(struct job *j)
{
	while (!qa_read_acquire(&j->got))
		sched_yield();
}

static void job_finish(struct job *j)
{
	qa_write_release(&j->release, 1);
	assert(!pthread_join(j->t, NULL));
}

/* ---- tests ---------------------------------------------------------------- */

static void test_layout(void)
{
	qlock_rwsem_t z = QLOCK_RWSEM_INIT;

	memset(&S, 0, sizeof(S));
	assert(!memcmp(&S, &z, sizeof(S)));
	O->down_read(&S);
	assert(count() == QRWSEM_READER_BIAS);
	assert(S.owner & QRWSEM_READER_OWNED);
	assert(qlock_down_read_trylock(&S));
	assert(count() == 2 * QRWSEM_READER_BIAS);
	assert(!qlock_down_write_trylock(&S));
	assert(qlock_rwsem_is_locked(&S) && !qlock_rwsem_is_contended(&S));
	O->up_read(&S);
	O->up_read(&S);
	assert(count() == 0 && !qlock_rwsem_is_locked(&S));

	O->down_write(&S);
	assert(count() == QRWSEM_WRITER_LOCKED);
	assert(S.owner && !(S.owner & QRWSEM_OWNER_FLAGS));
	assert(!qlock_down_read_trylock(&S) && !qlock_down_write_trylock(&S));
	O->up_write(&S);
	assert(count() == 0 && S.owner == 0);

	O->down_write(&S);
	O->downgrade(&S);
	assert(count() == QRWSEM_READER_BIAS);
	assert(S.owner & QRWSEM_READER_OWNED);
	assert(qlock_down_read_trylock(&S));
	O->up_read(&S);
	O->up_read(&S);
	assert(count() == 0);
}

static void test_timed_args(void)
{
	struct timespec bad_ns = { 1, 1000000000L }, neg = { -1, 0 };
	struct timespec past = { 0, 0 }, far = qc_deadline_in(60ull * 1000000000u);
	struct timespec rt;

	assert(O->down_read_timed(&S, &bad_ns, CLOCK_MONOTONIC) == EINVAL);
	assert(O->down_write_timed(&S, &neg, CLOCK_MONOTONIC) == EINVAL);
	assert(O->down_read_timed(&S, &far, CLOCK_PROCESS_CPUTIME_ID) == EINVAL);
	assert(O->down_write_timed(&S, &far, CLOCK_THREAD_CPUTIME_ID) == EINVAL);
	assert(count() == 0);

	/* Free: even a past deadline takes it. */
	assert(O->down_write_timed(&S, &past, CLOCK_MONOTONIC) == 0);
	assert(O->down_read_timed(&S, &past, CLOCK_REALTIME) == ETIMEDOUT);
	assert(O->down_write_timed(&S, &past, CLOCK_MONOTONIC) == ETIMEDOUT);
	/* A short CLOCK_REALTIME deadline while held. */
	clock_gettime(CLOCK_REALTIME, &rt);
	rt.tv_nsec += 2000000;
	if (rt.tv_nsec >= 1000000000L) {
		rt.tv_sec++;
		rt.tv_nsec -= 1000000000L;
	}
	assert(O->down_read_timed(&S, &rt, CLOCK_REALTIME) == ETIMEDOUT);
	assert(count() == QRWSEM_WRITER_LOCKED);
	O->up_write(&S);
	assert(O->down_read_timed(&S, &past, CLOCK_REALTIME) == 0);
	assert(O->down_read_timed(&S, NULL, CLOCK_MONOTONIC) == 0);
	assert(O->down_write_timed(&S, &past, CLOCK_MONOTONIC) == ETIMEDOUT);
	O->up_read(&S);
	O->up_read(&S);
	assert(count() == 0 && qrwsem_queue_snapshot(&S, NULL, 0) == 0);
}

/* A reader times out under a writer: nothing of it is left behind. */
static void test_timeout_reader_alone(void)
{
	struct job r;

	O->down_write(&S);
	job_start(&r, J_READ_TIMED, 5000000);
	assert(!pthread_join(r.t, NULL));
	assert(r.result == ETIMEDOUT);
	assert(count() == QRWSEM_WRITER_LOCKED);
	assert(qrwsem_queue_snapshot(&S, NULL, 0) == 0);
	O->up_write(&S);
	assert(count() == 0);
}

/* First waiter, a timed writer, gives up: the reader behind it still runs. */
static void test_timeout_first_writer(void)
{
	struct job w, r;

	for (uint64_t t = 30000000;; t *= 2) {
		O->down_write(&S);
		job_start(&w, J_WRITE_TIMED, t);
		if (wait_queue_while_timed("W", &w)) {
			job_start(&r, J_READ, 0);
			if (wait_queue_while_timed("WR", &w))
				break;
			/* The writer timed out before the reader queued. */
			assert(!pthread_join(w.t, NULL));
			O->up_write(&S);
			job_wait_got(&r);
			job_finish(&r);
		} else {
			assert(!pthread_join(w.t, NULL));
			O->up_write(&S);
		}
		assert(count() == 0);
	}
	assert(!pthread_join(w.t, NULL));
	assert(w.result == ETIMEDOUT);
	wait_queue("R");
	/* The reader has waited long enough to hold the hand-off by now. */
	assert((count() & ~QRWSEM_FLAG_HANDOFF) ==
	       (QRWSEM_WRITER_LOCKED | QRWSEM_FLAG_WAITERS));
	assert(!qa_read(&r.got));
	O->up_write(&S);
	job_wait_got(&r);
	assert(count() == QRWSEM_READER_BIAS);
	job_finish(&r);
	assert(count() == 0);
}

/* A reader behind a writer gives up; the writer gets the lock. */
static void test_timeout_reader_behind_writer(void)
{
	struct job w, r;

	O->down_read(&S);
	job_start(&w, J_WRITE, 0);
	wait_queue("W");
	job_start(&r, J_READ_TIMED, 5000000);
	assert(!pthread_join(r.t, NULL));
	assert(r.result == ETIMEDOUT);
	wait_queue("W");
	assert((count() & ~QRWSEM_FLAG_HANDOFF) ==
	       (QRWSEM_READER_BIAS | QRWSEM_FLAG_WAITERS));
	O->up_read(&S);
	job_wait_got(&w);
	assert(count() == QRWSEM_WRITER_LOCKED);
	job_finish(&w);
	assert(count() == 0);
}

/*
 * With a zero hand-off time, the first writer sets HANDOFF at once; it
 * times out with a second writer queued: HANDOFF stays for the new first
 * waiter, which gets the lock when the reader leaves, and clears it.
 */
static void test_timeout_handoff_setter(void)
{
	long old = qlock_tune_get(QLOCK_TUNE_HANDOFF_NS);
	struct job w1, w2;

	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0);
	for (uint64_t t = 30000000;; t *= 2) {
		O->down_read(&S);
		job_start(&w1, J_WRITE_TIMED, t);
		if (wait_queue_while_timed("W", &w1)) {
			while (!(count() & QRWSEM_FLAG_HANDOFF) &&
			       qa_read_acquire(&w1.got) != 2)
				sched_yield();
			/* The hand-off blocks new readers, even trylock. */
			if (qa_read_acquire(&w1.got) != 2)
				assert(!qlock_down_read_trylock(&S));
			job_start(&w2, J_WRITE, 0);
			if (wait_queue_while_timed("WW", &w1))
				break;
			/* w1 timed out before w2 queued: w2 gets it. */
			assert(!pthread_join(w1.t, NULL));
			O->up_read(&S);
			job_wait_got(&w2);
			job_finish(&w2);
		} else {
			assert(!pthread_join(w1.t, NULL));
			O->up_read(&S);
		}
		assert(count() == 0);
	}
	assert(!pthread_join(w1.t, NULL));
	assert(w1.result == ETIMEDOUT);
	wait_queue("W");
	assert(count() & QRWSEM_FLAG_WAITERS);
	O->up_read(&S);
	job_wait_got(&w2);
	assert(count() == QRWSEM_WRITER_LOCKED);
	job_finish(&w2);
	assert(count() == 0);
	qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, old);
}

/* Queue R W R behind a writer: who does the unlock admit? */
static void test_wake_rule(void)
{
	struct job r1, w, r2;

	O->down_write(&S);
	job_start(&r1, J_READ, 0);
	wait_queue("R");
	job_start(&w, J_WRITE, 0);
	wait_queue("RW");
	job_start(&r2, J_READ, 0);
	wait_queue("RWR");
	O->up_write(&S);
	job_wait_got(&r1);
	if (!O->front) {
		/* Every queued reader, also the one behind the writer. */
		job_wait_got(&r2);
		wait_queue("W");
		assert((count() & QRWSEM_READER_MASK) == 2 * QRWSEM_READER_BIAS);
		job_finish(&r1);
		assert(!qa_read(&w.got));
		job_finish(&r2);
		job_wait_got(&w);
		job_finish(&w);
	} else {
		/* Only the reader in front of the writer. */
		wait_queue("WR");
		assert((count() & QRWSEM_READER_MASK) == QRWSEM_READER_BIAS);
		assert(!qa_read(&r2.got));
		job_finish(&r1);
		job_wait_got(&w);
		assert(!qa_read(&r2.got));
		job_finish(&w);
		job_wait_got(&r2);
		job_finish(&r2);
	}
	assert(count() == 0 && qrwsem_queue_snapshot(&S, NULL, 0) == 0);
}

/* downgrade_write admits the queued readers (by the variant's rule). */
static void test_downgrade(void)
{
	struct job r1, w, r2;

	O->down_write(&S);
	job_start(&r1, J_READ, 0);
	wait_queue("R");
	job_start(&w, J_WRITE, 0);
	wait_queue("RW");
	job_start(&r2, J_READ, 0);
	wait_queue("RWR");
	O->downgrade(&S);
	job_wait_got(&r1);
	if (!O->front)
		job_wait_got(&r2);
	/* We still read: the writer waits. */
	assert(!qa_read(&w.got));
	assert(!(count() & QRWSEM_WRITER_LOCKED));
	job_finish(&r1);
	assert(!qa_read(&w.got));
	O->up_read(&S);
	if (!O->front)
		job_finish(&r2);
	job_wait_got(&w);
	job_finish(&w);
	if (O->front) {
		job_wait_got(&r2);
		job_finish(&r2);
	}
	assert(count() == 0 && qrwsem_queue_snapshot(&S, NULL, 0) == 0);
}

int main(void)
{
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		O = &variants[v];
		qlock_rwsem_init(&S);
		test_layout();
		test_timed_args();
		test_timeout_reader_alone();
		test_timeout_first_writer();
		test_timeout_reader_behind_writer();
		test_timeout_handoff_setter();
		test_wake_rule();
		test_downgrade();
		printf("test_rwsem_api: %s ok\n", O->name);
	}
	return 0;
}
