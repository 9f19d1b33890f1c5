/* SPDX-License-Identifier: MIT */
#include "slot.h"

#include <stdint.h>
#ifndef QLOCK_MODEL
#include <pthread.h>
#endif

#include "qlock/qlock.h"

__thread int qc_slot_plus1 __attribute__((tls_model("initial-exec")));

#define WORDS ((QLOCK_MAX_THREADS + 63) / 64)

static int slot_limit = QLOCK_MAX_THREADS;
static int slot_count;

#ifndef QLOCK_MODEL
static uint64_t slot_map[WORDS];
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;

static void slot_release(void *arg)
{
	int s = (int)(intptr_t)arg - 1;

	qc_slot_plus1 = 0;
	qa_fetch_sub_relaxed(&slot_count, 1);
	/*
	 * Release: this thread's last use of its per-slot nodes happens
	 * before the next owner's first (acquire in qc_slot_acquire()).
	 */
	qa_fetch_andnot_release(&slot_map[s / 64], (uint64_t)1 << (s % 64));
}

static void make_slot_key(void)
{
	(void)pthread_key_create(&slot_key, slot_release);
}

static int claim_free_bit(int limit)
{
	for (int w = 0; w * 64 < limit; w++) {
		uint64_t m = qa_read(&slot_map[w]);

		while (~m) {
			int b = qa_ctz64(~m);
			int s = w * 64 + b;

			if (s >= limit)
				break;
			/* Acquire: pairs with slot_release() of the last owner. */
			if (qa_try_cmpxchg_acquire(&slot_map[w], &m,
						   m | ((uint64_t)1 << b)))
				return s;
		}
	}
	return -1;
}

int qc_slot_acquire(void)
{
	int s = claim_free_bit(qa_read(&slot_limit));

	if (s < 0)
		return -1;
	qa_fetch_add_relaxed(&slot_count, 1);
	(void)pthread_once(&slot_key_once, make_slot_key);
	(void)pthread_setspecific(slot_key, (void *)(intptr_t)(s + 1));
	qc_slot_plus1 = s + 1;
	return s;
}

#else /* QLOCK_MODEL: the slot is the model thread index, kept for good */

int qc_slot_acquire(void)
{
	int s = qc_model_self();

	if (s >= qa_read(&slot_limit))
		return -1;
	qa_fetch_add_relaxed(&slot_count, 1);
	qc_slot_plus1 = s + 1;
	return s;
}

#endif /* QLOCK_MODEL */

int qc_slot_limit(void)
{
	return qa_read(&slot_limit);
}

int qc_slot_set_limit(int n)
{
	if (n < 1)
		n = 1;
	if (n > QLOCK_MAX_THREADS)
		n = QLOCK_MAX_THREADS;
	qa_write(&slot_limit, n);
	return n;
}

int qc_slots_in_use(void)
{
	return qa_read(&slot_count);
}

QLOCK_API int qlock_max_threads(void)
{
	return qc_slot_limit();
}
