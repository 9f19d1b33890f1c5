/* SPDX-License-Identifier: MIT */
/*
 * The misuse contract (qlock/qlock.h): a handler installed with
 * qlock_set_misuse_handler() hears of each detected misuse with the
 * function, a reason and the lock's address, and the lock is left as it
 * was (a TP mutex held by another thread is released, as glibc's NORMAL
 * mutex does; calls with an error code return EPERM); NULL restores the
 * default, which prints one line and aborts (run in a forked child).
 * Every lock: unlock of a free lock, in the wrong mode, by a non-owner
 * where the word records the owner; condvar waits without the mutex.
 * NULL deadlines mean "no deadline" everywhere.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qlock/qlock.h"
#include "qlock/qrwlock.h"
#include "qlock/qspinlock.h"
#include "qlock/rwsem.h"
#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

static int reports;
static const char *last_fn;
static const void *last_lock;

static void record(const char *fn, const char *what, const void *lock)
{
	assert(what && *what);
	reports++;
	last_fn = fn;
	last_lock = lock;
}

static void expect_report(const char *fn, const void *lock, int before)
{
	assert(reports == before + 1);
	assert(strcmp(last_fn, fn) == 0);
	assert(last_lock == lock);
}

static void test_handler_install(void)
{
	/* main() installed ours; NULL brings back the default. */
	assert(qlock_set_misuse_handler(NULL) == record);
	qlock_misuse_fn def = qlock_set_misuse_handler(record);

	assert(def && def != record);
	assert(qlock_set_misuse_handler(record) == record);
}

static void test_spinlock(void)
{
	qlock_spinlock_t l = QLOCK_SPINLOCK_INIT;
	int n = reports;

	qlock_spin_unlock(&l);
	expect_report("qlock_spin_unlock", &l, n);
	assert(!qlock_spin_is_locked(&l));
	qlock_spin_lock(&l);
	qlock_spin_unlock(&l);
	assert(reports == n + 1 && !qlock_spin_is_locked(&l));
}

static void test_rwsem(void)
{
	qlock_rwsem_t s = QLOCK_RWSEM_INIT;
	int n = reports;

	qlock_up_read(&s);
	expect_report("qlock_up_read", &s, n);
	qlock_up_write(&s);
	expect_report("qlock_up_write", &s, n + 1);
	qlock_downgrade_write(&s);
	expect_report("qlock_downgrade_write", &s, n + 2);
	assert(!qlock_rwsem_is_locked(&s));

	qlock_down_write(&s);
	qlock_up_read(&s);                 /* read-unlock of a write lock */
	expect_report("qlock_up_read", &s, n + 3);
	assert(qlock_rwsem_is_locked(&s) && !qlock_down_read_trylock(&s));
	qlock_up_write(&s);

	qlock_down_read(&s);
	qlock_up_write(&s);                /* write-unlock of a read lock */
	expect_report("qlock_up_write", &s, n + 4);
	assert(!qlock_down_write_trylock(&s));
	qlock_up_read(&s);
	assert(qlock_down_write_trylock(&s));
	qlock_up_write(&s);
	assert(reports == n + 5);
}

static void test_qrwlock(void)
{
	qlock_rwlock_t l = QLOCK_RWLOCK_INIT;
	int n = reports;

	qlock_read_unlock(&l);                  /* free */
	expect_report("qlock_read_unlock", &l, n);
	qlock_write_unlock(&l);                 /* free */
	expect_report("qlock_write_unlock", &l, n + 1);
	assert(l.cnts == 0);
	/* still a working lock: the count did not wrap */
	assert(qlock_write_trylock(&l));

	qlock_read_unlock(&l);                  /* write-locked */
	expect_report("qlock_read_unlock", &l, n + 2);
	assert(!qlock_read_trylock(&l));
	qlock_write_unlock(&l);
	assert(l.cnts == 0);

	qlock_read_lock(&l);
	qlock_write_unlock(&l);                 /* read-locked */
	expect_report("qlock_write_unlock", &l, n + 3);
	assert(!qlock_write_trylock(&l));
	qlock_read_unlock(&l);
	assert(l.cnts == 0 && reports == n + 4);
	qlock_write_lock(&l);
	qlock_write_unlock(&l);
}

/* A second thread that takes a TP lock and keeps it until told. */
struct holder {
	pthread_t t;
	sem_t taken, release;
	void (*lock)(void *);
	void (*unlock)(void *); /* NULL: leave it (main released it) */
	void *obj;
};

static void *holder_main(void *arg)
{
	struct holder *h = arg;

	h->lock(h->obj);
	sem_post(&h->taken);
	while (sem_wait(&h->release))
		;
	if (h->unlock)
		h->unlock(h->obj);
	return NULL;
}

static void hold_start(struct holder *h, void (*lock)(void *),
		       void (*unlock)(void *), void *obj)
{
	h->lock = lock;
	h->unlock = unlock;
	h->obj = obj;
	sem_init(&h->taken, 0, 0);
	sem_init(&h->release, 0, 0);
	assert(pthread_create(&h->t, NULL, holder_main, h) == 0);
	while (sem_wait(&h->taken))
		;
}

static void hold_end(struct holder *h)
{
	sem_post(&h->release);
	assert(pthread_join(h->t, NULL) == 0);
}

static void tpm_lock(void *m) { qlock_tp_mutex_lock(m); }
static void tpm_unlock(void *m) { qlock_tp_mutex_unlock(m); }
static void tprw_wrlock(void *rw) { qlock_tp_rwlock_wrlock(rw); }
static void tprw_wrunlock(void *rw) { qlock_tp_rwlock_wrunlock(rw); }

static void test_tp_mutex(void)
{
	qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
	struct holder h;
	int n = reports;

	qlock_tp_mutex_unlock(&m);              /* free */
	expect_report("qlock_tp_mutex_unlock", &m, n);
	assert(m.val == 0);

	/* Held by another thread: reported, then released (glibc NORMAL). */
	hold_start(&h, tpm_lock, NULL, &m);
	qlock_tp_mutex_unlock(&m);
	expect_report("qlock_tp_mutex_unlock", &m, n + 1);
	assert(qlock_tp_mutex_owner(&m) == 0);
	assert(qlock_tp_mutex_trylock(&m));
	qlock_tp_mutex_unlock(&m);
	hold_end(&h);
	assert(reports == n + 2 && m.val == 0);
}

static void test_tp_rwlock(void)
{
	qlock_tp_rwlock_t rw = QLOCK_TP_RWLOCK_INIT;
	struct holder h;
	int n = reports;

	qlock_tp_rwlock_rdunlock(&rw);          /* free */
	expect_report("qlock_tp_rwlock_rdunlock", &rw, n);
	assert(rw.val == 0);
	qlock_tp_rwlock_wrunlock(&rw);          /* free */
	expect_report("qlock_tp_rwlock_wrunlock", &rw, n + 1);
	assert(rw.val == 0);

	qlock_tp_rwlock_wrlock(&rw);
	qlock_tp_rwlock_rdunlock(&rw);          /* write-locked */
	expect_report("qlock_tp_rwlock_rdunlock", &rw, n + 2);
	assert(qlock_tp_rwlock_writer(&rw) == qlock_tp_self_tid());
	qlock_tp_rwlock_wrunlock(&rw);
	assert(rw.val == 0);

	qlock_tp_rwlock_rdlock(&rw);
	qlock_tp_rwlock_wrunlock(&rw);          /* read-locked */
	expect_report("qlock_tp_rwlock_wrunlock", &rw, n + 3);
	assert(qlock_tp_rwlock_readers(&rw) == 1);
	qlock_tp_rwlock_rdunlock(&rw);
	assert(rw.val == 0);

	/* Write-locked by another thread: reported, left to its owner. */
	hold_start(&h, tprw_wrlock, tprw_wrunlock, &rw);
	qlock_tp_rwlock_wrunlock(&rw);
	expect_report("qlock_tp_rwlock_wrunlock", &rw, n + 4);
	assert(qlock_tp_rwlock_writer(&rw) != 0);
	hold_end(&h);
	assert(rw.val == 0 && reports == n + 5);
}

static void test_tp_cond(void)
{
	qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
	qlock_tp_cond_t c = QLOCK_TP_COND_INIT;
	struct timespec past = { 0, 0 };
	struct holder h;
	int n = reports;

	/* Not held at all: EPERM, and the mutex is not taken. */
	assert(qlock_tp_cond_timedwait(&c, &m, &past, CLOCK_MONOTONIC) == EPERM);
	expect_report("qlock_tp_cond_timedwait", &m, n);
	assert(m.val == 0);
	qlock_tp_cond_wait(&c, &m);
	expect_report("qlock_tp_cond_wait", &m, n + 1);
	assert(m.val == 0);

	/* Held by another thread: EPERM, its owner keeps it. */
	hold_start(&h, tpm_lock, tpm_unlock, &m);
	assert(qlock_tp_cond_timedwait(&c, &m, &past, CLOCK_MONOTONIC) == EPERM);
	expect_report("qlock_tp_cond_timedwait", &m, n + 2);
	assert(qlock_tp_mutex_owner(&m) != qlock_tp_self_tid() &&
	       qlock_tp_mutex_owner(&m) != 0);
	hold_end(&h);
	assert(m.val == 0 && c.waiters == 0 && reports == n + 3);
	qlock_tp_cond_destroy(&c);

	/* Destroyed: EINVAL, the mutex stays ours; init makes it usable. */
	qlock_tp_mutex_lock(&m);
	assert(qlock_tp_cond_timedwait(&c, &m, &past, CLOCK_MONOTONIC) == EINVAL);
	expect_report("qlock_tp_cond_timedwait", &c, n + 3);
	assert(qlock_tp_mutex_owner(&m) == qlock_tp_self_tid());
	qlock_tp_cond_init(&c);
	assert(qlock_tp_cond_timedwait(&c, &m, &past, CLOCK_MONOTONIC) == ETIMEDOUT);
	qlock_tp_mutex_unlock(&m);
	assert(reports == n + 4);
}

/* NULL deadline: no deadline (the timed calls wait like the plain ones). */
static void test_null_deadlines(void)
{
	qlock_rwsem_t s = QLOCK_RWSEM_INIT;
	qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
	qlock_tp_rwlock_t rw = QLOCK_TP_RWLOCK_INIT;
	int n = reports;

	assert(qlock_down_write_timed(&s, NULL, CLOCK_MONOTONIC) == 0);
	qlock_up_write(&s);
	assert(qlock_down_read_timed(&s, NULL, CLOCK_MONOTONIC) == 0);
	qlock_up_read(&s);
	assert(qlock_tp_mutex_timedlock(&m, NULL, CLOCK_MONOTONIC) == 0);
	qlock_tp_mutex_unlock(&m);
	assert(qlock_tp_rwlock_timedwrlock(&rw, NULL, CLOCK_MONOTONIC) == 0);
	qlock_tp_rwlock_wrunlock(&rw);
	assert(qlock_tp_rwlock_timedrdlock(&rw, NULL, CLOCK_MONOTONIC) == 0);
	qlock_tp_rwlock_rdunlock(&rw);
	assert(reports == n);
}

/*
 * Lines after qlock's report that an emulator adds to the child's stderr
 * when the abort kills it (qemu-user: "qemu: uncaught target signal 6
 * (Aborted) - core dumped"); anything else there is a second line of
 * ours.
 */
static bool only_emulator_lines(const char *s)
{
	static const char *const emulators[] = { "qemu: " };

	while (*s) {
		bool known = false;

		for (size_t i = 0; i < sizeof(emulators) / sizeof(emulators[0]);
		     i++)
			known |= strncmp(s, emulators[i],
					 strlen(emulators[i])) == 0;
		if (!known)
			return false;
		s = strchr(s, '\n');
		if (!s)
			return false; /* an unfinished line is not qemu's */
		s++;
	}
	return true;
}

/* The default handler: one line naming function and lock, then SIGABRT. */
static void test_default_aborts(void)
{
	int fds[2], status;
	char buf[512], want[64], *eol;
	qlock_spinlock_t l = QLOCK_SPINLOCK_INIT;
	ssize_t len, got = 0;
	pid_t pid;

	assert(pipe(fds) == 0);
	pid = fork();
	assert(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		signal(SIGABRT, SIG_DFL);
		qlock_set_misuse_handler(NULL);
		qlock_spin_unlock(&l);
		_exit(0);               /* not reached */
	}
	close(fds[1]);
	while ((len = read(fds[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += len;
	buf[got] = '\0';
	close(fds[0]);
	assert(waitpid(pid, &status, 0) == pid);
	assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	snprintf(want, sizeof(want), "(lock %p)\n", (void *)&l);
	assert(strncmp(buf, "qlock: qlock_spin_unlock: ", 26) == 0);
	/* Our report is the first line, whole: it ends with the lock. */
	eol = strchr(buf, '\n');
	assert(eol && eol + 1 - buf >= (ptrdiff_t)strlen(want) &&
	       memcmp(eol + 1 - strlen(want), want, strlen(want)) == 0);
	assert(only_emulator_lines(eol + 1));
	/* The filter passes qemu's line, not a second line of a report. */
	assert(only_emulator_lines("qemu: uncaught target signal 6 "
				   "(Aborted) - core dumped\n"));
	assert(!only_emulator_lines("more of the report\n") &&
	       !only_emulator_lines("qemu: unfinished"));
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "install", test_handler_install }, { "spinlock", test_spinlock },
	{ "rwsem", test_rwsem }, { "qrwlock", test_qrwlock },
	{ "tp_mutex", test_tp_mutex }, { "tp_rwlock", test_tp_rwlock },
	{ "tp_cond", test_tp_cond }, { "null_deadlines", test_null_deadlines },
	{ "default_aborts", test_default_aborts },
};

/* With arguments: only the cases named (the handler is always installed). */
int main(int argc, char **argv)
{
	qlock_set_misuse_handler(record);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool run = argc < 2;

		for (int a = 1; a < argc; a++)
			run |= strcmp(argv[a], cases[i].name) == 0;
		if (!run)
			continue;
		cases[i].fn();
		printf("misuse: %s ok\n", cases[i].name);
		fflush(stdout);
	}
	printf("misuse: %d reports recorded\n", reports);
	return 0;
}
