/* SPDX-License-Identifier: MIT */
#include "lockevent.h"

#include <string.h>
#ifndef QLOCK_MODEL
#include <pthread.h>
#include <sys/mman.h>
#endif

__thread struct qc_stats_block *qc_stats_self
	__attribute__((tls_model("initial-exec")));
__thread uint32_t qc_off_cpu_waits
	__attribute__((tls_model("initial-exec")));

/* Every block ever made; pushed lock-free, never removed. */
static struct qc_stats_block *all_blocks;
/* Counts of threads that have exited. */
static struct qc_class_stats exited[QC_NR_CLASSES];

#ifndef QLOCK_MODEL
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
#endif

static void fold_into(struct qc_class_stats *dst,
		      const struct qc_class_stats *src, int atomically)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t n = sizeof(*src) / sizeof(uint64_t);

	for (size_t i = 0; i < n; i++) {
		uint64_t v = qa_read(&s[i]);

		if (!v)
			continue;
		if (atomically)
			qa_fetch_add_relaxed(&d[i], v);
		else
			d[i] += v;
	}
}

static inline void zero_block(struct qc_stats_block *b)
{
	uint64_t *p = (uint64_t *)b->cls;

	for (size_t i = 0; i < sizeof(b->cls) / (sizeof(uint64_t)); i++)
		qa_write(&p[i], 0);
}

#ifndef QLOCK_MODEL

/* Thread exit: keep the counts, give the block to the next new thread. */
static void stats_detach(void *arg)
{
	struct qc_stats_block *b = arg;

	for (int c = 0; c < QC_NR_CLASSES; c++)
		fold_into(&exited[c], &b->cls[c], 1);
	zero_block(b);
	qc_stats_self = 0;
	/* Pairs with the acquire cmpxchg in qc_stats_attach(). */
	qa_write_release(&b->in_use, 0);
}

static void make_exit_key(void)
{
	(void)pthread_key_create(&exit_key, stats_detach);
}

/*
 * First count of a thread.  mmap rather than malloc: this can run in a
 * signal handler that takes a lock before its thread ever did.
 */
struct qc_stats_block *qc_stats_attach(void)
{
	struct qc_stats_block *b;

	for (b = qa_read_acquire(&all_blocks); b; b = b->next) {
		if (!qa_read(&b->in_use) &&
		    qa_cmpxchg_acquire(&b->in_use, 0, 1) == 0)
			goto found;
	}
	b = mmap(0, sizeof(*b), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		/* Counting must never fail a lock: count into a shared sink. */
		static struct qc_stats_block sink = { .in_use = 1 };
		return &sink;
	}
	b->in_use = 1;
	b->next = qa_read(&all_blocks);
	/* Release: a reader walking the list sees an initialised block. */
	while (!qa_try_cmpxchg_release(&all_blocks, &b->next, b))
		;
found:
	qc_stats_self = b;
	(void)pthread_once(&exit_key_once, make_exit_key);
	(void)pthread_setspecific(exit_key, b);
	return b;
}

#else /* QLOCK_MODEL: one block per model thread, kept after it exits */

struct qc_stats_block *qc_stats_attach(void)
{
	static struct qc_stats_block blocks[QC_MODEL_THREADS];
	struct qc_stats_block *b = &blocks[qc_model_self()];

	if (!b->in_use) {
		b->in_use = 1;
		b->next = qa_read(&all_blocks);
		while (!qa_try_cmpxchg_release(&all_blocks, &b->next, b))
			;
	}
	qc_stats_self = b;
	return b;
}

#endif /* QLOCK_MODEL */

void qc_stats_read(enum qc_class c, struct qc_class_stats *out)
{
	memset(out, 0, sizeof(*out));
	fold_into(out, &exited[c], 0);
	for (struct qc_stats_block *b = qa_read_acquire(&all_blocks); b;
	     b = b->next)
		fold_into(out, &b->cls[c], 0);
}

void qc_stats_reset(void)
{
	uint64_t *p = (uint64_t *)exited;

	for (size_t i = 0; i < sizeof(exited) / (sizeof(uint64_t)); i++)
		qa_write(&p[i], 0);
	for (struct qc_stats_block *b = qa_read_acquire(&all_blocks); b;
	     b = b->next)
		zero_block(b);
}

static const char *const class_names[] = {
#define LOCK_CLASS(id, name) name,
#include "lockclass_list.h"
#undef LOCK_CLASS
};

static const char *const event_names[] = {
#define LOCK_EVENT(name) #name,
#include "lockevent_list.h"
#undef LOCK_EVENT
};

static const char *const op_names[] = {
	"lock", "unlock", "rlock", "runlock", "other",
};

const char *qc_class_name(enum qc_class c)
{
	return (unsigned)c < QC_NR_CLASSES ? class_names[c] : "?";
}

const char *qc_event_name(enum qc_event e)
{
	return (unsigned)e < QC_NR_EVENTS ? event_names[e] : "?";
}

const char *qc_op_name(enum qc_op op)
{
	return (unsigned)op < QC_NR_OPS ? op_names[op] : "?";
}

int qc_class_lookup(const char *name)
{
	for (int c = 0; c < QC_NR_CLASSES; c++)
		if (!strcmp(class_names[c], name))
			return c;
	return -1;
}
