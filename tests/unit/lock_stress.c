/* SPDX-License-Identifier: MIT */
/*
 * Stress: N threads (1, 2, 4, 8, 16, 32; past 2 CPUs this oversubscribes)
 * hammer one lock.  Writers update plain, non-atomic data keeping an
 * invariant; readers (rwlocks) check it inside their read sections, and
 * writers check it on entry.  At the end the counters must equal the
 * number of writes the threads completed.  Mutual exclusion is checked
 * with plain data on purpose: under ThreadSanitizer a lock that fails to
 * order its critical sections is reported as a data race.
 *
 * Every lock/unlock flavour the lock has is mixed in: lock, trylock
 * (falling back to lock), timedlock with a far deadline (must succeed) and
 * with a short one, retried until it succeeds (time-outs under load).
 * A last round runs with only 2 thread slots (qc_slot_set_limit) so locks
 * that use slots must take their slot-less fallback.
 * Pure spinners (LR_SPIN_ONLY) stop at 8 threads with less work, and much
 * less once oversubscribed: a FIFO spinner hands the lock to waiters that
 * may not be running, which can cost a scheduler time slice per hand-off.
 */
#include "rig.h"

#include "core/slot.h"

#define FAR_MS 600000 /* a timed lock that must not time out */
#define SHORT_NS 200000 /* a timed lock that often times out under load */

/* Retry a short timed lock until it succeeds: exercises the time-out
 * paths (a waiter leaving must not strand the others). */
static void timed_retry(int (*timed)(void *, const struct timespec *), void *l)
{
	int err;

	do {
		struct timespec d = qc_deadline_in(SHORT_NS);

		err = timed(l, &d);
		RIG_CHECK(err == 0 || err == ETIMEDOUT, "short timed lock returned %d", err);
	} while (err);
}

/* Plain shared data: only ever touched under the lock. */
struct shared {
	uint64_t a, b;      /* a == b outside write sections */
	uint64_t sum;       /* sum of every writer's token */
	int owner;          /* writer id + 1 inside a write section, else 0 */
};

struct run {
	const struct lr_lock *lk;
	void *l;
	struct shared *d;
	long ops;             /* per thread */
	pthread_barrier_t go; /* start together */
};

struct worker {
	struct run *r;
	int id;
	uint64_t writes, tokens; /* completed writes and their token sum */
	uint64_t reads;
};

static void write_lock(const struct lr_lock *lk, void *l, long i)
{
	switch (i % 8) {
	case 3:
		if (lk->trylock && lk->trylock(l))
			return;
		break;
	case 5:
		if (lk->timedlock) {
			struct timespec d = rig_deadline_ms(FAR_MS);
			int err = lk->timedlock(l, &d);

			RIG_CHECK(err == 0, "timedlock returned %d", err);
			return;
		}
		break;
	case 7:
		if (lk->timedlock) {
			timed_retry(lk->timedlock, l);
			return;
		}
		break;
	}
	lk->lock(l);
}

static void read_lock(const struct lr_lock *lk, void *l, long i)
{
	switch (i % 8) {
	case 2:
		if (lk->tryrdlock && lk->tryrdlock(l))
			return;
		break;
	case 6:
		if (lk->timedrdlock) {
			struct timespec d = rig_deadline_ms(FAR_MS);
			int err = lk->timedrdlock(l, &d);

			RIG_CHECK(err == 0, "timedrdlock returned %d", err);
			return;
		}
		break;
	case 7:
		if (lk->timedrdlock) {
			timed_retry(lk->timedrdlock, l);
			return;
		}
		break;
	}
	lk->rdlock(l);
}

/* The write section: break the invariant, do a little work, restore it. */
static void write_section(struct worker *w, uint64_t token)
{
	struct shared *d = w->r->d;

	RIG_CHECK(d->owner == 0, "writer %d entered while writer %d inside",
		  w->id, d->owner - 1);
	RIG_CHECK(d->a == d->b, "a %llu != b %llu on writer entry",
		  (unsigned long long)d->a, (unsigned long long)d->b);
	d->owner = w->id + 1;
	d->a++;
	for (int k = 0; k < 8; k++)
		qa_cpu_relax();
	d->sum += token;
	d->b++;
	RIG_CHECK(d->owner == w->id + 1, "writer %d overlapped by writer %d",
		  w->id, d->owner - 1);
	d->owner = 0;
	w->writes++;
	w->tokens += token;
}

static void read_section(struct worker *w)
{
	struct shared *d = w->r->d;

	RIG_CHECK(d->owner == 0, "reader inside while writer %d inside", d->owner - 1);
	RIG_CHECK(d->a == d->b, "reader saw a %llu != b %llu",
		  (unsigned long long)d->a, (unsigned long long)d->b);
	w->reads++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	const struct lr_lock *lk = r->lk;
	/* rwlocks: 3 reads per write, staggered per thread. */
	bool rw = lk->kind == LR_RWLOCK;

	pthread_barrier_wait(&r->go);
	for (long i = 0; i < r->ops; i++) {
		if (rw && (i + w->id) % 4 != 0) {
			read_lock(lk, r->l, i);
			read_section(w);
			lk->rdunlock(r->l);
		} else {
			write_lock(lk, r->l, i);
			write_section(w, (uint64_t)w->id * 1000003u + (uint64_t)i);
			lk->unlock(r->l);
		}
	}
	return NULL;
}

static void run_threads(const struct lr_lock *lk, int nthreads, long total_ops)
{
	struct shared d = { 0 };
	struct run r = { .lk = lk, .d = &d };
	struct worker w[32];
	pthread_t t[32];
	uint64_t writes = 0, tokens = 0;

	r.l = rig_new_lock(lk);
	r.ops = total_ops / nthreads > 0 ? total_ops / nthreads : 1;
	pthread_barrier_init(&r.go, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .r = &r, .id = i };
		t[i] = rig_spawn(worker_main, &w[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		rig_join(t[i]);
		writes += w[i].writes;
		tokens += w[i].tokens;
	}
	/* Joined: the data is ours; every write must be accounted for. */
	RIG_CHECK(d.a == writes && d.b == writes,
		  "%d threads: counters %llu/%llu, completed writes %llu",
		  nthreads, (unsigned long long)d.a, (unsigned long long)d.b,
		  (unsigned long long)writes);
	RIG_CHECK(d.sum == tokens, "%d threads: token sum mismatch", nthreads);
	pthread_barrier_destroy(&r.go);
	lr_free(lk, r.l);
}

static void run(const struct lr_lock *lk)
{
	static const int counts[] = { 1, 2, 4, 8, 16, 32 };
	bool spin = lk->flags & LR_SPIN_ONLY;
	int max_threads = spin ? 8 : 32;
	long total = spin ? rig_scaled(20000, 200) : rig_scaled(200000, 2000);
	long oversubscribed = spin ? rig_scaled(2000, 100) : total;
	int old_limit;

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (counts[i] > max_threads)
			break;
		run_threads(lk, counts[i],
			    counts[i] > rig_ncpus() ? oversubscribed : total);
		printf("  %s: %d threads ok\n", lk->name, counts[i]);
	}
	/* Fewer slots than threads: slot users must fall back cleanly. */
	old_limit = qc_slot_limit();
	qc_slot_set_limit(2);
	run_threads(lk, 4, oversubscribed / 2);
	qc_slot_set_limit(old_limit);
	printf("  %s: 4 threads, 2 slots ok\n", lk->name);
}

int main(int argc, char **argv)
{
	return rig_main(argc, argv, "stress", run);
}
