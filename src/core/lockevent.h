/* SPDX-License-Identifier: MIT */
/*
 * Lock event and futex call counters, per lock class.
 *
 * Each thread counts into its own block (no locked instructions: a relaxed
 * load and store per event); blocks are listed globally so a reader sums
 * them at any time, and a thread's block is folded into the totals and
 * recycled when the thread exits.  Readings taken while threads run are
 * approximate; readings after the counting threads were joined are exact.
 *
 * Build with QLOCK_NO_LOCK_EVENTS to compile the lock events out (futex
 * call counters stay: they are one add next to a system call).
 */
#ifndef QLOCK_CORE_STATS_H
#define QLOCK_CORE_STATS_H

#include <stdint.h>

#include "atomic.h"

enum qc_class {
#define LOCK_CLASS(id, name) QC_CLASS_##id,
#include "lockclass_list.h"
#undef LOCK_CLASS
	QC_NR_CLASSES
};

enum qc_event {
#define LOCK_EVENT(name) QC_EV_##name,
#include "lockevent_list.h"
#undef LOCK_EVENT
	QC_NR_EVENTS
};

/* The operation a futex call was made for (seed 004 counts them apart). */
enum qc_op {
	QC_OP_LOCK,    /* exclusive (write) lock */
	QC_OP_UNLOCK,  /* exclusive (write) unlock */
	QC_OP_RLOCK,   /* shared (read) lock */
	QC_OP_RUNLOCK, /* shared (read) unlock */
	QC_OP_OTHER,   /* condition variables, downgrades, ... */
	QC_NR_OPS
};

enum qc_fx {
	QC_FX_WAIT,  /* FUTEX_WAIT calls */
	QC_FX_WAKE,  /* FUTEX_WAKE (and requeue) calls */
	QC_FX_WOKEN, /* threads those calls woke */
	QC_NR_FX
};

struct qc_class_stats {
	uint64_t ev[QC_NR_EVENTS];
	uint64_t fx[QC_NR_OPS][QC_NR_FX];
};

struct qc_stats_block {
	struct qc_class_stats cls[QC_NR_CLASSES];
	struct qc_stats_block *next; /* global list, never unlinked */
	uint32_t in_use;             /* owned by a live thread */
};

extern __thread struct qc_stats_block *qc_stats_self
	__attribute__((tls_model("initial-exec")));

struct qc_stats_block *qc_stats_attach(void);

static inline struct qc_class_stats *qc_stats_of(enum qc_class c)
{
	struct qc_stats_block *b = qc_stats_self;

	if (qa_unlikely(b == 0))
		b = qc_stats_attach();
	return &b->cls[c];
}

static inline void qc_event_add(enum qc_class c, enum qc_event e, uint64_t n)
{
#ifndef QLOCK_NO_LOCK_EVENTS
	qa_stat_add(&qc_stats_of(c)->ev[e], n);
#else
	(void)c; (void)e; (void)n;
#endif
}

#define qc_event_inc(c, e) qc_event_add((c), (e), 1)

static inline void qc_fx_add(enum qc_class c, enum qc_op op, enum qc_fx f,
			     uint64_t n)
{
#ifndef QLOCK_MODEL /* counting would only add events for a checker to explore */
	qa_stat_add(&qc_stats_of(c)->fx[op][f], n);
#else
	(void)c; (void)op; (void)f; (void)n;
#endif
}

/* This thread's lock calls whose wait at some point saw the owner off
 * the CPU by its own call (event owner_off_cpu; modulo 2^32): a caller
 * that reads it around a lock call knows whether that wait did. */
extern __thread uint32_t qc_off_cpu_waits
	__attribute__((tls_model("initial-exec")));

/* Sum of every thread's counts for one class (live and exited threads). */
void qc_stats_read(enum qc_class c, struct qc_class_stats *out);
/* Zero all counters; call only while no counting thread runs. */
void qc_stats_reset(void);

const char *qc_class_name(enum qc_class c);
const char *qc_event_name(enum qc_event e);
const char *qc_op_name(enum qc_op op);
/* Class id for a class name, or -1. */
int qc_class_lookup(const char *name);

#endif /* QLOCK_CORE_STATS_H */
