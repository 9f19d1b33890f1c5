/* SPDX-License-Identifier: MIT */
/*
 * qrwlock: size and layout of all three variants (count word values after
 * each operation, writer byte at value bits 0-7 on either endian),
 * single-thread semantics, a writer waiting blocks new readers, and the
 * parking paths: a writer sleeping on readers is woken by the last reader
 * out, a queue head sleeping on a writer is woken by its unlock; the
 * unfair read trylock passes a waiting writer, not a holding one.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "core/atomic.h"
#include "core/lockevent.h"
#include "lock/qrwlock_variants.h"
#include "lockreg.h"
#include "qlock/qrwlock.h"

struct variant {
	const char *name;
	uint32_t waiting, wmask, bias;
};

static const struct variant variants[] = {
	{ "qrwlock", QRW_CUR_WAITING, QRW_CUR_WMASK, QRW_CUR_BIAS },
	{ "qrwlock-2015-cmpxchg-loop", QRW_2015_WAITING, QRW_2015_WMASK,
	  QRW_2015_BIAS },
	{ "qrwlock-2015-byte", QRW_2015_WAITING, QRW_2015_WMASK,
	  QRW_2015_BIAS },
};

static const struct variant *V;
static const struct lr_lock *LK;
static qlock_rwlock_t *L;

static uint32_t word(void) { return qa_read(&L->cnts); }

static uint8_t wbyte_in_memory(void)
{
	/* The memory byte holding value bits 0-7, on either endian. */
	return ((uint8_t *)&L->cnts)[QA_BIG_ENDIAN ? 3 : 0];
}

static void wait_for(bool (*cond)(void))
{
	while (!cond())
		sched_yield();
}

static void test_layout(void)
{
	qlock_rwlock_t z = QLOCK_RWLOCK_INIT, m;

	assert(sizeof(qlock_rwlock_t) == 8);
	assert(z.cnts == 0 && z.wait_lock.val == 0);
	memset(&m, 0, sizeof(m));  /* zero-initialised = unlocked */
	assert(qlock_write_trylock(&m));
	qlock_write_unlock(&m);
	assert(qlock_read_trylock(&m));
	qlock_read_unlock(&m);
	assert(m.cnts == 0);
	/* Current kernel layout and the 2014/2015 one. */
	assert(QRW_CUR_WAITING == 0x100 && QRW_CUR_WMASK == 0x1ff &&
	       QRW_CUR_BIAS == 0x200);
	assert(QRW_2015_WAITING == 0x01 && QRW_2015_WMASK == 0xff &&
	       QRW_2015_BIAS == 0x100);
	assert(QRW_W_LOCKED == 0xff);
	/* The parking values: SLOW still reads as "a writer holds", W_SLEEP
	 * does not, and every writer byte value blocks fast-path readers. */
	assert((QRW_W_SLOW & QRW_W_HELD) && (QRW_W_LOCKED & QRW_W_HELD));
	assert(!(QRW_W_SLEEP & QRW_W_HELD) && !(QRW_2015_WAITING & QRW_W_HELD));
	assert(!(QRW_W_SLEEP & QRW_CUR_WAITING) &&
	       !(QRW_W_SLEEP & QRW_2015_WAITING));
}

static void test_semantics(void)
{
	assert(word() == 0);
	LK->rdlock(L);
	assert(word() == V->bias);
	assert(LK->tryrdlock(L));
	assert(word() == 2 * V->bias);
	assert(!LK->trylock(L));
	LK->rdunlock(L);
	LK->rdunlock(L);
	assert(word() == 0);

	LK->lock(L);
	assert(word() == QRW_W_LOCKED && wbyte_in_memory() == 0xff);
	assert(!LK->trylock(L));
	assert(!LK->tryrdlock(L));
	assert(word() == QRW_W_LOCKED); /* the failed trylock left no count */
	LK->unlock(L);
	assert(word() == 0);
	assert(LK->trylock(L));
	LK->unlock(L);
	assert(word() == 0 && !qlock_rwlock_is_contended(L));
}

/* ---- a writer waits behind a reader; parking --------------------------- */

static int writer_done, reader_done;

static void *writer_thread(void *arg)
{
	(void)arg;
	LK->lock(L);
	qa_write_release(&writer_done, 1);
	LK->unlock(L);
	return NULL;
}

static void *reader_thread(void *arg)
{
	(void)arg;
	LK->rdlock(L);
	qa_write_release(&reader_done, 1);
	LK->rdunlock(L);
	return NULL;
}

static bool writer_waits(void) { return (word() & V->waiting) != 0; }
static bool writer_sleeps(void) { return (word() & QRW_W_SLEEP) != 0; }

/*
 * The waiter has passed its last check and counted its sleep.  Marking
 * the word (SLEEP, SLOW) comes before that check: a release between the
 * two makes the waiter return without sleeping, so a test that asserts a
 * sleep waits for this too (under qemu-aarch64 the window was hit: the
 * sleep count was 0 after the release).
 */
static bool sleep_counted(void)
{
	struct qc_class_stats st;

	qc_stats_read(QC_CLASS_qrwlock, &st);
	return st.ev[QC_EV_sleep] >= 1;
}
static bool head_sleeps(void) { return (word() & QRW_W_BYTE) == QRW_W_SLOW; }
static bool contended(void) { return qlock_rwlock_is_contended(L); }

static void test_writer_waits_for_reader(bool park)
{
	struct qc_class_stats st;
	pthread_t w, r;

	qc_stats_reset();
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, park ? 0 : 512);
	writer_done = reader_done = 0;
	LK->rdlock(L);
	assert(!pthread_create(&w, NULL, writer_thread, NULL));
	wait_for(writer_waits);
	/* A waiting writer stops new readers (fast path and trylock). */
	assert(!LK->tryrdlock(L));
	assert(contended());
	assert(!LK->trylock(L));
	if (V == &variants[0]) {
		/* ... but not an unfair reader; the writer waits for it too. */
		assert(qlock_read_trylock_unfair(L));
		assert(!qa_read_acquire(&writer_done));
		qlock_read_unlock(L);
	}
	if (park) {
		wait_for(writer_sleeps);
		wait_for(sleep_counted);
	}
	assert(!qa_read_acquire(&writer_done));
	/* A new reader queues behind the writer. */
	assert(!pthread_create(&r, NULL, reader_thread, NULL));
	LK->rdunlock(L); /* last reader out: wakes a sleeping writer */
	assert(!pthread_join(w, NULL));
	assert(!pthread_join(r, NULL));
	assert(writer_done && reader_done && word() == 0);
	qc_stats_read(QC_CLASS_qrwlock, &st);
	assert(st.ev[QC_EV_slowpath] >= 1);
	if (park)
		assert(st.ev[QC_EV_sleep] >= 1 && st.ev[QC_EV_wake] >= 1);
}

static void test_head_sleeps_on_writer(bool reader)
{
	struct qc_class_stats st;
	pthread_t t;

	qc_stats_reset();
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 0);
	writer_done = reader_done = 0;
	LK->lock(L);
	assert(!pthread_create(&t, NULL, reader ? reader_thread : writer_thread,
			       NULL));
	wait_for(head_sleeps); /* the queue head marked the writer byte SLOW */
	wait_for(sleep_counted);
	assert(!qa_read_acquire(reader ? &reader_done : &writer_done));
	assert(!LK->tryrdlock(L) && !LK->trylock(L));
	if (V == &variants[0]) /* a holding writer stops an unfair reader */
		assert(!qlock_read_trylock_unfair(L) &&
		       (word() & QRW_W_BYTE) == QRW_W_SLOW);
	LK->unlock(L); /* finds SLOW: stores 0 and wakes */
	assert(!pthread_join(t, NULL));
	assert(word() == 0);
	qc_stats_read(QC_CLASS_qrwlock, &st);
	assert(st.ev[QC_EV_sleep] >= 1 && st.ev[QC_EV_wake] >= 1);
}

int main(void)
{
	test_layout();
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		V = &variants[i];
		LK = lr_find(V->name);
		assert(LK && LK->kind == LR_RWLOCK && LK->size == 8);
		assert(!strcmp(LK->stats_class, "qrwlock"));
		L = lr_new(LK);
		assert(L);
		test_semantics();
		test_writer_waits_for_reader(false);
		test_writer_waits_for_reader(true);
		test_head_sleeps_on_writer(true);
		test_head_sleeps_on_writer(false);
		test_semantics();
		lr_free(LK, L);
	}
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 512);
	return 0;
}
