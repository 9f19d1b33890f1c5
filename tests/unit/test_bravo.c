/* SPDX-License-Identifier: MIT */
/*
 * Read bias (core/bravo.h) on the library's two biased locks, the
 * qrwlock's variant qlock_rwlock_biased_t and an rwsem initialised
 * biased:
 *  - a reader of a biased lock holds it through its slot (the lock word
 *    untouched), nests on it, and releases it;
 *  - a writer revokes: bias off, biased readers drained, the bias back
 *    once the inhibit time has passed and readers take the count word;
 *  - a write trylock fails while a biased reader holds the lock (and
 *    leaves the lock free), a timed write lock times out;
 *  - more biased holds than a thread's record take the count word;
 *  - stress: readers and writers mixed, plain data that writers keep
 *    consistent, and a count of readers inside that a writer must find 0;
 *  - lifetime: the last biased reader's unlock and a writer that frees
 *    the lock at once (ASan sees any later touch);
 *  - fork: the child's table has only the forking thread's slots.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/bravo.h"
#include "qlock/qrwlock.h"
#include "qlock/rwsem.h"

/* ---- the two locks behind one interface ---------------------------------- */

struct lk {
	int kind; /* 0 qrwlock variant, 1 rwsem */
	qlock_rwlock_biased_t q;
	qlock_rwsem_t s;
};

static void lk_init(struct lk *l, int kind)
{
	l->kind = kind;
	l->q = (qlock_rwlock_biased_t)QLOCK_RWLOCK_BIASED_INIT;
	qlock_rwsem_init_biased(&l->s);
}

static const void *lk_key(struct lk *l)
{
	return l->kind ? (const void *)&l->s : (const void *)&l->q;
}

static uint32_t *lk_bias(struct lk *l)
{
	return l->kind ? &l->s.bias : &l->q.bias;
}

static void rd(struct lk *l)
{
	if (l->kind)
		qlock_down_read(&l->s);
	else
		qlock_biased_read_lock(&l->q);
}

static bool tryrd(struct lk *l)
{
	return l->kind ? qlock_down_read_trylock(&l->s)
		       : qlock_biased_read_trylock(&l->q);
}

static void rdun(struct lk *l)
{
	if (l->kind)
		qlock_up_read(&l->s);
	else
		qlock_biased_read_unlock(&l->q);
}

static void wr(struct lk *l)
{
	if (l->kind)
		qlock_down_write(&l->s);
	else
		qlock_biased_write_lock(&l->q);
}

static bool trywr(struct lk *l)
{
	return l->kind ? qlock_down_write_trylock(&l->s)
		       : qlock_biased_write_trylock(&l->q);
}

static void wrun(struct lk *l)
{
	if (l->kind)
		qlock_up_write(&l->s);
	else
		qlock_biased_write_unlock(&l->q);
}

/* Readers counted in the lock word (not the biased ones). */
static uint32_t word_readers(struct lk *l)
{
	if (l->kind)
		return qlock_rwsem_readers(&l->s) - qc_bravo_readers(&l->s);
	return qlock_rwlock_readers(&l->q.rw);
}

/* Turn the bias on as a reader would once its time has come. */
static void bias_on(struct lk *l)
{
	qa_write(lk_bias(l), QC_BRAVO_CAPABLE | QC_BRAVO_ON);
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- single-thread semantics --------------------------------------------- */

static void test_basic(int kind)
{
	struct lk l;

	lk_init(&l, kind);
	bias_on(&l);
	rd(&l);
	assert(qc_bravo_readers(lk_key(&l)) == 1);
	assert(word_readers(&l) == 0);
	rd(&l); /* nests on the slot */
	assert(tryrd(&l));
	assert(qc_bravo_readers(lk_key(&l)) == 1 && word_readers(&l) == 0);
	rdun(&l);
	rdun(&l);
	rdun(&l);
	assert(qc_bravo_readers(lk_key(&l)) == 0);

	/* A writer revokes; readers then take the count word. */
	wr(&l);
	assert(!(qa_read(lk_bias(&l)) & (QC_BRAVO_ON | QC_BRAVO_HOLD)));
	wrun(&l);
	rd(&l);
	assert(word_readers(&l) == 1 && qc_bravo_readers(lk_key(&l)) == 0);
	rdun(&l);

	/* The bias comes back once the inhibit time (64 x a revocation of
	 * a few microseconds) has passed, within a few reads. */
	msleep(20);
	for (int i = 0; i < 64 && !(qa_read(lk_bias(&l)) & QC_BRAVO_ON); i++) {
		rd(&l);
		rdun(&l);
	}
	assert(qa_read(lk_bias(&l)) & QC_BRAVO_ON);
	rd(&l);
	assert(qc_bravo_readers(lk_key(&l)) == 1);
	rdun(&l);

	/* More biased holds than a thread's record: the rest count in the
	 * lock word. */
	struct lk many[QC_BRAVO_HELD + 3];
	for (unsigned i = 0; i < QC_BRAVO_HELD + 3; i++) {
		lk_init(&many[i], kind);
		bias_on(&many[i]);
		rd(&many[i]);
	}
	assert(qc_bravo_me.n == QC_BRAVO_HELD);
	for (unsigned i = 0; i < QC_BRAVO_HELD + 3; i++) {
		assert(word_readers(&many[i]) + qc_bravo_readers(lk_key(&many[i])) == 1);
		rdun(&many[i]);
		assert(word_readers(&many[i]) + qc_bravo_readers(lk_key(&many[i])) == 0);
	}
	assert(qc_bravo_me.n == 0);
}

/* ---- a write trylock and a timed write against a biased reader ---------- */

static struct lk held_lock;
static int held_state; /* 1: the reader holds it; 2: let it go */

static void *hold_reader(void *arg)
{
	(void)arg;
	rd(&held_lock);
	assert(qc_bravo_readers(lk_key(&held_lock)) == 1);
	qa_write_release(&held_state, 1);
	while (qa_read_acquire(&held_state) != 2)
		sched_yield();
	rdun(&held_lock);
	return NULL;
}

static void test_try_against_biased(int kind)
{
	pthread_t t;

	lk_init(&held_lock, kind);
	bias_on(&held_lock);
	held_state = 0;
	assert(!pthread_create(&t, NULL, hold_reader, NULL));
	while (qa_read_acquire(&held_state) != 1)
		sched_yield();
	assert(!trywr(&held_lock));
	assert(word_readers(&held_lock) == 0);
	if (kind) {
		struct timespec abs;

		clock_gettime(CLOCK_MONOTONIC, &abs);
		abs.tv_nsec += 20000000L;
		if (abs.tv_nsec >= 1000000000L) {
			abs.tv_sec++;
			abs.tv_nsec -= 1000000000L;
		}
		assert(qlock_down_write_timed(&held_lock.s, &abs,
					      CLOCK_MONOTONIC) == ETIMEDOUT);
		assert(!qlock_rwsem_is_locked(&held_lock.s));
	}
	/* The bias is off now (HOLD: a revocation to finish): a new
	 * reader takes the count word. */
	assert(tryrd(&held_lock));
	assert(word_readers(&held_lock) == 1);
	rdun(&held_lock);
	qa_write_release(&held_state, 2);
	assert(!pthread_join(t, NULL));
	wr(&held_lock); /* drains (nobody left) and clears HOLD */
	assert(!(qa_read(lk_bias(&held_lock)) & QC_BRAVO_HOLD));
	wrun(&held_lock);
}

/* ---- stress ---------------------------------------------------------------- */

enum { THREADS = 6, OPS = 40000 };

static struct lk stress_lock;
static long data_a, data_b;   /* plain: writers keep a == b */
static int readers_inside;    /* readers in their critical section */
static long biased_seen;

static void *stress_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1u;
	long biased = 0;

	for (int i = 0; i < OPS; i++) {
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 1000 < 3) {
			wr(&stress_lock);
			assert(qa_read(&readers_inside) == 0);
			data_a++;
			data_b++;
			wrun(&stress_lock);
		} else {
			rd(&stress_lock);
			qa_fetch_add_relaxed(&readers_inside, 1);
			biased += qc_bravo_me.n != 0;
			assert(data_a == data_b);
			qa_fetch_sub_relaxed(&readers_inside, 1);
			rdun(&stress_lock);
		}
	}
	qa_fetch_add_relaxed(&biased_seen, biased);
	return NULL;
}

static void test_stress(int kind)
{
	pthread_t t[THREADS];

	lk_init(&stress_lock, kind);
	data_a = data_b = 0;
	biased_seen = 0;
	for (long i = 0; i < THREADS; i++)
		assert(!pthread_create(&t[i], NULL, stress_thread, (void *)i));
	for (int i = 0; i < THREADS; i++)
		assert(!pthread_join(t[i], NULL));
	assert(data_a == data_b);
	assert(qc_bravo_readers(lk_key(&stress_lock)) == 0);
	assert(word_readers(&stress_lock) == 0);
	printf("  %s stress: %ld biased reads of %d\n", kind ? "rwsem" : "qrwlock",
	       biased_seen, THREADS * OPS);
}

/* ---- lifetime: free right after the last unlock --------------------------- */

static int life_go;

static void *life_reader(void *arg)
{
	struct lk *l = arg;

	rd(l);
	qa_write_release(&life_go, 1);
	for (int i = 0; i < 50; i++)
		qa_cpu_relax();
	rdun(l); /* the writer may free l from here on */
	return NULL;
}

static void test_lifetime(int kind)
{
	for (int round = 0; round < 200; round++) {
		struct lk *l = malloc(sizeof(*l));
		pthread_t t;

		assert(l);
		lk_init(l, kind);
		bias_on(l);
		life_go = 0;
		assert(!pthread_create(&t, NULL, life_reader, l));
		while (!qa_read_acquire(&life_go))
			sched_yield();
		wr(l); /* waits for the biased reader */
		wrun(l);
		free(l);
		assert(!pthread_join(t, NULL));
	}
}

/* ---- fork -------------------------------------------------------------------- */

static struct lk fork_other, fork_mine;
static int fork_state;

static void *fork_holder(void *arg)
{
	(void)arg;
	rd(&fork_other);
	qa_write_release(&fork_state, 1);
	while (qa_read_acquire(&fork_state) != 2)
		sched_yield();
	rdun(&fork_other);
	return NULL;
}

static void test_fork(int kind)
{
	pthread_t t;
	pid_t pid;
	int status;

	lk_init(&fork_other, kind);
	lk_init(&fork_mine, kind);
	bias_on(&fork_other);
	bias_on(&fork_mine);
	fork_state = 0;
	assert(!pthread_create(&t, NULL, fork_holder, NULL));
	while (qa_read_acquire(&fork_state) != 1)
		sched_yield();
	rd(&fork_mine);
	assert(qc_bravo_readers(lk_key(&fork_other)) == 1);
	pid = fork();
	assert(pid >= 0);
	if (pid == 0) {
		/* The holder thread does not exist here: its slot is gone,
		 * ours is kept. */
		if (qc_bravo_readers(lk_key(&fork_other)) != 0 ||
		    qc_bravo_readers(lk_key(&fork_mine)) != 1)
			_exit(1);
		wr(&fork_other); /* would wait for ever on a ghost */
		wrun(&fork_other);
		rdun(&fork_mine);
		if (qc_bravo_readers(lk_key(&fork_mine)) != 0)
			_exit(2);
		wr(&fork_mine);
		wrun(&fork_mine);
		_exit(0);
	}
	assert(waitpid(pid, &status, 0) == pid);
	assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	rdun(&fork_mine);
	qa_write_release(&fork_state, 2);
	assert(!pthread_join(t, NULL));
}

int main(void)
{
	for (int kind = 0; kind < 2; kind++) {
		test_basic(kind);
		test_try_against_biased(kind);
		test_stress(kind);
		test_lifetime(kind);
		test_fork(kind);
	}
	/* A plain rwsem is never biased. */
	qlock_rwsem_t plain = QLOCK_RWSEM_INIT;
	for (int i = 0; i < 100; i++) {
		qlock_down_read(&plain);
		assert(qlock_rwsem_readers(&plain) == 1);
		qlock_up_read(&plain);
	}
	assert(plain.bias == 0);
	printf("test_bravo: ok\n");
	return 0;
}
