/* SPDX-License-Identifier: MIT */
/*
 * A program with known lock traffic for qlock-run --profile
 * (profile.sh builds it with -g, without, stripped, stripped -rdynamic).
 *
 *   profile_prog hot [THREADS [ITERS]]
 *     THREADS threads take the mutex `hot` in hot_path() ITERS times each;
 *     the first acquisition there certainly waits (main holds `hot` until
 *     a worker sleeps in the kernel, as its /proc state says).  A reader
 *     and a writer share an rwlock, and a static function waits on a
 *     condition variable that main signals.
 *   profile_prog abba
 *     Two threads take two mutexes in opposite orders, each after the
 *     other has taken its first: a deadlock, for the watchdog to report
 *     (the test kills the program).
 *   profile_prog tryab, rwab read|write read|write
 *     The same, with a trylock, or through an rwlock (below).
 *   profile_prog spread [THREADS [ITERS]], many [THREADS [PASSES]]
 *     Mutexes taken in turn (below).
 *   profile_prog slow [ROUNDS]
 *     Two threads take a mutex in turn (short waits, mostly sampled);
 *     then, ROUNDS times, a waiter blocks on it while main holds it
 *     through a 50 ms sleep; prints the mutex's address and the waiter's
 *     own measure of its lock calls (CLOCK_MONOTONIC, ns), for the
 *     report's waits at the waiter's site to match.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t qm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qc = PTHREAD_COND_INITIALIZER;
static long iters, counter, table_value;
static int ready_flag;
static pid_t worker_tid[64], waiter_tid;

/* Is thread `tid` asleep (state S: in the kernel, here in futex_wait)? */
static int asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int s = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		s = p[2] == 'S';
	fclose(f);
	return s;
}

/* The hot lock's function (not static: -rdynamic exports it). */
__attribute__((noinline)) void hot_path(void)
{
	pthread_mutex_lock(&hot); /* HOT_LOCK_LINE */
	counter++;
	pthread_mutex_unlock(&hot);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

static void *worker(void *arg)
{
	long me = (long)arg;

	__atomic_store_n(&worker_tid[me], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (long i = 0; i < iters; i++) {
		hot_path();
		if (i % 64 == 0) {
			pthread_rwlock_rdlock(&table);
			(void)__atomic_load_n(&table_value, __ATOMIC_RELAXED);
			pthread_rwlock_unlock(&table);
		}
		if (me == 0 && i % 256 == 0) {
			pthread_rwlock_wrlock(&table);
			table_value++;
			pthread_rwlock_unlock(&table);
		}
	}
	return NULL;
}

/* Static: in .symtab only. */
static __attribute__((noinline)) void wait_ready(void)
{
	pthread_mutex_lock(&qm);
	while (!ready_flag)
		pthread_cond_wait(&qc, &qm); /* COND_WAIT_LINE */
	pthread_mutex_unlock(&qm);
	__asm__ volatile("" ::: "memory");
}

static void *waiter(void *arg)
{
	(void)arg;
	__atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	wait_ready();
	return NULL;
}

static int hot_main(int nthreads)
{
	pthread_t t[64], w;

	/* A signal before any wait: the condvar's row is made here, and the
	 * report must still name its first wait. */
	pthread_cond_signal(&qc);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_mutex_lock(&hot); /* HOT_FIRST_LINE */
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (;;) {
		pid_t tid = __atomic_load_n(&worker_tid[0], __ATOMIC_ACQUIRE);

		if (tid && asleep(tid))
			break;
		usleep(1000);
	}
	pthread_mutex_unlock(&hot);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	/* The waiter sleeps in its condvar wait (nothing else can block it). */
	for (;;) {
		pid_t tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE);

		if (tid && asleep(tid))
			break;
		usleep(1000);
	}
	pthread_mutex_lock(&qm);
	ready_flag = 1;
	pthread_cond_signal(&qc);
	pthread_mutex_unlock(&qm);
	pthread_join(w, NULL);
	printf("hot %p %ld\n", (void *)&hot, counter);
	return counter == nthreads * iters ? 0 : 1;
}

/* ---- abba ----------------------------------------------------------------- */

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static int taken;

static void both_taken(void)
{
	__atomic_add_fetch(&taken, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&taken, __ATOMIC_ACQUIRE) < 2)
		sched_yield();
}

__attribute__((noinline)) void a_then_b(void)
{
	pthread_mutex_lock(&lock_a); /* A_FIRST_LINE */
	both_taken();
	pthread_mutex_lock(&lock_b); /* A_SECOND_LINE */
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void b_then_a(void)
{
	pthread_mutex_lock(&lock_b); /* B_FIRST_LINE */
	both_taken();
	pthread_mutex_lock(&lock_a); /* B_SECOND_LINE */
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	__asm__ volatile("" ::: "memory");
}

static void *run_a(void *arg) { (void)arg; a_then_b(); return NULL; }
static void *run_b(void *arg) { (void)arg; b_then_a(); return NULL; }

static int abba_main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, run_a, NULL);
	pthread_create(&b, NULL, run_b, NULL);
	printf("started\n");
	fflush(stdout);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("no deadlock\n");
	return 1;
}

/* ---- tryab, rwab ----------------------------------------------------------
 *   profile_prog tryab
 *     abba, with thread 1's first mutex taken by a trylock.
 *   profile_prog rwab read|write read|write
 *     thread 1 takes an rwlock (for reading or writing: the first word),
 *     then a mutex; thread 2 takes the mutex, then the rwlock (the second
 *     word): an ABBA deadlock through an rwlock.
 * The watchdog names each lock's holder and where it locked it.
 */

__attribute__((noinline)) void try_a_then_b(void)
{
	while (pthread_mutex_trylock(&lock_a) != 0) /* TRY_FIRST_LINE */
		sched_yield();
	both_taken();
	pthread_mutex_lock(&lock_b);
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	__asm__ volatile("" ::: "memory");
}

static pthread_rwlock_t rwab_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t rwab_m = PTHREAD_MUTEX_INITIALIZER;
static int rwab_hold_write, rwab_wait_write;

__attribute__((noinline)) void rw_then_m(void)
{
	if (rwab_hold_write)
		pthread_rwlock_wrlock(&rwab_rw); /* RW_HOLD_W_LINE */
	else
		pthread_rwlock_rdlock(&rwab_rw); /* RW_HOLD_R_LINE */
	both_taken();
	pthread_mutex_lock(&rwab_m);
	pthread_mutex_unlock(&rwab_m);
	pthread_rwlock_unlock(&rwab_rw);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void m_then_rw(void)
{
	pthread_mutex_lock(&rwab_m); /* M_HOLD_LINE */
	both_taken();
	if (rwab_wait_write)
		pthread_rwlock_wrlock(&rwab_rw);
	else
		pthread_rwlock_rdlock(&rwab_rw);
	pthread_rwlock_unlock(&rwab_rw);
	pthread_mutex_unlock(&rwab_m);
	__asm__ volatile("" ::: "memory");
}

static void *run_try_a(void *arg) { (void)arg; try_a_then_b(); return NULL; }
static void *run_rw_m(void *arg) { (void)arg; rw_then_m(); return NULL; }
static void *run_m_rw(void *arg) { (void)arg; m_then_rw(); return NULL; }

static int pair_main(void *(*one)(void *), void *(*two)(void *))
{
	pthread_t a, b;

	pthread_create(&a, NULL, one, NULL);
	pthread_create(&b, NULL, two, NULL);
	printf("started\n");
	fflush(stdout);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("no deadlock\n");
	return 1;
}

/* ---- spread ---------------------------------------------------------------
 *   profile_prog spread [THREADS [ITERS]]
 *     THREADS threads take 6 mutexes in turn, ITERS times in all each,
 *     yielding the CPU inside 1 in 8 critical sections: more contended
 *     locks than a thread keeps counters and detail shares for at once
 *     (contention.h), so that the report's sums cross those paths too.
 */

#define NSPREAD 6
static pthread_mutex_t spread[NSPREAD] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};
static long spread_count[NSPREAD];

static void *spread_worker(void *arg)
{
	long me = (long)arg;

	for (long i = 0; i < iters; i++) {
		long k = (i + me) % NSPREAD;

		pthread_mutex_lock(&spread[k]);
		spread_count[k]++;
		if (i % 8 == 0)
			sched_yield();
		pthread_mutex_unlock(&spread[k]);
	}
	return NULL;
}

/* Run fn in n threads (n <= 64), each given its index, and join them. */
static void run_workers(void *(*fn)(void *), int n)
{
	pthread_t t[64];

	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static int spread_main(int nthreads)
{
	long sum = 0;

	run_workers(spread_worker, nthreads);
	for (int k = 0; k < NSPREAD; k++)
		sum += spread_count[k];
	printf("spread %ld\n", sum);
	return sum == nthreads * iters ? 0 : 1;
}

/* ---- many ----------------------------------------------------------------
 *   profile_prog many [THREADS [PASSES]]
 *     NMANY mutexes, more than a thread keeps counter slots for
 *     (contention.h): each first taken by main and waited for once by a
 *     helper thread (so that the report lists every one), then taken by
 *     THREADS threads in turn, mutex k (k % 5 + 1) times per pass, each
 *     thread from its own start; prints the first mutex's address, the
 *     array's stride and length, for the test to expect mutex k's
 *     acquisitions: 2 + THREADS * PASSES * (k % 5 + 1).
 */

#define NMANY 300
static pthread_mutex_t many[NMANY];
static long many_count[NMANY];
static int many_go, many_at = -1, many_done;
static pid_t many_helper_tid;

static void *many_helper(void *arg)
{
	(void)arg;
	__atomic_store_n(&many_helper_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (int k = 0; k < NMANY; k++) {
		while (__atomic_load_n(&many_go, __ATOMIC_ACQUIRE) <= k)
			sched_yield();
		__atomic_store_n(&many_at, k, __ATOMIC_RELEASE);
		pthread_mutex_lock(&many[k]);
		many_count[k]++;
		pthread_mutex_unlock(&many[k]);
		__atomic_store_n(&many_done, k + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *many_worker(void *arg)
{
	long me = (long)arg;

	for (long p = 0; p < iters; p++)
		for (int r = 0; r < 5; r++)
			for (int j = 0; j < NMANY; j++) {
				int k = (int)((j + me * 37) % NMANY);

				if (k % 5 < r)
					continue;
				pthread_mutex_lock(&many[k]);
				many_count[k]++;
				if (j % 64 == 0)
					sched_yield();
				pthread_mutex_unlock(&many[k]);
			}
	return NULL;
}

static int many_main(int nthreads)
{
	pthread_t h;
	int bad = 0;

	for (int k = 0; k < NMANY; k++)
		pthread_mutex_init(&many[k], NULL);
	/* Every mutex contended once: main holds it until the helper sleeps
	 * waiting for it. */
	pthread_create(&h, NULL, many_helper, NULL);
	for (int k = 0; k < NMANY; k++) {
		pthread_mutex_lock(&many[k]);
		many_count[k]++;
		__atomic_store_n(&many_go, k + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&many_at, __ATOMIC_ACQUIRE) != k ||
		       !asleep(__atomic_load_n(&many_helper_tid, __ATOMIC_ACQUIRE)))
			usleep(100);
		pthread_mutex_unlock(&many[k]);
		while (__atomic_load_n(&many_done, __ATOMIC_ACQUIRE) != k + 1)
			sched_yield();
	}
	pthread_join(h, NULL);
	run_workers(many_worker, nthreads);
	for (int k = 0; k < NMANY; k++)
		bad |= many_count[k] != 2 + nthreads * iters * (k % 5 + 1);
	printf("many %p %zu %d\n", (void *)&many[0], sizeof(many[0]), NMANY);
	return bad;
}

/* ---- slow ----------------------------------------------------------------
 * Two threads take `slow` in turn (slow_spin()); then, ROUNDS times,
 * main holds it from before the waiter calls for it until 50 ms after
 * the waiter sleeps in the kernel for it (asleep after it said it is
 * calling the lock, not in its usleep() before).  Every one of those
 * waits slept for 50 ms or more whatever the machine's load, so each is
 * timed (none left to the sampling), and their site's count is exact
 * beside slow_spin()'s estimate. */

static pthread_mutex_t slow = PTHREAD_MUTEX_INITIALIZER;
static pid_t slow_tid;
static int slow_round, slow_calling, slow_done;
static long long slow_ns;

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *slow_waiter(void *arg)
{
	int rounds = *(int *)arg;

	__atomic_store_n(&slow_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (int r = 1; r <= rounds; r++) {
		long long t0;

		while (__atomic_load_n(&slow_round, __ATOMIC_ACQUIRE) != r)
			usleep(100);
		/* From here the waiter's only sleep is in the lock call. */
		__atomic_store_n(&slow_calling, r, __ATOMIC_RELEASE);
		t0 = mono_ns();
		pthread_mutex_lock(&slow);
		slow_ns += mono_ns() - t0;
		pthread_mutex_unlock(&slow);
		__atomic_store_n(&slow_done, r, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Short holds first, taken in turn by two threads: waits that mostly
 * spin, most of them left to the sampling, at a site of their own. */
static pthread_barrier_t slow_start;
static volatile long slow_sink;

__attribute__((noinline)) void slow_spin(void)
{
	pthread_barrier_wait(&slow_start);
	for (int i = 0; i < 200000; i++) {
		pthread_mutex_lock(&slow); /* SLOW_SPIN_LINE */
		for (int k = 0; k < 20; k++)
			slow_sink += k;
		pthread_mutex_unlock(&slow);
	}
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

static void *slow_spinner(void *arg)
{
	(void)arg;
	slow_spin();
	return NULL;
}

static int slow_main(int rounds)
{
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };
	pthread_t t;
	pid_t tid;

	pthread_barrier_init(&slow_start, NULL, 2);
	pthread_create(&t, NULL, slow_spinner, NULL);
	slow_spin();
	pthread_join(t, NULL);
	pthread_create(&t, NULL, slow_waiter, &rounds);
	while (!(tid = __atomic_load_n(&slow_tid, __ATOMIC_ACQUIRE)))
		usleep(1000);
	for (int r = 1; r <= rounds; r++) {
		pthread_mutex_lock(&slow);
		__atomic_store_n(&slow_round, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&slow_calling, __ATOMIC_ACQUIRE) != r)
			usleep(1000);
		do
			usleep(1000);
		while (!asleep(tid));
		nanosleep(&ms50, NULL);
		pthread_mutex_unlock(&slow);
		while (__atomic_load_n(&slow_done, __ATOMIC_ACQUIRE) != r)
			usleep(1000);
	}
	pthread_join(t, NULL);
	printf("slow %p %lld\n", (void *)&slow, slow_ns);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "many") == 0) {
		int nthreads = argc > 2 ? atoi(argv[2]) : 4;

		iters = argc > 3 ? atol(argv[3]) : 20;
		if (nthreads < 1 || nthreads > 64 || iters < 1)
			return 2;
		return many_main(nthreads);
	}
	if (argc > 1 && strcmp(argv[1], "spread") == 0) {
		int nthreads = argc > 2 ? atoi(argv[2]) : 4;

		iters = argc > 3 ? atol(argv[3]) : 100000;
		if (nthreads < 1 || nthreads > 64 || iters < 1)
			return 2;
		return spread_main(nthreads);
	}
	if (argc > 1 && strcmp(argv[1], "hot") == 0) {
		int nthreads = argc > 2 ? atoi(argv[2]) : 4;

		iters = argc > 3 ? atol(argv[3]) : 100000;
		if (nthreads < 1 || nthreads > 64 || iters < 1)
			return 2;
		return hot_main(nthreads);
	}
	if (argc > 1 && strcmp(argv[1], "abba") == 0)
		return abba_main();
	if (argc > 1 && strcmp(argv[1], "tryab") == 0)
		return pair_main(run_try_a, run_b);
	if (argc > 3 && strcmp(argv[1], "rwab") == 0) {
		rwab_hold_write = strcmp(argv[2], "write") == 0;
		rwab_wait_write = strcmp(argv[3], "write") == 0;
		return pair_main(run_rw_m, run_m_rw);
	}
	if (argc > 1 && strcmp(argv[1], "slow") == 0) {
		int rounds = argc > 2 ? atoi(argv[2]) : 1;

		if (rounds < 1 || rounds > 1000)
			return 2;
		return slow_main(rounds);
	}
	fprintf(stderr, "usage: profile_prog hot [THREADS [ITERS]] | abba | tryab"
		" | rwab read|write read|write | spread [THREADS [ITERS]]"
		" | many [THREADS [PASSES]] | slow [ROUNDS]\n");
	return 2;
}
