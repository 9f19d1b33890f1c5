/* SPDX-License-Identifier: MIT */
/*
 * An uncontended TP condition-variable wait makes no FUTEX_WAKE: one
 * thread, timed waits that time out (past and near deadlines), nobody
 * else on the mutex or the condition variable.  Counted in process with
 * the library's futex call counters (src/core/lockevent.h), which count every
 * wake the futex layer makes, per lock class.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>

#include "core/futex.h"
#include "core/lockevent.h"
#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"

enum { WAITS = 100 };

static uint64_t wakes(enum qc_class cls)
{
	struct qc_class_stats st;
	uint64_t n = 0;

	qc_stats_read(cls, &st);
	for (int op = 0; op < QC_NR_OPS; op++)
		n += st.fx[op][QC_FX_WAKE];
	return n;
}

int main(void)
{
	qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
	qlock_tp_cond_t c = QLOCK_TP_COND_INIT;
	struct timespec past = { 0, 0 };
	uint64_t mw, cw;

	qc_stats_reset();
	qlock_tp_mutex_lock(&m);
	for (int i = 0; i < WAITS; i++) {
		struct timespec soon = qc_deadline_in(1000);

		assert(qlock_tp_cond_timedwait(&c, &m, i & 1 ? &soon : &past,
					       CLOCK_MONOTONIC) == ETIMEDOUT);
		assert(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
	}
	qlock_tp_mutex_unlock(&m);
	qlock_tp_cond_destroy(&c);
	mw = wakes(QC_CLASS_tp_mutex);
	cw = wakes(QC_CLASS_tp_cond);
	printf("tp_cond: %d uncontended timed waits: %llu FUTEX_WAKE on the "
	       "mutex, %llu on the condvar\n", WAITS, (unsigned long long)mw,
	       (unsigned long long)cw);
	fflush(stdout);
	assert(mw == 0 && cw == 0);
	assert(m.val == 0 && m.serial == 0);
	return 0;
}
