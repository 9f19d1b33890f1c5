/* SPDX-License-Identifier: MIT */
/*
 * OSQ (src/core/osq.c):
 *  - single thread: an empty OSQ is taken at once, a second OSQ while
 *    queued is refused (the per-thread guard), unlock empties it;
 *  - aborts: while the main thread holds the OSQ, spinners with short
 *    deadlines all give up, and the queue is back to "held by main";
 *  - an abort in the middle: A (no deadline) queues, B and C (short
 *    deadlines) queue behind it and give up; main's unlock must reach A
 *    (no lost hand-off through the unqueued nodes);
 *  - stress: 16 threads (oversubscribed on 2 CPUs), half with no
 *    deadline (must always get the OSQ), half with deadlines of 0-20 us;
 *    holders update plain data and check they are alone; counts add up at
 *    the end.  Queued spinners yield now and then, so even a queue of
 *    patient spinners longer than the CPU count keeps moving.  Each
 *    thread makes ITERS attempts or stops after STRESS_S seconds: a FIFO
 *    queue of spinners hands the OSQ to threads that other processes
 *    keep off the CPUs, so on a busy machine it moves a hundred times
 *    slower (19 minutes at a load average of 40-80, against 13 s quiet);
 *    the checks are of counts, whatever the number of attempts;
 *  - a thread without a slot gets false.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/osq.h"
#include "core/slot.h"

#if defined(__SANITIZE_THREAD__)
enum { ITERS = 2000 };
#else
enum { ITERS = 20000 };
#endif

static struct qc_osq osq = QC_OSQ_INIT;

static void test_single(void)
{
	struct qc_osq other = QC_OSQ_INIT;

	assert(!qc_osq_is_locked(&osq));
	assert(qc_osq_lock(&osq, 0)); /* empty: no deadline check at all */
	assert(qc_osq_is_locked(&osq));
	assert(!qc_osq_lock(&other, UINT64_MAX)); /* already in an OSQ */
	assert(!qc_osq_is_locked(&other));
	qc_osq_unlock(&osq);
	assert(!qc_osq_is_locked(&osq));
	assert(qc_osq_lock(&other, 0));
	qc_osq_unlock(&other);
	assert(other.tail == 0);
}

/* ---- aborts while the OSQ is held -------------------------------------- */

static uint32_t aborted;

static void *short_spinner(void *arg)
{
	uint64_t ns = (uint64_t)(uintptr_t)arg;

	assert(!qc_osq_lock(&osq, qc_now_ns() + ns));
	qa_fetch_add(&aborted, 1);
	return NULL;
}

static void test_abort_all(void)
{
	pthread_t t[6];
	uint32_t mine;

	assert(qc_osq_lock(&osq, UINT64_MAX));
	mine = qa_read(&osq.tail);
	aborted = 0;
	for (int i = 0; i < 6; i++)
		assert(!pthread_create(&t[i], NULL, short_spinner,
				       (void *)(uintptr_t)(1000 * (i + 1) * 200)));
	for (int i = 0; i < 6; i++)
		assert(!pthread_join(t[i], NULL));
	assert(aborted == 6);
	/* Every spinner unqueued itself: the tail is main again. */
	assert(qa_read(&osq.tail) == mine);
	qc_osq_unlock(&osq);
	assert(!qc_osq_is_locked(&osq));
}

/* ---- an abort between a waiting spinner and the head ------------------- */

static uint32_t a_slot1, a_got;

static void *spinner_a(void *arg)
{
	(void)arg;
	qa_write(&a_slot1, (uint32_t)qc_slot_self() + 1);
	assert(qc_osq_lock(&osq, UINT64_MAX));
	qa_write_release(&a_got, 1);
	qc_osq_unlock(&osq);
	return NULL;
}

static void test_abort_middle(void)
{
	pthread_t a, b[2];

	for (int round = 0; round < 20; round++) {
		a_slot1 = 0;
		a_got = 0;
		assert(qc_osq_lock(&osq, UINT64_MAX));
		assert(!pthread_create(&a, NULL, spinner_a, NULL));
		while (qa_read(&a_slot1) == 0 ||
		       qa_read(&osq.tail) != qa_read(&a_slot1))
			sched_yield();
		/* B and C queue behind A (and maybe behind each other). */
		for (int i = 0; i < 2; i++)
			assert(!pthread_create(&b[i], NULL, short_spinner,
					       (void *)(uintptr_t)(50000 * (round % 3 + i))));
		for (int i = 0; i < 2; i++)
			assert(!pthread_join(b[i], NULL));
		assert(qa_read(&osq.tail) == a_slot1);
		assert(!qa_read(&a_got));
		qc_osq_unlock(&osq);
		assert(!pthread_join(a, NULL));
		assert(a_got);
		assert(!qc_osq_is_locked(&osq));
	}
}

/* ---- stress ------------------------------------------------------------ */

enum { NTHREADS = 16, STRESS_S = 10 };

static uint64_t data_a, data_b; /* plain, protected by the OSQ */
static int inside;              /* plain: 1 while someone holds the OSQ */
static uint64_t got[NTHREADS], gave_up[NTHREADS], tries[NTHREADS];
static uint64_t stress_end_ns;  /* written before the threads start */

static void *stress(void *arg)
{
	int id = (int)(uintptr_t)arg;
	bool patient = id % 2 == 0;
	uint32_t seed = (uint32_t)id * 2654435761u + 1;

	for (int i = 0;
	     i < ITERS && (i == 0 || qc_now_ns() < stress_end_ns); i++) {
		uint64_t dl;

		tries[id]++;
		seed = seed * 1103515245u + 12345u;
		dl = patient ? UINT64_MAX : qc_now_ns() + (seed >> 16) % 20000;
		if (!qc_osq_lock(&osq, dl)) {
			assert(!patient);
			gave_up[id]++;
			continue;
		}
		assert(inside == 0);
		inside = 1;
		data_a++;
		for (unsigned k = 0; k < (seed >> 8) % 32; k++)
			qa_cpu_relax();
		assert(data_a == data_b + 1);
		data_b++;
		inside = 0;
		got[id]++;
		qc_osq_unlock(&osq);
	}
	return NULL;
}

static void test_stress(void)
{
	pthread_t t[NTHREADS];
	uint64_t total = 0, aborts = 0;

	stress_end_ns = qc_now_ns() + STRESS_S * 1000000000ull;
	for (int i = 0; i < NTHREADS; i++)
		assert(!pthread_create(&t[i], NULL, stress, (void *)(uintptr_t)i));
	for (int i = 0; i < NTHREADS; i++)
		assert(!pthread_join(t[i], NULL));
	for (int i = 0; i < NTHREADS; i++) {
		total += got[i];
		aborts += gave_up[i];
		assert(tries[i] > 0); /* the first try is always made */
		assert(got[i] + gave_up[i] == tries[i]);
		if (i % 2 == 0)
			assert(got[i] == tries[i]);
	}
	assert(total == data_a && data_a == data_b);
	assert(!qc_osq_is_locked(&osq));
	printf("osq stress: %d threads, %llu held, %llu aborted\n", NTHREADS,
	       (unsigned long long)total, (unsigned long long)aborts);
}

/* ---- no slot ----------------------------------------------------------- */

static void *slotless(void *arg)
{
	(void)arg;
	assert(qc_slot_self() == -1);
	assert(!qc_osq_lock(&osq, UINT64_MAX));
	assert(!qc_osq_is_locked(&osq));
	return NULL;
}

static void test_no_slot(void)
{
	int old = qc_slot_limit();
	pthread_t t;

	(void)qc_slot_self(); /* main keeps its slot */
	qc_slot_set_limit(qc_slots_in_use());
	assert(!pthread_create(&t, NULL, slotless, NULL));
	assert(!pthread_join(t, NULL));
	qc_slot_set_limit(old);
}

int main(void)
{
	test_single();
	test_abort_all();
	test_abort_middle();
	test_stress();
	test_no_slot();
	printf("test_osq: ok\n");
	return 0;
}
