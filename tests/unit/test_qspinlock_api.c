/* SPDX-License-Identifier: MIT */
/*
 * qspinlock: word layout and encoding (the default 8-bit pending layout;
 * test_qspinlock_layout1.c covers the 1-bit one), trylock / is_locked /
 * unlock semantics of every variant, pending and queued acquisitions.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "core/atomic.h"
#include "core/lockevent.h"
#include "lock/qspinlock_variants.h"
#include "lockreg.h"
#include "qlock/qspinlock.h"

static uint8_t byte_at(qlock_spinlock_t *l, unsigned shift)
{
	/* Memory byte holding value bits shift..shift+7, on either endian. */
	return ((uint8_t *)&l->val)[QA_BIG_ENDIAN ? 3 - shift / 8 : shift / 8];
}

static void test_layout(void)
{
	qlock_spinlock_t l = QLOCK_SPINLOCK_INIT;

	assert(sizeof(l) == 4);
	/* QLOCK_WORD_ATOMICS_ONLY forces the 1-bit pending layout, which
	 * test_qspinlock_layout1.c checks; the rest holds for both. */
#if QS_PENDING_BITS == 8
	assert(QS_LOCKED_MASK == 0xffu && QS_PENDING_MASK == 0xff00u);
	assert(QS_TAIL_IDX_MASK == 0x30000u && QS_TAIL_SLOT_MASK == 0xfffc0000u);
	assert(QS_LOCKED_VAL == 1 && QS_PENDING_VAL == 0x100 && QS_SLOW_VAL == 3);
	assert(QS_TAIL_SLOT_MAX == 16383);
	for (int slot = 0; slot < 16383; slot += 1001)
		for (int idx = 0; idx < QS_MAX_NODES; idx++) {
			uint32_t t = qs_encode_tail(slot, idx);

			assert(t && !(t & QS_LOCKED_PENDING_MASK));
			assert(qs_tail_slot(t) == slot && qs_tail_idx(t) == idx);
		}
	assert(qs_encode_tail(16382, 3) == 0xffff0000u);
	assert(qs_encode_tail(0, 0) == 1u << 18);
#else
	assert(QS_PENDING_BITS == 1);
#endif

	/* The locked byte is the low-order byte, wherever the CPU keeps it. */
	qlock_spin_lock(&l);
	assert(qa_read(&l.val) == QS_LOCKED_VAL);
	assert(byte_at(&l, 0) == 1 && byte_at(&l, 8) == 0);
	qlock_spin_unlock(&l);
	assert(qa_read(&l.val) == 0);
}


static const char *const names[] = {
	"qspinlock", "qspinlock-cmpxchg-grab", "qspinlock-cmpxchg-wait",
	"qspinlock-spin-only",
};

static void test_semantics(const struct lr_lock *lk)
{
	void *l = lr_new(lk);

	assert(l);
	assert(!qlock_spin_is_locked(l));
	assert(lk->trylock(l));
	assert(qlock_spin_is_locked(l));
	assert(!lk->trylock(l));
	lk->unlock(l);
	assert(!qlock_spin_is_locked(l));
	assert(qa_read(&((qlock_spinlock_t *)l)->val) == 0);
	lk->lock(l);
	assert(!lk->trylock(l));
	assert(qlock_spin_is_locked(l));
	lk->unlock(l);
	assert(lk->trylock(l));
	lk->unlock(l);
	lr_free(lk, l);
}

/* Waiters pile up behind a held lock: one takes the pending path, the
 * rest queue; everyone gets the lock once, the word ends at 0. */
static const struct lr_lock *cur;
static void *cur_lock;
static long in_cs, total;

static void *waiter(void *arg)
{
	(void)arg;
	cur->lock(cur_lock);
	assert(++in_cs == 1);
	total++;
	in_cs--;
	cur->unlock(cur_lock);
	return NULL;
}

static void test_pile_up(const struct lr_lock *lk)
{
	enum { N = 5 };
	pthread_t t[N];
	struct qc_class_stats st;
	uint32_t *w;

	cur = lk;
	cur_lock = lr_new(lk);
	w = &((qlock_spinlock_t *)cur_lock)->val;
	total = 0;
	qc_stats_reset();
	lk->lock(cur_lock);
	for (int i = 0; i < N; i++)
		assert(!pthread_create(&t[i], NULL, waiter, NULL));
	/* Wait until someone queued (tail set) and pending is taken or the
	 * waiters gave up on it. */
	while (!(qa_read(w) & QS_TAIL_MASK))
		sched_yield();
	lk->unlock(cur_lock);
	for (int i = 0; i < N; i++)
		assert(!pthread_join(t[i], NULL));
	assert(total == N);
	assert(qa_read(w) == 0);
	qc_stats_read(QC_CLASS_qspinlock, &st);
	assert(st.ev[QC_EV_slowpath] >= 1);
	assert(st.ev[QC_EV_lock_queued] + st.ev[QC_EV_lock_pending] +
	       st.ev[QC_EV_steal] >= 1);
	lr_free(lk, cur_lock);
}

int main(void)
{
	test_layout();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct lr_lock *lk = lr_find(names[i]);

		assert(lk && lk->size == 4);
		assert(!strcmp(lk->stats_class, "qspinlock"));
		test_semantics(lk);
		test_pile_up(lk);
	}
	return 0;
}
