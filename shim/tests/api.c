/* SPDX-License-Identifier: MIT */
/*
 * Every interposed pthread function, every mutex kind and every error code,
 * printed one result per line.  The shim tests run this program with and
 * without LD_PRELOAD=libqlock-pthread.so and require identical output, so
 * glibc itself is the oracle (only results that do not depend on timing
 * are printed).  `api which` prints which implementation serves the calls.
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

/* Old symbol versions, to prove that they are interposed too: the first
 * version of each function on this architecture (its glibc port's first
 * release; where that is the current one, the call is simply repeated). */
#if defined(__x86_64__)
#define GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__s390x__)
#define GLIBC_BASE "GLIBC_2.2"
#elif defined(__aarch64__)
#define GLIBC_BASE "GLIBC_2.17"
#else
#error "add this architecture's first glibc version (objdump -T libc.so.6 | grep pthread_spin_trylock)"
#endif
int old_cond_init(pthread_cond_t *, const pthread_condattr_t *);
int old_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int old_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int old_cond_signal(pthread_cond_t *);
int old_cond_broadcast(pthread_cond_t *);
int old_cond_destroy(pthread_cond_t *);
int old_mutex_trylock(pthread_mutex_t *);
int old_rwlock_wrlock(pthread_rwlock_t *);
int old_rwlock_unlock(pthread_rwlock_t *);
int old_spin_trylock(pthread_spinlock_t *);
__asm__(".symver old_cond_init, pthread_cond_init@" GLIBC_BASE);
__asm__(".symver old_cond_wait, pthread_cond_wait@" GLIBC_BASE);
__asm__(".symver old_cond_timedwait, pthread_cond_timedwait@" GLIBC_BASE);
__asm__(".symver old_cond_signal, pthread_cond_signal@" GLIBC_BASE);
__asm__(".symver old_cond_broadcast, pthread_cond_broadcast@" GLIBC_BASE);
__asm__(".symver old_cond_destroy, pthread_cond_destroy@" GLIBC_BASE);
__asm__(".symver old_mutex_trylock, pthread_mutex_trylock@" GLIBC_BASE);
__asm__(".symver old_rwlock_wrlock, pthread_rwlock_wrlock@" GLIBC_BASE);
__asm__(".symver old_rwlock_unlock, pthread_rwlock_unlock@" GLIBC_BASE);
__asm__(".symver old_spin_trylock, pthread_spin_trylock@" GLIBC_BASE);
/* glibc's public double-underscore aliases. */
int __pthread_mutex_lock(pthread_mutex_t *);
int __pthread_mutex_unlock(pthread_mutex_t *);
int __pthread_rwlock_rdlock(pthread_rwlock_t *);
int __pthread_rwlock_unlock(pthread_rwlock_t *);
__asm__(".symver __pthread_mutex_lock, __pthread_mutex_lock@" GLIBC_BASE);
__asm__(".symver __pthread_mutex_unlock, __pthread_mutex_unlock@" GLIBC_BASE);
__asm__(".symver __pthread_rwlock_rdlock, __pthread_rwlock_rdlock@" GLIBC_BASE);
__asm__(".symver __pthread_rwlock_unlock, __pthread_rwlock_unlock@" GLIBC_BASE);

static int failures;

static const char *en(int e)
{
	static char buf[32];
	const char *n;

	if (e == 0)
		return "0";
	n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, sizeof buf, "%d", e);
	return buf;
}

#define R(label, expr) printf("%-44s %s\n", (label), en(expr))

static struct timespec in_ms(clockid_t clk, long ms)
{
	struct timespec t;

	clock_gettime(clk, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static const struct timespec bad_ns = { .tv_sec = 1, .tv_nsec = 1000000000L };
static const struct timespec neg_ns = { .tv_sec = 1, .tv_nsec = -1 };
static const struct timespec past = { .tv_sec = -1, .tv_nsec = 0 };

/* Run fn(arg) in another thread and return its result. */
struct job { int (*fn)(void *); void *arg; int ret; };
static void *job_main(void *p)
{
	struct job *j = p;
	j->ret = j->fn(j->arg);
	return NULL;
}
static int other(int (*fn)(void *), void *arg)
{
	struct job j = { fn, arg, -1 };
	pthread_t t;

	if (pthread_create(&t, NULL, job_main, &j) != 0)
		abort();
	pthread_join(t, NULL);
	return j.ret;
}

static int o_trylock(void *m) { return pthread_mutex_trylock(m); }
static int o_unlock(void *m) { return pthread_mutex_unlock(m); }
static int o_lock(void *m) { return pthread_mutex_lock(m); }
static int o_trylock_unlock(void *m)
{
	int e = pthread_mutex_trylock(m);
	if (e == 0)
		e = pthread_mutex_unlock(m);
	return e;
}
static int o_timed20(void *m)
{
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	return pthread_mutex_timedlock(m, &t);
}
static int o_clock20(void *m)
{
	struct timespec t = in_ms(CLOCK_MONOTONIC, 20);
	return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &t);
}
static int o_timedbad(void *m) { return pthread_mutex_timedlock(m, &bad_ns); }
static int o_timedneg(void *m) { return pthread_mutex_timedlock(m, &neg_ns); }
static int o_timedpast(void *m) { return pthread_mutex_timedlock(m, &past); }

/* ---- mutexes ---------------------------------------------------------- */

static void mutex_suite(const char *name, pthread_mutex_t *m, int kind)
{
	char l[96];
	struct timespec t;
#define L(s) (snprintf(l, sizeof l, "mutex.%s.%s", name, s), l)

	R(L("lock"), pthread_mutex_lock(m));
	R(L("trylock.self"), pthread_mutex_trylock(m));
	if (kind == PTHREAD_MUTEX_RECURSIVE)
		R(L("unlock.after_trylock"), pthread_mutex_unlock(m));
	if (kind != PTHREAD_MUTEX_NORMAL && kind != PTHREAD_MUTEX_DEFAULT) {
		R(L("lock.self"), pthread_mutex_lock(m));
		if (kind == PTHREAD_MUTEX_RECURSIVE)
			R(L("unlock.after_lock.self"), pthread_mutex_unlock(m));
	}
	t = in_ms(CLOCK_REALTIME, 30);
	R(L("timedlock.self"), pthread_mutex_timedlock(m, &t));
	if (kind == PTHREAD_MUTEX_RECURSIVE)
		R(L("unlock.after_timedlock.self"), pthread_mutex_unlock(m));
	R(L("timedlock.self.bad_nsec"), pthread_mutex_timedlock(m, &bad_ns));
	if (kind == PTHREAD_MUTEX_RECURSIVE)
		R(L("unlock.after_timedlock.self.bad"), pthread_mutex_unlock(m));
	R(L("timedlock.self.past"), pthread_mutex_timedlock(m, &past));
	if (kind == PTHREAD_MUTEX_RECURSIVE)
		R(L("unlock.after_timedlock.self.past"), pthread_mutex_unlock(m));
	t = in_ms(CLOCK_MONOTONIC, 10);
	R(L("clocklock.bad_clock"), pthread_mutex_clocklock(m, CLOCK_PROCESS_CPUTIME_ID, &t));
	R(L("other.trylock"), other(o_trylock, m));
	R(L("other.timedlock"), other(o_timed20, m));
	R(L("other.clocklock"), other(o_clock20, m));
	R(L("other.timedlock.bad_nsec"), other(o_timedbad, m));
	R(L("other.timedlock.neg_nsec"), other(o_timedneg, m));
	R(L("other.timedlock.past"), other(o_timedpast, m));
	if (kind != PTHREAD_MUTEX_NORMAL && kind != PTHREAD_MUTEX_DEFAULT)
		R(L("other.unlock"), other(o_unlock, m));
	if (!strstr(name, "robust")) /* glibc does not check robust ones */
		R(L("destroy.held"), pthread_mutex_destroy(m));
	R(L("unlock"), pthread_mutex_unlock(m));
	if (kind != PTHREAD_MUTEX_NORMAL && kind != PTHREAD_MUTEX_DEFAULT)
		R(L("unlock.unlocked"), pthread_mutex_unlock(m));
	R(L("other.trylock_unlock.free"), other(o_trylock_unlock, m));
	R(L("trylock.free_again"), pthread_mutex_trylock(m));
	R(L("unlock.2"), pthread_mutex_unlock(m));
	R(L("timedlock.free.bad_nsec"), pthread_mutex_timedlock(m, &bad_ns));
	R(L("unlock.3"), pthread_mutex_unlock(m));
	R(L("timedlock.free.past"), pthread_mutex_timedlock(m, &past));
	R(L("unlock.4"), pthread_mutex_unlock(m));
	R(L("clocklock.free.mono"), pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &t));
	R(L("unlock.5"), pthread_mutex_unlock(m));
#ifndef __SANITIZE_ADDRESS__
	R(L("__pthread_mutex_lock"), __pthread_mutex_lock(m));
	R(L("old_trylock.held"), other(o_trylock, m));
	R(L("__pthread_mutex_unlock"), __pthread_mutex_unlock(m));
#else
	/* gcc 12's ASan intercepts __pthread_mutex_lock/unlock but, as glibc
	 * 2.34 made them compat-only, finds no glibc function behind its
	 * interceptor: the run without the shim would call NULL. */
	printf("%-44s skipped under ASan\n", L("__pthread_mutex_lock+unlock"));
#endif
	R(L("trylock@" GLIBC_BASE), old_mutex_trylock(m));
	R(L("unlock.6"), pthread_mutex_unlock(m));
	R(L("destroy"), pthread_mutex_destroy(m));
#undef L
}

static void mutex_attr_suite(const char *name, int type, int pshared,
			     int robust, int proto)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;

	pthread_mutexattr_init(&a);
	if (type >= 0)
		pthread_mutexattr_settype(&a, type);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (proto != PTHREAD_PRIO_NONE)
		pthread_mutexattr_setprotocol(&a, proto);
	if (proto == PTHREAD_PRIO_PROTECT)
		pthread_mutexattr_setprioceiling(&a, 0);
	memset(&m, 0x5a, sizeof m);
	int err = pthread_mutex_init(&m, &a);
	printf("%-44s %s\n", name, en(err));
	if (!err)
		mutex_suite(name, &m, type < 0 || type == PTHREAD_MUTEX_ADAPTIVE_NP ? PTHREAD_MUTEX_DEFAULT : type);
	pthread_mutexattr_destroy(&a);
}

static void mutex_tests(void)
{
	static pthread_mutex_t s_default = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t s_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t s_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t s_adp = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t s_zero; /* bss */

	mutex_suite("static_default", &s_default, PTHREAD_MUTEX_DEFAULT);
	mutex_suite("static_recursive", &s_rec, PTHREAD_MUTEX_RECURSIVE);
	mutex_suite("static_errorcheck", &s_err, PTHREAD_MUTEX_ERRORCHECK);
	mutex_suite("static_adaptive", &s_adp, PTHREAD_MUTEX_DEFAULT);
	mutex_suite("bss_zero", &s_zero, PTHREAD_MUTEX_DEFAULT);
	pthread_mutex_t *h = malloc(sizeof *h * 3);
	memset(h, 0, sizeof *h * 3); /* memory the program zeroed itself */
	mutex_suite("memset_zero", &h[1], PTHREAD_MUTEX_DEFAULT);
	free(h);
	mutex_attr_suite("attr_null_type", -1, 0, 0, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_normal", PTHREAD_MUTEX_NORMAL, 0, 0, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 0, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_adaptive", PTHREAD_MUTEX_ADAPTIVE_NP, 0, 0, PTHREAD_PRIO_NONE);
	/* glibc-owned kinds */
	mutex_attr_suite("attr_pshared", PTHREAD_MUTEX_NORMAL, 1, 0, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_pshared_errorcheck", PTHREAD_MUTEX_ERRORCHECK, 1, 0, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_robust_errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 1, PTHREAD_PRIO_NONE);
	mutex_attr_suite("attr_pi_recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0, PTHREAD_PRIO_INHERIT);
	mutex_attr_suite("attr_pi_errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 0, PTHREAD_PRIO_INHERIT);

	/* Use after destroy: glibc answers EINVAL (kind -1). */
	pthread_mutex_t d = PTHREAD_MUTEX_INITIALIZER;
	R("mutex.destroyed.destroy", pthread_mutex_destroy(&d));
	R("mutex.destroyed.lock", pthread_mutex_lock(&d));
	R("mutex.destroyed.trylock", pthread_mutex_trylock(&d));
	R("mutex.destroyed.unlock", pthread_mutex_unlock(&d));
	R("mutex.destroyed.reinit", pthread_mutex_init(&d, NULL));
	R("mutex.destroyed.reinit.lock", pthread_mutex_lock(&d));
	R("mutex.destroyed.reinit.unlock", pthread_mutex_unlock(&d));

	/* Robust: owner dies holding it. */
	pthread_mutexattr_t a;
	pthread_mutex_t rm;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&rm, &a);
	R("mutex.robust.other.lock_and_exit", other(o_lock, &rm));
	R("mutex.robust.lock.owner_died", pthread_mutex_lock(&rm));
	R("mutex.robust.consistent", pthread_mutex_consistent(&rm));
	R("mutex.robust.unlock", pthread_mutex_unlock(&rm));
	R("mutex.robust.destroy", pthread_mutex_destroy(&rm));
	pthread_mutexattr_destroy(&a);
	/* Consistent on a qlock mutex: EINVAL as glibc (not robust). */
	pthread_mutex_t nm = PTHREAD_MUTEX_INITIALIZER;
	R("mutex.normal.consistent", pthread_mutex_consistent(&nm));
}

/* ---- condition variables ---------------------------------------------- */

struct cw {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int flag, waiting, done;
	int ret;
	int relock; /* result of trylock/unlock by the waiter after the wait */
	int old;    /* use the GLIBC_BASE entry points */
};

static void *cw_waiter(void *p)
{
	struct cw *w = p;

	pthread_mutex_lock(w->m);
	w->waiting = 1;
	while (!w->flag) {
		w->ret = w->old ? old_cond_wait(w->c, w->m) : pthread_cond_wait(w->c, w->m);
		if (w->ret)
			break;
	}
	w->done = 1;
	pthread_mutex_unlock(w->m);
	return NULL;
}

static void cond_pair(const char *name, pthread_mutex_t *m, pthread_cond_t *c,
		      int broadcast, int old)
{
	char l[96];
	struct cw w = { m, c, 0, 0, 0, -1, 0, old };
	pthread_t t[3];
	struct cw ws[3];
	int n = broadcast ? 3 : 1;

	for (int i = 0; i < n; i++) {
		ws[i] = w;
		pthread_create(&t[i], NULL, cw_waiter, &ws[i]);
	}
	for (int i = 0; i < n; i++) {
		for (;;) {
			pthread_mutex_lock(m);
			int ok = ws[i].waiting;
			pthread_mutex_unlock(m);
			if (ok)
				break;
			usleep(1000);
		}
	}
	pthread_mutex_lock(m);
	for (int i = 0; i < n; i++)
		ws[i].flag = 1;
	int e = broadcast ? (old ? old_cond_broadcast(c) : pthread_cond_broadcast(c))
			  : (old ? old_cond_signal(c) : pthread_cond_signal(c));
	pthread_mutex_unlock(m);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	snprintf(l, sizeof l, "cond.%s.%s", name, broadcast ? "broadcast" : "signal");
	R(l, e);
	for (int i = 0; i < n; i++) {
		snprintf(l, sizeof l, "cond.%s.%s.waiter%d", name,
			 broadcast ? "broadcast" : "signal", i);
		R(l, ws[i].ret);
	}
}

static void cond_suite(const char *name, pthread_mutex_t *m, int kind)
{
	char l[96];
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec t;
#define L(s) (snprintf(l, sizeof l, "cond.%s.%s", name, s), l)

	cond_pair(name, m, &c, 0, 0);
	cond_pair(name, m, &c, 1, 0);
	pthread_mutex_lock(m);
	t = in_ms(CLOCK_REALTIME, 20);
	R(L("timedwait.timeout"), pthread_cond_timedwait(&c, m, &t));
	R(L("held_after_timeout.other_trylock"), other(o_trylock, m));
	t = in_ms(CLOCK_MONOTONIC, 20);
	R(L("clockwait.mono.timeout"), pthread_cond_clockwait(&c, m, CLOCK_MONOTONIC, &t));
	R(L("clockwait.bad_clock"), pthread_cond_clockwait(&c, m, CLOCK_THREAD_CPUTIME_ID, &t));
	R(L("timedwait.bad_nsec"), pthread_cond_timedwait(&c, m, &bad_ns));
	R(L("timedwait.neg_nsec"), pthread_cond_timedwait(&c, m, &neg_ns));
	R(L("timedwait.past"), pthread_cond_timedwait(&c, m, &past));
	R(L("held_after_past.other_trylock"), other(o_trylock, m));
	R(L("unlock"), pthread_mutex_unlock(m));
	if (kind == PTHREAD_MUTEX_ERRORCHECK || kind == PTHREAD_MUTEX_RECURSIVE) {
		t = in_ms(CLOCK_REALTIME, 20);
		R(L("timedwait.not_owner"), pthread_cond_timedwait(&c, m, &t));
	}
	R(L("signal.nobody"), pthread_cond_signal(&c));
	R(L("broadcast.nobody"), pthread_cond_broadcast(&c));
	R(L("destroy"), pthread_cond_destroy(&c));
#undef L
}

static void cond_tests(void)
{
	static pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t m1 = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t m2 = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t m3 = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
	pthread_mutex_t mr;
	pthread_mutexattr_t a;

	cond_suite("normal", &m0, PTHREAD_MUTEX_NORMAL);
	cond_suite("recursive", &m1, PTHREAD_MUTEX_RECURSIVE);
	cond_suite("errorcheck", &m2, PTHREAD_MUTEX_ERRORCHECK);
	cond_suite("adaptive", &m3, PTHREAD_MUTEX_NORMAL);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&mr, &a);
	cond_suite("robust_mutex", &mr, PTHREAD_MUTEX_NORMAL);
	pthread_mutex_destroy(&mr);
	pthread_mutexattr_destroy(&a);

	/* condattr: monotonic clock, and process-shared (glibc-owned). */
	pthread_condattr_t ca;
	pthread_cond_t c;
	struct timespec t;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	R("cond.attr_monotonic.init", pthread_cond_init(&c, &ca));
	pthread_mutex_lock(&m0);
	t = in_ms(CLOCK_MONOTONIC, 20);
	R("cond.attr_monotonic.timedwait", pthread_cond_timedwait(&c, &m0, &t));
	pthread_mutex_unlock(&m0);
	cond_pair("attr_monotonic", &m0, &c, 1, 0);
	R("cond.attr_monotonic.destroy", pthread_cond_destroy(&c));
	pthread_condattr_destroy(&ca);

	pthread_mutex_t pm;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&pm, &a);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	R("cond.pshared.init", pthread_cond_init(&c, &ca));
	cond_pair("pshared", &pm, &c, 0, 0);
	cond_pair("pshared", &pm, &c, 1, 0);
	pthread_mutex_lock(&pm);
	t = in_ms(CLOCK_REALTIME, 20);
	R("cond.pshared.timedwait", pthread_cond_timedwait(&c, &pm, &t));
	pthread_mutex_unlock(&pm);
	R("cond.pshared.destroy", pthread_cond_destroy(&c));
	pthread_condattr_destroy(&ca);
	pthread_mutex_destroy(&pm);
	pthread_mutexattr_destroy(&a);

	/* The GLIBC_BASE condvar entry points. */
	R("cond.v2_2_5.init", old_cond_init(&c, NULL));
	cond_pair("v2_2_5", &m0, &c, 0, 1);
	cond_pair("v2_2_5", &m0, &c, 1, 1);
	pthread_mutex_lock(&m0);
	t = in_ms(CLOCK_REALTIME, 20);
	R("cond.v2_2_5.timedwait", old_cond_timedwait(&c, &m0, &t));
	pthread_mutex_unlock(&m0);
	R("cond.v2_2_5.destroy", old_cond_destroy(&c));
}

/* ---- cancellation ------------------------------------------------------ */

static pthread_mutex_t cm = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static int c_waiting, c_cleanup_unlock = -1, c_timed;

static void c_cleanup(void *arg)
{
	(void)arg;
	/* The mutex must be held again here: errorcheck unlock says 0. */
	c_cleanup_unlock = pthread_mutex_unlock(&cm);
}

static void *c_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm);
	pthread_cleanup_push(c_cleanup, NULL);
	c_waiting = 1;
	for (;;) {
		if (c_timed) {
			struct timespec t = in_ms(CLOCK_REALTIME, 60000);
			pthread_cond_timedwait(&cc, &cm, &t);
		} else {
			pthread_cond_wait(&cc, &cm);
		}
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static void cancel_one(const char *name, int timed, int early)
{
	char l[96];
	pthread_t t;
	void *res;

	c_waiting = 0;
	c_cleanup_unlock = -1;
	c_timed = timed;
	if (early)
		pthread_mutex_lock(&cm); /* the waiter blocks on the mutex */
	pthread_create(&t, NULL, c_waiter, NULL);
	if (early) {
		pthread_cancel(t); /* pending when it reaches the wait */
		pthread_mutex_unlock(&cm);
	} else {
		for (;;) {
			pthread_mutex_lock(&cm);
			int w = c_waiting;
			pthread_mutex_unlock(&cm); /* w: the waiter is in the wait */
			if (w)
				break;
			usleep(1000);
		}
		/* It set c_waiting under cm and released cm only inside the
		 * wait, so it is in the wait (a cancellation point) now. */
		pthread_cancel(t);
	}
	pthread_join(t, &res);
	snprintf(l, sizeof l, "cancel.%s.canceled", name);
	printf("%-44s %s\n", l, res == PTHREAD_CANCELED ? "yes" : "no");
	snprintf(l, sizeof l, "cancel.%s.cleanup_unlock", name);
	R(l, c_cleanup_unlock);
	snprintf(l, sizeof l, "cancel.%s.trylock_after", name);
	R(l, pthread_mutex_trylock(&cm));
	pthread_mutex_unlock(&cm);
}

/* ---- rwlocks ----------------------------------------------------------- */

static int o_tryrd(void *r) { return pthread_rwlock_tryrdlock(r); }
static int o_trywr(void *r) { return pthread_rwlock_trywrlock(r); }
static int o_timedrd(void *r)
{
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	int e = pthread_rwlock_timedrdlock(r, &t);
	if (e == 0)
		pthread_rwlock_unlock(r);
	return e;
}
static int o_timedwr(void *r)
{
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	int e = pthread_rwlock_timedwrlock(r, &t);
	if (e == 0)
		pthread_rwlock_unlock(r);
	return e;
}
static int o_clockwr(void *r)
{
	struct timespec t = in_ms(CLOCK_MONOTONIC, 20);
	return pthread_rwlock_clockwrlock(r, CLOCK_MONOTONIC, &t);
}
static int o_clockrd_past(void *r)
{
	return pthread_rwlock_clockrdlock(r, CLOCK_MONOTONIC, &past);
}
static int o_rdunlock(void *r)
{
	int e = pthread_rwlock_tryrdlock(r);
	if (e == 0)
		e = pthread_rwlock_unlock(r);
	return e;
}

static void rwlock_suite(const char *name, pthread_rwlock_t *r)
{
	char l[96];
	struct timespec t;
#define L(s) (snprintf(l, sizeof l, "rwlock.%s.%s", name, s), l)

	R(L("rdlock"), pthread_rwlock_rdlock(r));
	R(L("rdlock.again"), pthread_rwlock_rdlock(r));
	R(L("tryrdlock.again"), pthread_rwlock_tryrdlock(r));
	R(L("trywrlock.self_reading"), pthread_rwlock_trywrlock(r));
	R(L("other.tryrdlock"), other(o_rdunlock, r));
	R(L("other.trywrlock"), other(o_trywr, r));
	R(L("other.timedwrlock"), other(o_timedwr, r));
	R(L("other.clockwrlock"), other(o_clockwr, r));
	R(L("unlock.1"), pthread_rwlock_unlock(r));
	R(L("unlock.2"), pthread_rwlock_unlock(r));
	R(L("unlock.3"), pthread_rwlock_unlock(r));
	R(L("wrlock"), pthread_rwlock_wrlock(r));
	R(L("wrlock.self"), pthread_rwlock_wrlock(r));
	R(L("rdlock.self_writing"), pthread_rwlock_rdlock(r));
	R(L("tryrdlock.self_writing"), pthread_rwlock_tryrdlock(r));
	R(L("trywrlock.self_writing"), pthread_rwlock_trywrlock(r));
	t = in_ms(CLOCK_REALTIME, 20);
	R(L("timedwrlock.self"), pthread_rwlock_timedwrlock(r, &t));
	R(L("timedrdlock.self"), pthread_rwlock_timedrdlock(r, &t));
	R(L("timedrdlock.self.bad_nsec"), pthread_rwlock_timedrdlock(r, &bad_ns));
	R(L("timedwrlock.self.bad_nsec"), pthread_rwlock_timedwrlock(r, &bad_ns));
	R(L("clockrdlock.bad_clock"), pthread_rwlock_clockrdlock(r, CLOCK_PROCESS_CPUTIME_ID, &t));
	R(L("clockwrlock.bad_clock"), pthread_rwlock_clockwrlock(r, CLOCK_PROCESS_CPUTIME_ID, &t));
	R(L("other.tryrdlock.w"), other(o_tryrd, r));
	R(L("other.trywrlock.w"), other(o_trywr, r));
	R(L("other.timedrdlock.w"), other(o_timedrd, r));
	R(L("other.timedwrlock.w"), other(o_timedwr, r));
	R(L("other.clockrdlock.past.w"), other(o_clockrd_past, r));
	R(L("unlock.w"), pthread_rwlock_unlock(r));
	R(L("timedrdlock.free.bad_nsec"), pthread_rwlock_timedrdlock(r, &bad_ns));
	R(L("timedwrlock.free.bad_nsec"), pthread_rwlock_timedwrlock(r, &bad_ns));
	R(L("timedrdlock.free.past"), pthread_rwlock_timedrdlock(r, &past));
	R(L("unlock.4"), pthread_rwlock_unlock(r));
	R(L("timedwrlock.free.past"), pthread_rwlock_timedwrlock(r, &past));
	R(L("unlock.5"), pthread_rwlock_unlock(r));
	t = in_ms(CLOCK_MONOTONIC, 20);
	R(L("clockwrlock.free"), pthread_rwlock_clockwrlock(r, CLOCK_MONOTONIC, &t));
	R(L("unlock.6"), pthread_rwlock_unlock(r));
	R(L("clockrdlock.free"), pthread_rwlock_clockrdlock(r, CLOCK_MONOTONIC, &t));
	R(L("unlock.7"), pthread_rwlock_unlock(r));
	R(L("__pthread_rwlock_rdlock"), __pthread_rwlock_rdlock(r));
	R(L("__pthread_rwlock_unlock"), __pthread_rwlock_unlock(r));
	R(L("wrlock@" GLIBC_BASE), old_rwlock_wrlock(r));
	R(L("other.tryrdlock.old_w"), other(o_tryrd, r));
	R(L("unlock@" GLIBC_BASE), old_rwlock_unlock(r));
	R(L("destroy"), pthread_rwlock_destroy(r));
#undef L
}

static void rwlock_tests(void)
{
	static pthread_rwlock_t s0 = PTHREAD_RWLOCK_INITIALIZER;
	static pthread_rwlock_t s1 = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	pthread_rwlock_t r;
	pthread_rwlockattr_t a;

	rwlock_suite("static_default", &s0);
	rwlock_suite("static_writer_nonrecursive", &s1);
	memset(&r, 0, sizeof r);
	rwlock_suite("memset_zero", &r);
	R("rwlock.attr_null.init", pthread_rwlock_init(&r, NULL));
	rwlock_suite("attr_null", &r);
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	R("rwlock.attr_wpref.init", pthread_rwlock_init(&r, &a));
	rwlock_suite("attr_wpref", &r);
	pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	R("rwlock.attr_pshared.init", pthread_rwlock_init(&r, &a));
	rwlock_suite("attr_pshared", &r);
	pthread_rwlockattr_destroy(&a);
}

/* ---- spinlocks --------------------------------------------------------- */

static int o_spintry(void *s) { return pthread_spin_trylock(s); }

static void spin_tests(void)
{
	pthread_spinlock_t s;

	for (int ps = 0; ps < 2; ps++) {
		const char *n = ps ? "spin.pshared" : "spin.private";
		char l[64];
#define L(x) (snprintf(l, sizeof l, "%s.%s", n, x), l)
		R(L("init"), pthread_spin_init(&s, ps ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE));
		R(L("lock"), pthread_spin_lock(&s));
		R(L("trylock.held"), pthread_spin_trylock(&s));
		R(L("other.trylock.held"), other(o_spintry, (void *)&s));
		R(L("trylock@" GLIBC_BASE ".held"), old_spin_trylock(&s));
		R(L("unlock"), pthread_spin_unlock(&s));
		R(L("trylock.free"), pthread_spin_trylock(&s));
		R(L("unlock.2"), pthread_spin_unlock(&s));
		R(L("destroy"), pthread_spin_destroy(&s));
#undef L
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "which") == 0) {
		const char *(*alg)(const char *) = (const char *(*)(const char *))
			dlsym(RTLD_DEFAULT, "qlock_pthread_algorithm");
		if (!alg) {
			printf("glibc\n");
			return 0;
		}
		printf("qlock mutex=%s rwlock=%s spin=%s cond=%s\n", alg("mutex"),
		       alg("rwlock"), alg("spin"), alg("cond"));
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "handoff") == 0) {
		/* The hand-off tunable the locks run with (handoff_default.sh). */
		long (*get)(int) = (long (*)(int))dlsym(RTLD_DEFAULT,
							 "qlock_tune_get");
		if (!get) {
			printf("glibc\n");
			return 0;
		}
		printf("%ld\n", get(1 /* QLOCK_TUNE_HANDOFF_NS */));
		return 0;
	}
	mutex_tests();
	cond_tests();
	cancel_one("wait", 0, 0);
	cancel_one("timedwait", 1, 0);
	cancel_one("wait_pending", 0, 1);
	rwlock_tests();
	spin_tests();
	printf("failures %d\n", failures);
	return 0;
}
