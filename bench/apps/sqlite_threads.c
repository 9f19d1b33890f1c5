/* SPDX-License-Identifier: MIT */
/*
 * sqlite_threads: SQLite in multi-thread mode (SQLITE_CONFIG_MULTITHREAD),
 * one connection per thread, each on its own in-memory database, so the
 * threads share only SQLite's process-wide mutexes (memory statistics,
 * page cache, PRNG) and the allocator.  Each thread inserts ROWS rows in
 * transactions of 500, builds an index, and runs ROWS point queries and
 * ROWS / 50 range aggregates.  Used by bench/apps (docs/bench-apps.md).
 *   sqlite_threads [THREADS [ROWS]]     defaults: 8 threads, 20000 rows
 * Prints the work done and a checksum that does not depend on timing, then
 * the elapsed time and the operations per second (one line each).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct worker {
	pthread_t tid;
	int id;
	long rows;
	uint64_t sum;
	long ops;
	int failed;
};

static pthread_barrier_t start;

static int check(sqlite3 *db, int rc, const char *what)
{
	if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	fprintf(stderr, "sqlite_threads: %s: %s\n", what, sqlite3_errmsg(db));
	return -1;
}

static uint64_t next_key(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int work(struct worker *w, sqlite3 *db)
{
	sqlite3_stmt *ins = NULL, *get = NULL, *agg = NULL;
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1);
	char text[64];
	int rc = -1;

	if (check(db, sqlite3_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, "
				   "g INTEGER, v TEXT)", NULL, NULL, NULL), "create") ||
	    check(db, sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO t VALUES(?,?,?)",
					 -1, &ins, NULL), "prepare insert") ||
	    check(db, sqlite3_prepare_v2(db, "SELECT g, length(v) FROM t WHERE k = ?",
					 -1, &get, NULL), "prepare get") ||
	    check(db, sqlite3_prepare_v2(db, "SELECT count(*), sum(k % 1000) FROM t "
					 "WHERE g = ?", -1, &agg, NULL), "prepare agg"))
		goto out;
	for (long i = 0; i < w->rows; i++) {
		uint64_t k = next_key(&x) % (uint64_t)(w->rows * 4);

		if (i % 500 == 0 && check(db, sqlite3_exec(db, "BEGIN", NULL, NULL,
							   NULL), "begin"))
			goto out;
		snprintf(text, sizeof(text), "row-%llu-%ld", (unsigned long long)k, i);
		sqlite3_bind_int64(ins, 1, (sqlite3_int64)k);
		sqlite3_bind_int64(ins, 2, (sqlite3_int64)(k % 97));
		sqlite3_bind_text(ins, 3, text, -1, SQLITE_TRANSIENT);
		if (check(db, sqlite3_step(ins), "insert"))
			goto out;
		sqlite3_reset(ins);
		w->ops++;
		if ((i % 500 == 499 || i == w->rows - 1) &&
		    check(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit"))
			goto out;
	}
	if (check(db, sqlite3_exec(db, "CREATE INDEX tg ON t(g)", NULL, NULL, NULL),
		  "index"))
		goto out;
	for (long i = 0; i < w->rows; i++) {
		sqlite3_bind_int64(get, 1, (sqlite3_int64)(next_key(&x) %
							   (uint64_t)(w->rows * 4)));
		int s = sqlite3_step(get);

		if (s == SQLITE_ROW)
			w->sum += (uint64_t)sqlite3_column_int64(get, 0) +
				  (uint64_t)sqlite3_column_int64(get, 1);
		else if (check(db, s, "get"))
			goto out;
		sqlite3_reset(get);
		w->ops++;
	}
	for (long i = 0; i < w->rows / 50; i++) {
		sqlite3_bind_int64(agg, 1, (sqlite3_int64)(i % 97));
		if (check(db, sqlite3_step(agg), "agg"))
			goto out;
		w->sum += (uint64_t)sqlite3_column_int64(agg, 0) * 7 +
			  (uint64_t)sqlite3_column_int64(agg, 1);
		sqlite3_reset(agg);
		w->ops++;
	}
	rc = 0;
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(get);
	sqlite3_finalize(agg);
	return rc;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fprintf(stderr, "sqlite_threads: open failed\n");
		w->failed = 1;
	}
	pthread_barrier_wait(&start);
	if (!w->failed && work(w, db))
		w->failed = 1;
	sqlite3_close(db);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 8;
	long rows = argc > 2 ? atol(argv[2]) : 20000;
	struct worker *w;
	uint64_t sum = 0;
	long ops = 0;
	int failed = 0;
	double t0;

	if (threads < 1 || threads > 1024 || rows < 1) {
		fprintf(stderr, "usage: sqlite_threads [THREADS [ROWS]]\n");
		return 2;
	}
	if (sqlite3_config(SQLITE_CONFIG_MULTITHREAD) != SQLITE_OK ||
	    sqlite3_initialize() != SQLITE_OK) {
		fprintf(stderr, "sqlite_threads: multi-thread mode unavailable\n");
		return 1;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w)
		return 1;
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++) {
		w[i].id = i;
		w[i].rows = rows;
		if (pthread_create(&w[i].tid, NULL, run, &w[i])) {
			fprintf(stderr, "sqlite_threads: pthread_create failed\n");
			return 1;
		}
	}
	pthread_barrier_wait(&start);
	t0 = now();
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		sum += w[i].sum;
		ops += w[i].ops;
		failed |= w[i].failed;
	}
	t0 = now() - t0;
	if (failed)
		return 1;
	printf("sqlite_threads: %d threads, %ld rows each, %ld operations, "
	       "checksum %llu\n", threads, rows, ops, (unsigned long long)sum);
	printf("elapsed: %.6f s\n", t0);
	printf("ops/s: %.0f\n", (double)ops / t0);
	pthread_barrier_destroy(&start);
	free(w);
	return 0;
}
