/* SPDX-License-Identifier: MIT */
/*
 * The misuse contract (qlock/qlock.h): a handler installed with
 * qlock_set_misuse_handler() hears of each detected misuse with the
 * function, a reason and the lock's address, and the lock is left as it
 * was; NULL restores the default, which prints one line and aborts (run
 * in a forked child).
 */
#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qlock/qlock.h"
#include "qlock/qspinlock.h"
#include "qlock/rwsem.h"

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
	qlock_misuse_fn def = qlock_set_misuse_handler(record);

	assert(def && def != record);
	assert(qlock_set_misuse_handler(NULL) == record);
	assert(qlock_set_misuse_handler(record) == def);
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

/* The default handler: one line naming function and lock, then SIGABRT. */
static void test_default_aborts(void)
{
	int fds[2], status;
	char buf[256], want[64];
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
	assert(strstr(buf, want) && !strchr(buf, '\n')[1]);
}

int main(void)
{
	test_handler_install();
	test_spinlock();
	test_rwsem();
	test_default_aborts();
	printf("misuse: %d reports recorded, default handler aborts\n", reports);
	return 0;
}
