/* SPDX-License-Identifier: MIT */
/*
 * Lock event and futex counters: per class, summed over live and exited
 * threads, reset to zero, names round-trip.
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "core/lockevent.h"

#define PER_THREAD 1000
#define NTHREADS 4

static void *count_events(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		qc_event_inc(QC_CLASS_ww_mutex, QC_EV_slowpath);
		qc_fx_add(QC_CLASS_ww_rwlock, QC_OP_RLOCK, QC_FX_WAIT, 1);
	}
	qc_event_add(QC_CLASS_ticket, QC_EV_spin, 7);
	return NULL;
}

static void check_counts_fold_in_exited_threads(void)
{
	pthread_t t[NTHREADS];
	struct qc_class_stats st;

	qc_stats_reset();
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, count_events, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	count_events(NULL); /* and the live main thread */

	qc_stats_read(QC_CLASS_ww_mutex, &st);
#ifndef QLOCK_NO_LOCK_EVENTS
	assert(st.ev[QC_EV_slowpath] == (NTHREADS + 1) * PER_THREAD);
#endif
	assert(st.ev[QC_EV_sleep] == 0);
	qc_stats_read(QC_CLASS_ww_rwlock, &st);
	assert(st.fx[QC_OP_RLOCK][QC_FX_WAIT] == (NTHREADS + 1) * PER_THREAD);
	assert(st.fx[QC_OP_LOCK][QC_FX_WAIT] == 0);
	qc_stats_read(QC_CLASS_ticket, &st);
#ifndef QLOCK_NO_LOCK_EVENTS
	assert(st.ev[QC_EV_spin] == 7 * (NTHREADS + 1));
#endif
}

static void check_reset(void)
{
	struct qc_class_stats st, zero;

	qc_stats_reset();
	memset(&zero, 0, sizeof(zero));
	for (int c = 0; c < QC_NR_CLASSES; c++) {
		qc_stats_read((enum qc_class)c, &st);
		assert(!memcmp(&st, &zero, sizeof(st)));
	}
}

static void check_names(void)
{
	assert(qc_class_lookup("ww-mutex") == QC_CLASS_ww_mutex);
	assert(qc_class_lookup("ww-rwlock") == QC_CLASS_ww_rwlock);
	assert(qc_class_lookup("no-such-class") == -1);
	for (int c = 0; c < QC_NR_CLASSES; c++)
		assert(qc_class_lookup(qc_class_name((enum qc_class)c)) == c);
	assert(!strcmp(qc_event_name(QC_EV_slowpath), "slowpath"));
	assert(qc_op_name(QC_OP_RUNLOCK) != NULL);
}

int main(void)
{
	check_counts_fold_in_exited_threads();
	check_reset();
	check_names();
	return 0;
}
