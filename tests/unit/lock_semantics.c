/* SPDX-License-Identifier: MIT */
/*
 * Single-thread semantics of every registered lock, checked from a second
 * thread while the first holds the lock (so non-recursive locks are never
 * asked to relock from their holder):
 *   - trylock fails while held, succeeds once unlocked;
 *   - timedlock returns ETIMEDOUT while held, 0 when free (even with a
 *     deadline already in the past);
 *   - rwlocks: readers share, tryrdlock/timedrdlock fail while a writer
 *     holds, trylock/timedlock (write) fail while a reader holds.
 * Operations a lock does not provide (NULL) are skipped.
 */
#include "rig.h"

#define SHORT_MS 20     /* a timed lock that must time out */
#define LONG_MS 60000   /* a timed lock that must not */
#define NR_READERS 3

struct probe {
	const struct lr_lock *lk;
	void *l;
	bool ok;  /* trylock result */
	int err;  /* timedlock result */
};

/* ---- probes run in a second thread -------------------------------------- */

static void *try_wr(void *arg)
{
	struct probe *p = arg;

	p->ok = p->lk->trylock(p->l);
	if (p->ok)
		p->lk->unlock(p->l);
	return NULL;
}

static void *timed_wr(void *arg)
{
	struct probe *p = arg;
	struct timespec d = rig_deadline_ms(p->err == ETIMEDOUT ? SHORT_MS : LONG_MS);

	p->err = p->lk->timedlock(p->l, &d);
	if (p->err == 0)
		p->lk->unlock(p->l);
	return NULL;
}

static void *try_rd(void *arg)
{
	struct probe *p = arg;

	p->ok = p->lk->tryrdlock(p->l);
	if (p->ok)
		p->lk->rdunlock(p->l);
	return NULL;
}

static void *timed_rd(void *arg)
{
	struct probe *p = arg;
	struct timespec d = rig_deadline_ms(p->err == ETIMEDOUT ? SHORT_MS : LONG_MS);

	p->err = p->lk->timedrdlock(p->l, &d);
	if (p->err == 0)
		p->lk->rdunlock(p->l);
	return NULL;
}

/* Run a probe in another thread; `expect_timeout` picks the deadline. */
static struct probe probe(const struct lr_lock *lk, void *l,
			  void *(*fn)(void *), bool expect_timeout)
{
	struct probe p = { .lk = lk, .l = l, .err = expect_timeout ? ETIMEDOUT : 0 };

	rig_in_thread(fn, &p);
	return p;
}

/* ---- exclusive side ---------------------------------------------------- */

/* While the lock is held (in some mode), writers are refused. */
static void check_writer_refused(const struct lr_lock *lk, void *l, const char *held)
{
	if (lk->trylock)
		RIG_CHECK(!probe(lk, l, try_wr, false).ok,
			  "trylock succeeded while %s", held);
	if (lk->timedlock) {
		int err = probe(lk, l, timed_wr, true).err;

		RIG_CHECK(err == ETIMEDOUT, "timedlock returned %d while %s", err, held);
	}
}

/* With the lock free, writers get it. */
static void check_writer_admitted(const struct lr_lock *lk, void *l)
{
	if (lk->trylock)
		RIG_CHECK(probe(lk, l, try_wr, false).ok, "trylock failed on a free lock");
	if (lk->timedlock) {
		int err = probe(lk, l, timed_wr, false).err;
		struct timespec past = { .tv_sec = 0, .tv_nsec = 1 };

		RIG_CHECK(err == 0, "timedlock returned %d on a free lock", err);
		err = lk->timedlock(l, &past);
		RIG_CHECK(err == 0, "timedlock with a past deadline returned %d on a free lock", err);
		lk->unlock(l);
	}
}

static void check_same_thread_trylock(const struct lr_lock *lk, void *l)
{
	if (!lk->trylock)
		return;
	RIG_CHECK(lk->trylock(l), "trylock failed on a free lock");
	lk->unlock(l);
	lk->lock(l);
	lk->unlock(l);
	RIG_CHECK(lk->trylock(l), "trylock failed after lock/unlock");
	lk->unlock(l);
}

/* ---- shared side ------------------------------------------------------------ */

struct readers {
	const struct lr_lock *lk;
	void *l;
	pthread_barrier_t all_in; /* every reader holds the lock at once */
};

static void *hold_read_together(void *arg)
{
	struct readers *r = arg;

	if (r->lk->timedrdlock) {
		struct timespec d = rig_deadline_ms(LONG_MS);
		int err = r->lk->timedrdlock(r->l, &d);

		RIG_CHECK(err == 0, "reader was refused (%d) while only readers hold", err);
	} else {
		r->lk->rdlock(r->l);
	}
	/* A lock that excluded readers from each other would hang here (and
	 * CTest's timeout names the lock). */
	pthread_barrier_wait(&r->all_in);
	r->lk->rdunlock(r->l);
	return NULL;
}

static void check_readers_share(const struct lr_lock *lk, void *l)
{
	struct readers r = { .lk = lk, .l = l };
	pthread_t t[NR_READERS];

	pthread_barrier_init(&r.all_in, NULL, NR_READERS);
	for (int i = 0; i < NR_READERS; i++)
		t[i] = rig_spawn(hold_read_together, &r);
	for (int i = 0; i < NR_READERS; i++)
		rig_join(t[i]);
	pthread_barrier_destroy(&r.all_in);
}

static void check_reader_refused(const struct lr_lock *lk, void *l)
{
	if (lk->tryrdlock)
		RIG_CHECK(!probe(lk, l, try_rd, false).ok,
			  "tryrdlock succeeded while a writer holds");
	if (lk->timedrdlock) {
		int err = probe(lk, l, timed_rd, true).err;

		RIG_CHECK(err == ETIMEDOUT, "timedrdlock returned %d while a writer holds", err);
	}
}

static void check_reader_admitted(const struct lr_lock *lk, void *l)
{
	if (lk->tryrdlock)
		RIG_CHECK(probe(lk, l, try_rd, false).ok,
			  "tryrdlock failed while free or read-held");
	if (lk->timedrdlock) {
		int err = probe(lk, l, timed_rd, false).err;

		RIG_CHECK(err == 0, "timedrdlock returned %d while free or read-held", err);
	}
}

static void check_rwlock(const struct lr_lock *lk, void *l)
{
	check_readers_share(lk, l);

	lk->rdlock(l);
	check_reader_admitted(lk, l); /* a second reader joins */
	check_writer_refused(lk, l, "a reader holds");
	lk->rdunlock(l);

	lk->lock(l);
	check_reader_refused(lk, l);
	lk->unlock(l);

	check_reader_admitted(lk, l);
	check_writer_admitted(lk, l);
}

static void run(const struct lr_lock *lk)
{
	void *l = rig_new_lock(lk);

	check_same_thread_trylock(lk, l);
	lk->lock(l);
	check_writer_refused(lk, l, "a writer holds");
	lk->unlock(l);
	check_writer_admitted(lk, l);
	if (lk->kind == LR_RWLOCK)
		check_rwlock(lk, l);
	lr_free(lk, l);
}

int main(int argc, char **argv)
{
	return rig_main(argc, argv, "semantics", run);
}
