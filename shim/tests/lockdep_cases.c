/* SPDX-License-Identifier: MIT */
/*
 * Small programs with known answers for the lock-order checker
 * (QLOCK_LOCKDEP): each case either has a lock-order problem that never
 * deadlocks in the run (its threads run one after the other) or is
 * correct.  lockdep_cases.sh runs one case and compares the reports with
 * the expected answer (the table in CMakeLists.txt).
 *   lockdep_cases CASE [LIBRARY]
 * Every case finishes (an alarm() fails a hang) and exits 0, except the
 * two "hang_*" cases, which deadlock for real so that the watchdog can
 * report them (the driver kills them once it has).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "lockdep_cases: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

#define LOCK(m) check(pthread_mutex_lock(m), "lock " #m)
#define UNLOCK(m) check(pthread_mutex_unlock(m), "unlock " #m)

/* f, then g, each on a thread of its own: the orders never meet in time. */
static void in_turn(void *(*f)(void *), void *a, void *(*g)(void *), void *b)
{
	pthread_t t;

	check(pthread_create(&t, NULL, f, a), "create");
	check(pthread_join(t, NULL), "join");
	if (g) {
		check(pthread_create(&t, NULL, g, b), "create");
		check(pthread_join(t, NULL), "join");
	}
}

static struct timespec soon(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20 * 1000 * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* ---- an account, built by one constructor, locked through a wrapper ---- */

struct account {
	pthread_mutex_t m;
	long balance;
};

static NOINLINE struct account *account_new(long b)
{
	struct account *a = malloc(sizeof *a);

	check(pthread_mutex_init(&a->m, NULL), "init account");
	a->balance = b;
	return a;
}

static NOINLINE void account_free(struct account *a)
{
	check(pthread_mutex_destroy(&a->m), "destroy account");
	free(a);
}

/* The wrapper: small, and its name says lock. */
static NOINLINE void acct_lock(struct account *a) { LOCK(&a->m); }
static NOINLINE void acct_unlock(struct account *a) { UNLOCK(&a->m); }

static NOINLINE void transfer(struct account *from, struct account *to, long n)
{
	acct_lock(from);
	acct_lock(to);
	from->balance -= n;
	to->balance += n;
	acct_unlock(to);
	acct_unlock(from);
}

struct pair {
	struct account *a, *b;
};

static void *transfer_ab(void *p) { struct pair *x = p; transfer(x->a, x->b, 1); return NULL; }
static void *transfer_ba(void *p) { struct pair *x = p; transfer(x->b, x->a, 1); return NULL; }

/* ABBA between two objects of one class, through a wrapper. */
static void case_abba_wrapper(void)
{
	struct pair p = { account_new(10), account_new(10) };

	in_turn(transfer_ab, &p, transfer_ba, &p);
}

/* The workers' phase (one thread, A then B), joined, then a verification
 * pass on the joining thread (B then A): the two orders cannot meet, the
 * worker having ended before the pass began. */
static void case_joined_phases(void)
{
	struct pair p = { account_new(10), account_new(10) };

	in_turn(transfer_ab, &p, NULL, NULL);
	transfer(p.b, p.a, 1);
}

/* Ordered by address: never a cycle. */
static NOINLINE void transfer_ordered(struct account *x, struct account *y, long n)
{
	if (x < y)
		transfer(x, y, n);
	else
		transfer(y, x, -n);
}
static void *ordered_ab(void *p) { struct pair *x = p; transfer_ordered(x->a, x->b, 1); return NULL; }
static void *ordered_ba(void *p) { struct pair *x = p; transfer_ordered(x->b, x->a, 1); return NULL; }

static void case_transfer_ordered(void)
{
	struct pair p = { account_new(10), account_new(10) };

	in_turn(ordered_ab, &p, ordered_ba, &p);
}

/* A wrapper whose name does not say lock: --lockdep-wrapper names it. */
static NOINLINE void acquire_resource(pthread_mutex_t *m) { LOCK(m); }
static pthread_mutex_t res_a = PTHREAD_MUTEX_INITIALIZER, res_b = PTHREAD_MUTEX_INITIALIZER;

static NOINLINE void use_resources(pthread_mutex_t *x, pthread_mutex_t *y)
{
	acquire_resource(x);
	acquire_resource(y);
	UNLOCK(y);
	UNLOCK(x);
}
static void *res_ab(void *p) { (void)p; use_resources(&res_a, &res_b); return NULL; }
static void *res_ba(void *p) { (void)p; use_resources(&res_b, &res_a); return NULL; }

static void case_wrapper_pattern(void)
{
	in_turn(res_ab, NULL, res_ba, NULL);
}

/* ---- philosophers: forks initialised in a loop (one class) ---- */

#define NPHIL 5
static pthread_mutex_t forks[NPHIL];

static NOINLINE void forks_init(void)
{
	for (int i = 0; i < NPHIL; i++)
		check(pthread_mutex_init(&forks[i], NULL), "init fork");
}

static NOINLINE void *dine(void *p)
{
	int i = (int)(long)p, l = i, r = (i + 1) % NPHIL;

	LOCK(&forks[l]);
	LOCK(&forks[r]);
	UNLOCK(&forks[r]);
	UNLOCK(&forks[l]);
	return NULL;
}

static NOINLINE void *dine_ordered(void *p)
{
	int i = (int)(long)p, l = i, r = (i + 1) % NPHIL;

	if (l > r) {
		int t = l;
		l = r;
		r = t;
	}
	LOCK(&forks[l]);
	LOCK(&forks[r]);
	UNLOCK(&forks[r]);
	UNLOCK(&forks[l]);
	return NULL;
}

static void case_philosophers(int ordered)
{
	forks_init();
	for (long i = 0; i < NPHIL; i++)
		in_turn(ordered ? dine_ordered : dine, (void *)i, NULL, NULL);
}

/* ---- strict layering among objects of one class ---- */

struct queue {
	pthread_mutex_t m;
	int n;
};

static NOINLINE struct queue *queue_new(void)
{
	struct queue *q = calloc(1, sizeof *q);

	check(pthread_mutex_init(&q->m, NULL), "init queue");
	return q;
}

/* queue -> global -> queue: three objects of one class, one order. */
static struct queue *lay_in, *lay_global, *lay_out;
static NOINLINE void *layered(void *p)
{
	(void)p;
	LOCK(&lay_in->m);
	LOCK(&lay_global->m);
	LOCK(&lay_out->m);
	UNLOCK(&lay_out->m);
	UNLOCK(&lay_global->m);
	UNLOCK(&lay_in->m);
	LOCK(&lay_global->m);
	LOCK(&lay_out->m);
	UNLOCK(&lay_out->m);
	UNLOCK(&lay_global->m);
	return NULL;
}

static void case_layering(void)
{
	lay_in = queue_new();
	lay_global = queue_new();
	lay_out = queue_new();
	in_turn(layered, NULL, layered, NULL);
}

/* A nest built by one constructor, taken in both orders. */
static NOINLINE void *nest_fwd(void *p) { (void)p; LOCK(&lay_in->m); LOCK(&lay_global->m); UNLOCK(&lay_global->m); UNLOCK(&lay_in->m); return NULL; }
static NOINLINE void *nest_back(void *p) { (void)p; LOCK(&lay_global->m); LOCK(&lay_in->m); UNLOCK(&lay_in->m); UNLOCK(&lay_global->m); return NULL; }

static void case_ctor_abba(void)
{
	lay_in = queue_new();
	lay_global = queue_new();
	in_turn(nest_fwd, NULL, nest_back, NULL);
}

/* ---- init loop, taken in index order: correct ---- */

static void case_loop_ordered(void)
{
	pthread_mutex_t *m = malloc(10 * sizeof *m);

	for (int i = 0; i < 10; i++)
		check(pthread_mutex_init(&m[i], NULL), "init");
	for (int i = 0; i < 10; i++)
		for (int j = i + 1; j < 10; j++) {
			LOCK(&m[i]);
			LOCK(&m[j]);
			UNLOCK(&m[j]);
			UNLOCK(&m[i]);
		}
}

/* ---- hand-over-hand down a list ---- */

struct node {
	pthread_mutex_t m;
	struct node *next;
};

static struct node *list_head;

static NOINLINE void list_build(int n)
{
	for (int i = 0; i < n; i++) {
		struct node *x = calloc(1, sizeof *x);

		check(pthread_mutex_init(&x->m, NULL), "init node");
		x->next = list_head;
		list_head = x;
	}
}

static NOINLINE void *walk(void *p)
{
	(void)p;
	struct node *x = list_head;

	LOCK(&x->m);
	while (x->next) {
		LOCK(&x->next->m);
		UNLOCK(&x->m);
		x = x->next;
	}
	UNLOCK(&x->m);
	return NULL;
}

static void case_hand_over_hand(void)
{
	list_build(100);
	in_turn(walk, NULL, walk, NULL);
}

/* ---- many locks held at once ---- */

#define MANY 200
static pthread_mutex_t many[MANY];

static NOINLINE void many_init(void)
{
	for (int i = 0; i < MANY; i++)
		check(pthread_mutex_init(&many[i], NULL), "init");
}

static NOINLINE void *hold_all(void *p)
{
	(void)p;
	for (int i = 0; i < MANY; i++)
		LOCK(&many[i]);
	for (int i = MANY - 1; i >= 0; i--)
		UNLOCK(&many[i]);
	return NULL;
}

static void case_many_held(void)
{
	many_init();
	in_turn(hold_all, NULL, hold_all, NULL);
}

/* 100 held, then 150 -> 160 in one thread, 160 -> 150 in another:
 * an inversion past any fixed depth. */
static NOINLINE void *deep_fwd(void *p)
{
	(void)p;
	for (int i = 0; i < 100; i++)
		LOCK(&many[i]);
	LOCK(&many[150]);
	LOCK(&many[160]);
	UNLOCK(&many[160]);
	UNLOCK(&many[150]);
	for (int i = 99; i >= 0; i--)
		UNLOCK(&many[i]);
	return NULL;
}

static NOINLINE void *deep_back(void *p)
{
	(void)p;
	for (int i = 0; i < 100; i++)
		LOCK(&many[i]);
	LOCK(&many[160]);
	LOCK(&many[150]);
	UNLOCK(&many[150]);
	UNLOCK(&many[160]);
	for (int i = 99; i >= 0; i--)
		UNLOCK(&many[i]);
	return NULL;
}

static void case_many_held_inversion(void)
{
	many_init();
	in_turn(deep_fwd, NULL, deep_back, NULL);
}

/* ---- lifetimes: past any fixed table, then a real ABBA ---- */

static NOINLINE void churn(long n)
{
	for (long i = 0; i < n; i++) {
		struct account *a = account_new(i);

		acct_lock(a);
		acct_unlock(a);
		account_free(a);
	}
}

static void case_lifetimes(long n)
{
	churn(n);
	case_abba_wrapper();
}

/* ---- memory reused for other locks ---- */

/* Two accounts taken lower address first in even rounds, higher first in
 * odd ones: whenever the allocator hands the same two blocks back (it
 * does, for blocks just freed), the order between two addresses flips. */
static NOINLINE void take_by_address(pthread_mutex_t *x, pthread_mutex_t *y, int round)
{
	if ((x < y) != (round % 2 == 0)) {
		pthread_mutex_t *t = x;
		x = y;
		y = t;
	}
	LOCK(x);
	LOCK(y);
	UNLOCK(y);
	UNLOCK(x);
}

/* Destroyed and freed, then the same memory holds new locks taken the
 * other way round. */
static void case_reuse_destroy(void)
{
	for (int round = 0; round < 4; round++) {
		struct account *a = account_new(1), *b = account_new(1);

		take_by_address(&a->m, &b->m, round);
		account_free(a);
		account_free(b);
	}
}

/* Freed without destroy (set by an initialiser, never destroyed). */
struct plain {
	pthread_mutex_t m;
	char pad[64];
};

static NOINLINE struct plain *plain_new(void)
{
	struct plain *p = malloc(sizeof *p);

	p->m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	return p;
}

static void case_reuse_free(void)
{
	for (int round = 0; round < 4; round++) {
		struct plain *a = plain_new(), *b = plain_new();

		take_by_address(&a->m, &b->m, round);
		free(a);
		free(b);
	}
}

/* One thread takes ri_a then ri_b until the pair is known (checked and
 * cached), then ri_b's life ends (destroyed, or initialised again) and a
 * new one begins at the same address: the old one's history is gone, but
 * the new one's order must be learnt, not taken from the cache, so that
 * taking them the other way round is a cycle. */
static pthread_mutex_t ri_a, ri_b;

static NOINLINE void reinit_ab(void)
{
	LOCK(&ri_a);
	LOCK(&ri_b);
	UNLOCK(&ri_b);
	UNLOCK(&ri_a);
}

static NOINLINE void reinit_ba(void)
{
	LOCK(&ri_b);
	LOCK(&ri_a);
	UNLOCK(&ri_a);
	UNLOCK(&ri_b);
}

static void case_reinit_abba(int destroy)
{
	check(pthread_mutex_init(&ri_a, NULL), "init a");
	check(pthread_mutex_init(&ri_b, NULL), "init b");
	for (int i = 0; i < 3; i++)
		reinit_ab();
	if (destroy)
		check(pthread_mutex_destroy(&ri_b), "destroy b");
	check(pthread_mutex_init(&ri_b, NULL), "init b again");
	for (int i = 0; i < 3; i++)
		reinit_ab();
	reinit_ba();
}

/* An on-stack lock (a completion), initialised and destroyed each call,
 * nested under a global lock one call and over it the next. */
static pthread_mutex_t stack_global = PTHREAD_MUTEX_INITIALIZER;

static NOINLINE void completion(int outer)
{
	pthread_mutex_t done;

	check(pthread_mutex_init(&done, NULL), "init completion");
	if (outer) {
		LOCK(&done);
		LOCK(&stack_global);
		UNLOCK(&stack_global);
		UNLOCK(&done);
	} else {
		LOCK(&stack_global);
		LOCK(&done);
		UNLOCK(&done);
		UNLOCK(&stack_global);
	}
	check(pthread_mutex_destroy(&done), "destroy completion");
}

static void case_stack_completion(void)
{
	completion(1);
	completion(0);
}

/* ---- condition variables ---- */

static pthread_mutex_t cv_m, cv_n;
static pthread_cond_t cv_c = PTHREAD_COND_INITIALIZER;
static int cv_ready;

static NOINLINE void cv_init(void)
{
	check(pthread_mutex_init(&cv_m, NULL), "init m");
	check(pthread_mutex_init(&cv_n, NULL), "init n");
}

/* Holds M then N, waits on M: the re-lock takes M while holding N. */
static NOINLINE void *waiter_holding_n(void *p)
{
	(void)p;
	LOCK(&cv_m);
	LOCK(&cv_n);
	while (!cv_ready)
		check(pthread_cond_wait(&cv_c, &cv_m), "wait");
	UNLOCK(&cv_n);
	UNLOCK(&cv_m);
	return NULL;
}

static void case_cond_relock(void)
{
	pthread_t t;

	cv_init();
	check(pthread_create(&t, NULL, waiter_holding_n, NULL), "create");
	for (;;) { /* until the waiter waits: it then holds N, not M */
		LOCK(&cv_m);
		int busy = pthread_mutex_trylock(&cv_n);
		if (busy == 0)
			UNLOCK(&cv_n);
		if (busy == EBUSY) {
			cv_ready = 1;
			check(pthread_cond_signal(&cv_c), "signal");
			UNLOCK(&cv_m);
			break;
		}
		UNLOCK(&cv_m);
		sched_yield();
	}
	check(pthread_join(t, NULL), "join");
}

/* A producer and a consumer on one mutex and condvar, with a second lock
 * taken inside, always after the first: correct. */
static int cv_items;
static NOINLINE void *consumer(void *p)
{
	(void)p;
	for (int i = 0; i < 1000; i++) {
		LOCK(&cv_m);
		while (cv_items == 0)
			check(pthread_cond_wait(&cv_c, &cv_m), "wait");
		cv_items--;
		LOCK(&cv_n);
		UNLOCK(&cv_n);
		UNLOCK(&cv_m);
	}
	return NULL;
}

static void case_cond_clean(void)
{
	pthread_t t;

	cv_init();
	check(pthread_create(&t, NULL, consumer, NULL), "create");
	for (int i = 0; i < 1000; i++) {
		LOCK(&cv_m);
		cv_items++;
		LOCK(&cv_n);
		UNLOCK(&cv_n);
		check(pthread_cond_signal(&cv_c), "signal");
		UNLOCK(&cv_m);
	}
	check(pthread_join(t, NULL), "join");
}

/* The real hang: the waiter holds N and waits on M; the signaller holds M
 * and takes N.  The watchdog sees the waiter blocked re-taking M. */
static NOINLINE void *hang_waiter(void *p)
{
	(void)p;
	LOCK(&cv_n);
	LOCK(&cv_m);
	cv_ready = 0;
	while (!cv_ready)
		check(pthread_cond_wait(&cv_c, &cv_m), "wait");
	UNLOCK(&cv_m);
	UNLOCK(&cv_n);
	return NULL;
}

static void case_hang_cond(void)
{
	pthread_t t;

	cv_init();
	cv_ready = -1;
	check(pthread_create(&t, NULL, hang_waiter, NULL), "create");
	for (;;) {
		LOCK(&cv_m);
		if (cv_ready == 0)
			break; /* the waiter waits (holding N), we hold M */
		UNLOCK(&cv_m);
		sched_yield();
	}
	cv_ready = 1;
	check(pthread_cond_signal(&cv_c), "signal");
	LOCK(&cv_n); /* the waiter holds it and wants M back: deadlock */
	fprintf(stderr, "lockdep_cases: hang_cond did not hang\n");
	exit(1);
}

/* ---- trylock ---- */

static pthread_mutex_t ta, tb;

static NOINLINE void *try_fwd(void *p) { (void)p; LOCK(&ta); LOCK(&tb); UNLOCK(&tb); UNLOCK(&ta); return NULL; }
static NOINLINE void *try_back(void *p)
{
	(void)p;
	LOCK(&tb);
	if (pthread_mutex_trylock(&ta) == 0)
		UNLOCK(&ta);
	UNLOCK(&tb);
	return NULL;
}

/* A lock taken by trylock still orders the locks taken after it. */
static NOINLINE void *try_then_block(void *p)
{
	(void)p;
	check(pthread_mutex_trylock(&tb), "trylock b");
	LOCK(&ta);
	UNLOCK(&ta);
	UNLOCK(&tb);
	return NULL;
}

static void case_trylock(int blocking)
{
	check(pthread_mutex_init(&ta, NULL), "init");
	check(pthread_mutex_init(&tb, NULL), "init");
	in_turn(try_fwd, NULL, blocking ? try_then_block : try_back, NULL);
}

/* ---- rwlocks ---- */

static pthread_rwlock_t r1, r2;
static pthread_mutex_t rm;

static NOINLINE void rw_init(int kind)
{
	pthread_rwlockattr_t a;

	check(pthread_rwlockattr_init(&a), "attr");
	check(pthread_rwlockattr_setkind_np(&a, kind), "kind");
	check(pthread_rwlock_init(&r1, &a), "init r1");
	check(pthread_rwlock_init(&r2, &a), "init r2");
	check(pthread_mutex_init(&rm, NULL), "init rm");
}

static NOINLINE void *read_12(void *p)
{
	(void)p;
	check(pthread_rwlock_rdlock(&r1), "rd r1");
	check(pthread_rwlock_rdlock(&r2), "rd r2");
	check(pthread_rwlock_unlock(&r2), "un r2");
	check(pthread_rwlock_unlock(&r1), "un r1");
	return NULL;
}

static NOINLINE void *read_21(void *p)
{
	(void)p;
	check(pthread_rwlock_rdlock(&r2), "rd r2");
	check(pthread_rwlock_rdlock(&r1), "rd r1");
	check(pthread_rwlock_unlock(&r1), "un r1");
	check(pthread_rwlock_unlock(&r2), "un r2");
	return NULL;
}

static NOINLINE void *write_then_mutex(void *p)
{
	(void)p;
	check(pthread_rwlock_wrlock(&r1), "wr r1");
	LOCK(&rm);
	UNLOCK(&rm);
	check(pthread_rwlock_unlock(&r1), "un r1");
	return NULL;
}

static NOINLINE void *mutex_then_read(void *p)
{
	(void)p;
	LOCK(&rm);
	check(pthread_rwlock_rdlock(&r1), "rd r1");
	check(pthread_rwlock_unlock(&r1), "un r1");
	UNLOCK(&rm);
	return NULL;
}

static NOINLINE void rw_recursive_read(void)
{
	check(pthread_rwlock_rdlock(&r1), "rd r1");
	check(pthread_rwlock_rdlock(&r1), "rd r1 again");
	check(pthread_rwlock_unlock(&r1), "un");
	check(pthread_rwlock_unlock(&r1), "un");
}

static NOINLINE void rw_upgrade(void)
{
	struct timespec ts = soon();

	check(pthread_rwlock_rdlock(&r1), "rd r1");
	int err = pthread_rwlock_timedwrlock(&r1, &ts);
	if (err == 0)
		check(pthread_rwlock_unlock(&r1), "un");
	check(pthread_rwlock_unlock(&r1), "un");
}

/* A reader that re-reads a writer-preferring rwlock while a writer waits
 * for it: the real hang, for the watchdog. */
static NOINLINE void *hang_writer(void *p)
{
	(void)p;
	check(pthread_rwlock_wrlock(&r1), "wr r1");
	return NULL;
}

static void case_hang_rw(void)
{
	pthread_t t;

	rw_init(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	check(pthread_rwlock_rdlock(&r1), "rd r1");
	check(pthread_create(&t, NULL, hang_writer, NULL), "create");
	/* until the writer queues: a try-read then fails */
	for (;;) {
		int e = pthread_rwlock_tryrdlock(&r1);

		if (e == 0) {
			check(pthread_rwlock_unlock(&r1), "un");
			sched_yield();
			continue;
		}
		break;
	}
	check(pthread_rwlock_rdlock(&r1), "rd r1 again"); /* behind the writer */
	fprintf(stderr, "lockdep_cases: hang_rw did not hang\n");
	exit(1);
}

/* ---- other kinds ---- */

static pthread_spinlock_t sp1, sp2;
static NOINLINE void *spin_12(void *p) { (void)p; pthread_spin_lock(&sp1); pthread_spin_lock(&sp2); pthread_spin_unlock(&sp2); pthread_spin_unlock(&sp1); return NULL; }
static NOINLINE void *spin_21(void *p) { (void)p; pthread_spin_lock(&sp2); pthread_spin_lock(&sp1); pthread_spin_unlock(&sp1); pthread_spin_unlock(&sp2); return NULL; }

/* mutex -> rwlock (write) -> spinlock -> mutex: a cycle of three kinds */
static NOINLINE void *mix_1(void *p) { (void)p; LOCK(&rm); check(pthread_rwlock_wrlock(&r1), "wr"); check(pthread_rwlock_unlock(&r1), "un"); UNLOCK(&rm); return NULL; }
static NOINLINE void *mix_2(void *p) { (void)p; check(pthread_rwlock_wrlock(&r1), "wr"); pthread_spin_lock(&sp1); pthread_spin_unlock(&sp1); check(pthread_rwlock_unlock(&r1), "un"); return NULL; }
static NOINLINE void *mix_3(void *p) { (void)p; pthread_spin_lock(&sp1); LOCK(&rm); UNLOCK(&rm); pthread_spin_unlock(&sp1); return NULL; }

static void case_mixed3(void)
{
	rw_init(PTHREAD_RWLOCK_DEFAULT_NP);
	check(pthread_spin_init(&sp1, 0), "spin init");
	in_turn(mix_1, NULL, mix_2, NULL);
	in_turn(mix_3, NULL, NULL, NULL);
}

static pthread_mutex_t c3a, c3b, c3c;
static NOINLINE void take2(pthread_mutex_t *x, pthread_mutex_t *y) { LOCK(x); LOCK(y); UNLOCK(y); UNLOCK(x); }
static void *c3_ab(void *p) { (void)p; take2(&c3a, &c3b); return NULL; }
static void *c3_bc(void *p) { (void)p; take2(&c3b, &c3c); return NULL; }
static void *c3_ca(void *p) { (void)p; take2(&c3c, &c3a); return NULL; }

static void case_cycle3(void)
{
	check(pthread_mutex_init(&c3a, NULL), "init");
	check(pthread_mutex_init(&c3b, NULL), "init");
	check(pthread_mutex_init(&c3c, NULL), "init");
	in_turn(c3_ab, NULL, c3_bc, NULL);
	in_turn(c3_ca, NULL, NULL, NULL);
}

static pthread_mutex_t lk_alpha = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lk_beta = PTHREAD_MUTEX_INITIALIZER;
static void *st_ab(void *p) { (void)p; take2(&lk_alpha, &lk_beta); return NULL; }
static void *st_ba(void *p) { (void)p; take2(&lk_beta, &lk_alpha); return NULL; }

static NOINLINE void self_relock(void)
{
	struct timespec ts = soon();

	LOCK(&lk_alpha);
	if (pthread_mutex_timedlock(&lk_alpha, &ts) != ETIMEDOUT)
		exit(1);
	UNLOCK(&lk_alpha);
}

static NOINLINE void recursive_ok(void)
{
	pthread_mutex_t m;
	pthread_mutexattr_t a;

	check(pthread_mutexattr_init(&a), "attr");
	check(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), "type");
	check(pthread_mutex_init(&m, &a), "init");
	LOCK(&m);
	LOCK(&m);
	LOCK(&stack_global);
	UNLOCK(&stack_global);
	UNLOCK(&m);
	UNLOCK(&m);
	check(pthread_mutex_destroy(&m), "destroy");
}

static NOINLINE void unlock_unheld(void)
{
	LOCK(&lk_alpha);
	UNLOCK(&lk_alpha);
	(void)pthread_mutex_unlock(&lk_alpha);
}

static NOINLINE void destroy_held(void)
{
	pthread_mutex_t m;

	check(pthread_mutex_init(&m, NULL), "init");
	LOCK(&m);
	(void)pthread_mutex_destroy(&m);
}

/* ---- dlopen ---- */

static void lib_call(void *h, const char *fn)
{
	void (*f)(void) = (void (*)(void))dlsym(h, fn);

	if (!f) {
		fprintf(stderr, "lockdep_cases: %s: %s\n", fn, dlerror());
		exit(1);
	}
	f();
}

static void *lib_open(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "lockdep_cases: %s\n", dlerror());
		exit(1);
	}
	return h;
}

static void case_dlopen(const char *lib, int reload)
{
	void *h = lib_open(lib);

	lib_call(h, "caselib_ab");
	if (reload) { /* unloaded, loaded again: its locks are new locks */
		dlclose(h);
		h = lib_open(lib);
	}
	lib_call(h, "caselib_ba");
	dlclose(h);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	const char *lib = argc > 2 ? argv[2] : "";

	alarm(600); /* a hang fails the test */
	if (!strcmp(c, "abba_wrapper"))
		case_abba_wrapper();
	else if (!strcmp(c, "joined_phases"))
		case_joined_phases();
	else if (!strcmp(c, "transfer_ordered"))
		case_transfer_ordered();
	else if (!strcmp(c, "wrapper_pattern"))
		case_wrapper_pattern();
	else if (!strcmp(c, "philosophers"))
		case_philosophers(0);
	else if (!strcmp(c, "philosophers_ordered"))
		case_philosophers(1);
	else if (!strcmp(c, "layering"))
		case_layering();
	else if (!strcmp(c, "ctor_abba"))
		case_ctor_abba();
	else if (!strcmp(c, "loop_ordered"))
		case_loop_ordered();
	else if (!strcmp(c, "hand_over_hand"))
		case_hand_over_hand();
	else if (!strcmp(c, "many_held"))
		case_many_held();
	else if (!strcmp(c, "many_held_inversion"))
		case_many_held_inversion();
	else if (!strcmp(c, "lifetimes"))
		case_lifetimes(argc > 2 ? atol(argv[2]) : 1100000);
	else if (!strcmp(c, "reuse_destroy"))
		case_reuse_destroy();
	else if (!strcmp(c, "reuse_free"))
		case_reuse_free();
	else if (!strcmp(c, "reinit_destroy_abba"))
		case_reinit_abba(1);
	else if (!strcmp(c, "reinit_abba"))
		case_reinit_abba(0);
	else if (!strcmp(c, "stack_completion"))
		case_stack_completion();
	else if (!strcmp(c, "cond_relock"))
		case_cond_relock();
	else if (!strcmp(c, "cond_clean"))
		case_cond_clean();
	else if (!strcmp(c, "hang_cond"))
		case_hang_cond();
	else if (!strcmp(c, "trylock_reverse"))
		case_trylock(0);
	else if (!strcmp(c, "trylock_then_block"))
		case_trylock(1);
	else if (!strcmp(c, "rw_read_read_default")) {
		rw_init(PTHREAD_RWLOCK_DEFAULT_NP);
		in_turn(read_12, NULL, read_21, NULL);
	} else if (!strcmp(c, "rw_read_read_writer_pref")) {
		rw_init(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		in_turn(read_12, NULL, read_21, NULL);
	} else if (!strcmp(c, "rw_write_read")) {
		rw_init(PTHREAD_RWLOCK_DEFAULT_NP);
		in_turn(write_then_mutex, NULL, mutex_then_read, NULL);
	} else if (!strcmp(c, "rw_recursive_read_np")) {
		rw_init(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		rw_recursive_read();
	} else if (!strcmp(c, "rw_recursive_read_default")) {
		rw_init(PTHREAD_RWLOCK_DEFAULT_NP);
		rw_recursive_read();
	} else if (!strcmp(c, "rw_upgrade")) {
		rw_init(PTHREAD_RWLOCK_DEFAULT_NP);
		rw_upgrade();
	} else if (!strcmp(c, "hang_rw"))
		case_hang_rw();
	else if (!strcmp(c, "spin_abba")) {
		check(pthread_spin_init(&sp1, 0), "spin init");
		check(pthread_spin_init(&sp2, 0), "spin init");
		in_turn(spin_12, NULL, spin_21, NULL);
	} else if (!strcmp(c, "mixed3"))
		case_mixed3();
	else if (!strcmp(c, "cycle3"))
		case_cycle3();
	else if (!strcmp(c, "static_abba"))
		in_turn(st_ab, NULL, st_ba, NULL);
	else if (!strcmp(c, "self_deadlock"))
		self_relock();
	else if (!strcmp(c, "recursive_ok"))
		recursive_ok();
	else if (!strcmp(c, "unlock_unheld"))
		unlock_unheld();
	else if (!strcmp(c, "destroy_held"))
		destroy_held();
	else if (!strcmp(c, "dlopen_abba"))
		case_dlopen(lib, 0);
	else if (!strcmp(c, "dlclose_reload"))
		case_dlopen(lib, 1);
	else {
		fprintf(stderr, "lockdep_cases: unknown case '%s'\n", c);
		return 2;
	}
	printf("%s: done\n", c);
	return 0;
}
