/* SPDX-License-Identifier: MIT */
/*
 * qrwlock, every variant:
 *  1. reader/writer invariant stress at 2..16 threads (oversubscribed on
 *     small machines) with spin limits 0 (every wait parks at once), 1, 64
 *     and the default, so the sleep/wake paths run thousands of times: a
 *     lost wake-up hangs the test (CTest timeout), a broken exclusion
 *     trips the invariant checks.  Writers keep a == b on plain data and
 *     check that no reader and no other writer is inside; readers check
 *     a == b and that no writer is inside; the final counts equal the
 *     completed writes.
 *  2. a stream of overlapping readers cannot hold off a writer: the
 *     writer gets its acquisitions, and a reader that saw the writer
 *     waiting (WAITING in the word) gets in only after that writer did.
 *  3. a stream of writers cannot hold off a reader: the reader gets its
 *     acquisitions.
 * Assertions are about behaviour; the only time limit is a hang limit.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "core/atomic.h"
#include "lock/qrwlock_variants.h"
#include "qlock/qrwlock.h"
#include "rig.h"

#define HANG_LIMIT_MS 120000

static const struct lr_lock *LK;
static qlock_rwlock_t *L;
static bool layout_2015;

/* Protected data (plain), and who is inside (atomic, for the checks). */
static long a, b, writes_done;
static int readers_in, writers_in;

static void cs_work(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		qa_cpu_relax();
}

static void write_cs(void)
{
	RIG_CHECK(qa_fetch_add(&writers_in, 1) == 0, "two writers inside");
	RIG_CHECK(qa_read(&readers_in) == 0, "a reader inside with a writer");
	RIG_CHECK(a == b, "a=%ld b=%ld", a, b);
	a++;
	cs_work(2);
	b++;
	qa_write(&writes_done, qa_read(&writes_done) + 1);
	qa_fetch_sub(&writers_in, 1);
}

static void read_cs(unsigned work)
{
	qa_fetch_add(&readers_in, 1);
	RIG_CHECK(qa_read(&writers_in) == 0, "a writer inside with a reader");
	RIG_CHECK(a == b, "a=%ld b=%ld", a, b);
	cs_work(work);
	RIG_CHECK(a == b, "a=%ld b=%ld", a, b);
	qa_fetch_sub(&readers_in, 1);
}

/* ---- 1. invariant stress ----------------------------------------------- */

struct worker {
	pthread_t t;
	unsigned seed;
	long iters, writes;
};

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static void *stress_worker(void *arg)
{
	struct worker *w = arg;

	for (long i = 0; i < w->iters; i++) {
		unsigned r = rnd(&w->seed) % 16;

		if (r < 2) {            /* write, 1 in 8 */
			LK->lock(L);
			write_cs();
			LK->unlock(L);
			w->writes++;
		} else if (r == 2) {    /* trylock */
			if (LK->trylock(L)) {
				write_cs();
				LK->unlock(L);
				w->writes++;
			}
		} else if (r == 3) {    /* tryrdlock */
			if (LK->tryrdlock(L)) {
				read_cs(4);
				LK->rdunlock(L);
			}
		} else {
			LK->rdlock(L);
			read_cs(r);
			LK->rdunlock(L);
		}
	}
	return NULL;
}

static void stress(int nthreads, long spin_limit)
{
	struct worker w[16];
	long writes = 0, iters = rig_scaled(200000 / nthreads, 200);

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, spin_limit);
	a = b = writes_done = 0;
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .seed = 7u * (unsigned)i + 1,
					.iters = iters };
		w[i].t = rig_spawn(stress_worker, &w[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		rig_join(w[i].t);
		writes += w[i].writes;
	}
	RIG_CHECK(a == writes && b == writes && writes_done == writes,
		  "a=%ld b=%ld writes=%ld", a, b, writes);
	RIG_CHECK(qa_read(&L->cnts) == 0, "word %#x after the run",
		  qa_read(&L->cnts));
	RIG_CHECK(!qlock_rwlock_is_contended(L), "queue left locked");
}

/* ---- 2/3. starvation, both ways --------------------------------------- */

static int stop;
static int done;
static pthread_mutex_t done_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static long fifo_checked;

static void signal_done(void)
{
	pthread_mutex_lock(&done_mx);
	done = 1;
	pthread_cond_signal(&done_cv);
	pthread_mutex_unlock(&done_mx);
}

static void wait_done(const char *what)
{
	struct timespec dl;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += HANG_LIMIT_MS / 1000;
	pthread_mutex_lock(&done_mx);
	while (!done && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&done_cv, &done_mx, &dl);
	pthread_mutex_unlock(&done_mx);
	if (!done)
		RIG_FAIL("%s starved (no progress in %d s)", what,
			 HANG_LIMIT_MS / 1000);
}

/*
 * The word says a writer waits (queued, WAITING set) and does not hold the
 * lock.  In the 2015 layout WAITING is the writer-byte value 0x01 (0x03
 * while it sleeps), and bit 0 is also set in LOCKED (0xff): a mask test
 * would take "the writer holds it" for "waits", and that writer may have
 * counted its write before the reader read writes_done.
 */
static bool writer_waits(uint32_t cnts)
{
	if (layout_2015)
		return ((cnts & QRW_2015_WMASK) & ~QRW_W_SLEEP) ==
		       QRW_2015_WAITING;
	return (cnts & QRW_CUR_WAITING) != 0;
}

/* Readers that overlap: the read lock is almost never free. */
static void *stream_reader(void *arg)
{
	long checked = 0;

	(void)arg;
	while (!qa_read_acquire(&stop)) {
		/* writes_done before the word: if the word then shows a writer
		 * waiting, that writer's acquisition is number > g. */
		long g = qa_read_acquire(&writes_done);
		bool saw_waiting = writer_waits(qa_read_acquire(&L->cnts));

		LK->rdlock(L);
		if (saw_waiting) {
			RIG_CHECK(qa_read(&writes_done) > g, "a reader that saw "
				  "the writer waiting got in before it (%ld)", g);
			checked++;
		}
		read_cs(200);
		LK->rdunlock(L);
	}
	qa_fetch_add(&fifo_checked, checked);
	return NULL;
}

static void *lone_writer(void *arg)
{
	long n = *(long *)arg;

	for (long i = 0; i < n; i++) {
		LK->lock(L);
		write_cs();
		LK->unlock(L);
		cs_work(500);
	}
	signal_done();
	return NULL;
}

static void reader_stream_vs_writer(long spin_limit)
{
	enum { R = 4 };
	pthread_t r[R], w;
	long n = rig_scaled(300, 30);

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, spin_limit);
	stop = done = 0;
	a = b = writes_done = fifo_checked = 0;
	for (int i = 0; i < R; i++)
		r[i] = rig_spawn(stream_reader, NULL);
	w = rig_spawn(lone_writer, &n);
	wait_done("a writer under a stream of readers");
	qa_write_release(&stop, 1);
	rig_join(w);
	for (int i = 0; i < R; i++)
		rig_join(r[i]);
	RIG_CHECK(writes_done == n && a == n, "writes %ld of %ld", writes_done, n);
	printf("  %s: reader stream, spin %ld: writer %ld/%ld, %ld FIFO checks\n",
	       LK->name, spin_limit, writes_done, n, fifo_checked);
}

static void *stream_writer(void *arg)
{
	(void)arg;
	while (!qa_read_acquire(&stop)) {
		LK->lock(L);
		write_cs();
		cs_work(100);
		LK->unlock(L);
	}
	return NULL;
}

static void *lone_reader(void *arg)
{
	long n = *(long *)arg;

	for (long i = 0; i < n; i++) {
		LK->rdlock(L);
		read_cs(10);
		LK->rdunlock(L);
		cs_work(500);
	}
	signal_done();
	return NULL;
}

static void writer_stream_vs_reader(long spin_limit)
{
	enum { W = 4 };
	pthread_t w[W], r;
	long n = rig_scaled(300, 30);

	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, spin_limit);
	stop = done = 0;
	a = b = writes_done = 0;
	for (int i = 0; i < W; i++)
		w[i] = rig_spawn(stream_writer, NULL);
	r = rig_spawn(lone_reader, &n);
	wait_done("a reader under a stream of writers");
	qa_write_release(&stop, 1);
	rig_join(r);
	for (int i = 0; i < W; i++)
		rig_join(w[i]);
	RIG_CHECK(a == b && a == writes_done, "a=%ld b=%ld", a, b);
	printf("  %s: writer stream, spin %ld: reader %ld/%ld, %ld writes\n",
	       LK->name, spin_limit, n, n, writes_done);
}

static void one(const struct lr_lock *lk)
{
	static const int threads[] = { 2, 3, 4, 8, 16 };
	static const long spins[] = { 0, 1, 64, 512 };

	LK = lk;
	L = rig_new_lock(lk);
	layout_2015 = strcmp(lk->name, "qrwlock") != 0;
	for (size_t s = 0; s < sizeof(spins) / sizeof(spins[0]); s++)
		for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++)
			stress(threads[t], spins[s]);
	printf("  %s: invariant stress ok\n", lk->name);
	for (size_t s = 0; s < sizeof(spins) / sizeof(spins[0]); s += 3) {
		reader_stream_vs_writer(spins[s]);
		writer_stream_vs_reader(spins[s]);
	}
	qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 512);
	lr_free(lk, L);
}

int main(int argc, char **argv)
{
	char *all[] = { NULL, "qrwlock",
		"qrwlock-2015-cmpxchg-loop", "qrwlock-2015-byte" };

	if (argc > 1)
		return rig_main(argc, argv, "qrwlock-stress", one);
	all[0] = argv[0];
	return rig_main(4, all, "qrwlock-stress", one);
}
