/* SPDX-License-Identifier: MIT */
/*
 * rwsem stress beyond the generic rig, both wake-up variants:
 *  - invariants: 4, 8 and 16 threads (oversubscribed on 2 CPUs) mix
 *    down_write, down_write + downgrade_write, down_read, the trylocks and
 *    the timed variants with deadlines of 0-200 us (so timeouts happen
 *    while others queue, spin and hand off); writers keep a == b and bump a
 *    write counter, readers (and downgraders) check a == b and that no
 *    writer is inside; at the end the counters match and the lock is idle;
 *    run with the default tunables and with hand-off 0 / no owner spinning;
 *  - a writer among continuous readers (4 reader threads whose read
 *    sections overlap) gets the lock 20 times; readers among continuous
 *    writers (4 writer threads) get it 20 times.  Each acquisition must
 *    come within a generous bound (10 s: a hang check, not a timing).
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"
#include "lock/rwsem_variants.h"
#include "qlock/qlock.h"
#include "qlock/rwsem.h"

#if defined(__SANITIZE_THREAD__)
enum { ITERS = 1500 };
#else
enum { ITERS = 12000 };
#endif

static bool front;
static qlock_rwsem_t S;

static void down_read(void) { front ? qrwsem_front_down_read(&S) : qlock_down_read(&S); }
static void up_read(void) { front ? qrwsem_front_up_read(&S) : qlock_up_read(&S); }
static void down_write(void) { front ? qrwsem_front_down_write(&S) : qlock_down_write(&S); }
static void up_write(void) { front ? qrwsem_front_up_write(&S) : qlock_up_write(&S); }
static void downgrade(void) { front ? qrwsem_front_downgrade_write(&S) : qlock_downgrade_write(&S); }
static int down_read_timed(const struct timespec *abs)
{
	return front ? qrwsem_front_down_read_timed(&S, abs, CLOCK_MONOTONIC)
		     : qlock_down_read_timed(&S, abs, CLOCK_MONOTONIC);
}
static int down_write_timed(const struct timespec *abs)
{
	return front ? qrwsem_front_down_write_timed(&S, abs, CLOCK_MONOTONIC)
		     : qlock_down_write_timed(&S, abs, CLOCK_MONOTONIC);
}

/* ---- invariant stress -------------------------------------------------- */

static uint64_t a, b, writes;     /* plain, protected by S */
static uint32_t writer_inside;    /* atomic: a writer is in its section */
static uint64_t done_writes[16], timeouts[16];

static void write_section(void)
{
	assert(qa_read(&writer_inside) == 0);
	qa_write(&writer_inside, 1);
	assert(a == b);
	a++;
	for (int k = 0; k < 8; k++)
		qa_cpu_relax();
	b++;
	writes++;
	qa_write(&writer_inside, 0);
}

static void read_section(void)
{
	uint64_t x = a;

	assert(qa_read(&writer_inside) == 0);
	for (int k = 0; k < 8; k++)
		qa_cpu_relax();
	assert(x == b && a == b);
}

static void *stress(void *arg)
{
	int id = (int)(uintptr_t)arg;
	uint32_t seed = (uint32_t)id * 2654435761u + 7;

	for (int i = 0; i < ITERS; i++) {
		struct timespec dl;

		seed = seed * 1103515245u + 12345u;
		dl = qc_deadline_in((seed >> 12) % 200000);
		switch ((seed >> 24) % 8) {
		case 0: case 1:
			down_write();
			write_section();
			done_writes[id]++;
			up_write();
			break;
		case 2:
			down_write();
			write_section();
			done_writes[id]++;
			downgrade();
			read_section();
			up_read();
			break;
		case 3:
			if (qlock_down_write_trylock(&S)) {
				write_section();
				done_writes[id]++;
				up_write();
			}
			break;
		case 4:
			if (down_write_timed(&dl) == 0) {
				write_section();
				done_writes[id]++;
				up_write();
			} else {
				timeouts[id]++;
			}
			break;
		case 5:
			if (down_read_timed(&dl) == 0) {
				read_section();
				up_read();
			} else {
				timeouts[id]++;
			}
			break;
		case 6:
			if (qlock_down_read_trylock(&S)) {
				read_section();
				up_read();
			}
			break;
		default:
			down_read();
			read_section();
			up_read();
			break;
		}
	}
	return NULL;
}

static void run_stress(int n)
{
	pthread_t t[16];
	uint64_t total = 0, to = 0;

	a = b = writes = 0;
	for (int i = 0; i < n; i++) {
		done_writes[i] = timeouts[i] = 0;
		assert(!pthread_create(&t[i], NULL, stress, (void *)(uintptr_t)i));
	}
	for (int i = 0; i < n; i++)
		assert(!pthread_join(t[i], NULL));
	for (int i = 0; i < n; i++) {
		total += done_writes[i];
		to += timeouts[i];
	}
	assert(total == writes && a == writes && b == writes);
	assert(S.count == 0 && S.wait_lock == 0 && S.wait_list == NULL);
	assert(S.osq == 0);
	printf("  %s %2d threads: %llu writes, %llu timeouts\n",
	       front ? "rwsem-wake-front" : "rwsem", n,
	       (unsigned long long)writes, (unsigned long long)to);
}

/* ---- starvation: one side among a continuous stream of the other ------- */

enum { WANT = 20 };
static const uint64_t BOUND_NS = 10ull * 1000000000u;

static uint32_t stop;

static void *continuous(void *arg)
{
	bool readers = arg != NULL;

	while (!qa_read_acquire(&stop)) {
		if (readers) {
			down_read();
			read_section();
			for (int k = 0; k < 200; k++)
				qa_cpu_relax();
			up_read();
		} else {
			down_write();
			write_section();
			up_write();
		}
	}
	return NULL;
}

static void starvation(bool victim_is_writer)
{
	pthread_t t[4];
	uint64_t worst = 0;

	qa_write(&stop, 0);
	for (int i = 0; i < 4; i++)
		assert(!pthread_create(&t[i], NULL, continuous,
				       victim_is_writer ? (void *)&S : NULL));
	for (int i = 0; i < WANT; i++) {
		uint64_t t0 = qc_now_ns(), dt;

		if (victim_is_writer) {
			down_write();
			write_section();
			up_write();
		} else {
			down_read();
			read_section();
			up_read();
		}
		dt = qc_now_ns() - t0;
		if (dt > worst)
			worst = dt;
		assert(dt < BOUND_NS);
	}
	qa_write_release(&stop, 1);
	for (int i = 0; i < 4; i++)
		assert(!pthread_join(t[i], NULL));
	assert(S.count == 0 && S.wait_list == NULL);
	printf("  %s: a %s among 4 continuous %s: %d acquisitions, worst wait %.3f ms\n",
	       front ? "rwsem-wake-front" : "rwsem",
	       victim_is_writer ? "writer" : "reader",
	       victim_is_writer ? "readers" : "writers", WANT, worst / 1e6);
}

int main(void)
{
	static const int counts[] = { 4, 8, 16 };
	long handoff = qlock_tune_get(QLOCK_TUNE_HANDOFF_NS);
	long spin = qlock_tune_get(QLOCK_TUNE_OWNER_SPIN_NS);
	struct qc_class_stats st;

	for (int v = 0; v < 2; v++) {
		front = v == 1;
		qlock_rwsem_init(&S);
		for (int tune = 0; tune < 2; tune++) {
			qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, tune ? 0 : handoff);
			qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, tune ? 0 : spin);
			for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
				run_stress(counts[c]);
		}
		qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, handoff);
		qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS, spin);
		starvation(true);
		starvation(false);
	}
	qc_stats_read(QC_CLASS_rwsem, &st);
	printf("test_rwsem_stress: ok (events: slowpath %llu, sleep %llu, "
	       "handoff %llu, timeout %llu, steal %llu, opt_lock %llu, "
	       "read_wake %llu)\n",
	       (unsigned long long)st.ev[QC_EV_slowpath],
	       (unsigned long long)st.ev[QC_EV_sleep],
	       (unsigned long long)st.ev[QC_EV_handoff],
	       (unsigned long long)st.ev[QC_EV_timeout],
	       (unsigned long long)st.ev[QC_EV_steal],
	       (unsigned long long)st.ev[QC_EV_rwsem_opt_lock],
	       (unsigned long long)st.ev[QC_EV_read_wake]);
	return 0;
}
