/* SPDX-License-Identifier: MIT */
/*
 * Lock lifetime: the thread that takes a lock next may unlock it, destroy
 * it and free its memory as soon as it holds it (the class of glibc bug
 * 13690), so an unlock must not touch the lock after the atomic operation
 * that let the next owner in (a FUTEX_WAKE on its address is allowed: it
 * reads no memory).
 *
 * Each lock lives alone in its own mmap'd page.  The main thread holds it,
 * a second thread queues for it and spins (never sleeps: the tunables
 * below), then the main thread unlocks.  The library is built with
 * QLOCK_TEST_HOOKS: right after the releasing operation it calls our hook,
 * which waits until the next owner has taken the lock, unlocked it and
 * unmapped the page.  Any later load or store by the unlocker faults.
 * Waiting there never hangs: the waiters spin (asking for the hand-off
 * where the lock has one), the hook makes the FUTEX_WAKE on the lock's
 * address the unlocker may owe, and for the rwsem a reader, let in by the
 * hook, steals the lock and its unlock wakes the queued writer.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/testhook.h"
#include "qlock/qlock.h"
#include "qlock/qrwlock.h"
#include "qlock/qspinlock.h"
#include "qlock/rwsem.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

#define ROUNDS 100

struct scenario {
	const char *name;
	long owner_spin_ns;                /* QLOCK_TUNE_OWNER_SPIN_NS */
	void (*hold)(void *lock);          /* main thread, before */
	bool (*queued)(void *lock);        /* the next owner waits as wanted */
	void (*release)(void *lock);       /* main thread: the unlock tested */
	void (*next_owner)(void *lock);    /* lock and unlock */
	void (*stealer)(void *lock);       /* optional: runs once released */
};

/* ---- the scenarios ------------------------------------------------------ */

static void spin_lock(void *l) { qlock_spin_lock(l); }
static void spin_unlock(void *l) { qlock_spin_unlock(l); }
static void spin_next(void *l) { qlock_spin_lock(l); qlock_spin_unlock(l); }
static bool spin_queued(void *l)
{
	/* pending or queued (bits above the locked byte) */
	return qa_read(&((qlock_spinlock_t *)l)->val) & ~0xffu;
}

static void qrw_wlock(void *l) { qlock_write_lock(l); }
static void qrw_wunlock(void *l) { qlock_write_unlock(l); }
static void qrw_rlock(void *l) { qlock_read_lock(l); }
static void qrw_runlock(void *l) { qlock_read_unlock(l); }
static void qrw_next(void *l) { qlock_write_lock(l); qlock_write_unlock(l); }
static bool qrw_queued(void *l)
{
	return qa_read(&((qlock_rwlock_t *)l)->cnts) & 0x100u; /* WAITING */
}

static void rwsem_wlock(void *l) { qlock_down_write(l); }
static void rwsem_wunlock(void *l) { qlock_up_write(l); }
static void rwsem_rlock(void *l) { qlock_down_read(l); }
static void rwsem_runlock(void *l) { qlock_up_read(l); }
static void rwsem_next(void *l) { qlock_down_write(l); qlock_up_write(l); }
static void rwsem_steal(void *l) { qlock_down_read(l); qlock_up_read(l); }
static bool rwsem_queued(void *l)
{
	/* WAITERS: the writer queued (wait_list is wait_lock's to read) */
	return qa_read(&((qlock_rwsem_t *)l)->count) & 2u;
}

static void tpm_lock(void *l) { qlock_tp_mutex_lock(l); }
static void tpm_unlock(void *l) { qlock_tp_mutex_unlock(l); }
static void tpm_next(void *l) { qlock_tp_mutex_lock(l); qlock_tp_mutex_unlock(l); }
static bool tpm_queued(void *l)
{
	qlock_tp_mutex_t *m = l;

	/* the top waiter asked for the hand-off and set WAITERS */
	return qa_read(&m->handoff) && (qa_read(&m->val) & QLOCK_TP_WAITERS);
}

static void tprw_wlock(void *l) { qlock_tp_rwlock_wrlock(l); }
static void tprw_wunlock(void *l) { qlock_tp_rwlock_wrunlock(l); }
static void tprw_rlock(void *l) { qlock_tp_rwlock_rdlock(l); }
static void tprw_runlock(void *l) { qlock_tp_rwlock_rdunlock(l); }
static void tprw_next(void *l)
{
	qlock_tp_rwlock_wrlock(l);
	qlock_tp_rwlock_wrunlock(l);
}
static bool tprw_queued(void *l)
{
	qlock_tp_rwlock_t *rw = l;

	return qa_read(&rw->handoff) && (qa_read(&rw->val) & QLOCK_TP_RW_WAITERS);
}

#define HUGE_NS (3600L * 1000000000L)

static const struct scenario scenarios[] = {
	{ "qspinlock", HUGE_NS, spin_lock, spin_queued, spin_unlock, spin_next, NULL },
	{ "qrwlock write", HUGE_NS, qrw_wlock, qrw_queued, qrw_wunlock, qrw_next, NULL },
	{ "qrwlock read", HUGE_NS, qrw_rlock, qrw_queued, qrw_runlock, qrw_next, NULL },
	/* no optimistic spinning: the writer queues, then spins on its node */
	{ "rwsem write", 0, rwsem_wlock, rwsem_queued, rwsem_wunlock, rwsem_next, rwsem_steal },
	{ "rwsem read", 0, rwsem_rlock, rwsem_queued, rwsem_runlock, rwsem_next, rwsem_steal },
	{ "tp_mutex", HUGE_NS, tpm_lock, tpm_queued, tpm_unlock, tpm_next, NULL },
	{ "tp_rwlock write", HUGE_NS, tprw_wlock, tprw_queued, tprw_wunlock, tprw_next, NULL },
	{ "tp_rwlock read", HUGE_NS, tprw_rlock, tprw_queued, tprw_runlock, tprw_next, NULL },
};

/* ---- one round ------------------------------------------------------------ */

static const struct scenario *cur;
static void *armed;           /* the lock whose release the hook stalls */
static pthread_t unlocker;
static uint32_t users;        /* threads that still use the page */
static sem_t go_steal, unmapped;
static size_t page;

static void done_with_page(void *lock)
{
	if (qa_fetch_sub(&users, 1u) == 1) {
		assert(munmap(lock, page) == 0);
		sem_post(&unmapped);
	}
}

static void released_hook(enum qc_test_point p, const void *lock)
{
	if (p != QC_TP_RELEASED || lock != qa_read(&armed) ||
	    !pthread_equal(pthread_self(), unlocker))
		return;
	qa_write(&armed, NULL);
	if (cur->stealer)
		sem_post(&go_steal);
	/* The FUTEX_WAKE the unlocker may owe a waiter that went to sleep
	 * after all (a TP writer sleeps on a reader-owned lock after 50 us,
	 * whatever the tunables): a wake reads no memory, so it is allowed
	 * on a lock that may be gone, and it cannot hide a later access. */
	while (sem_trywait(&unmapped)) {
		syscall(SYS_futex, lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		sched_yield();
	}
}

static void *next_owner_thread(void *lock)
{
	cur->next_owner(lock);
	done_with_page(lock);
	return NULL;
}

static void *stealer_thread(void *lock)
{
	while (sem_wait(&go_steal))
		;
	cur->stealer(lock);
	done_with_page(lock);
	return NULL;
}

static void round_of(const struct scenario *s)
{
	void *lock = mmap(NULL, page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t next, steal;

	assert(lock != MAP_FAILED);
	cur = s;
	users = s->stealer ? 2 : 1;
	s->hold(lock);
	assert(pthread_create(&next, NULL, next_owner_thread, lock) == 0);
	if (s->stealer)
		assert(pthread_create(&steal, NULL, stealer_thread, lock) == 0);
	while (!s->queued(lock))
		sched_yield();
	qa_write(&armed, lock);
	s->release(lock);
	/* Here the page is gone. */
	assert(qa_read(&armed) == NULL);
	assert(pthread_join(next, NULL) == 0);
	if (s->stealer)
		assert(pthread_join(steal, NULL) == 0);
}

/* With arguments: only the scenarios named (e.g. "tp_mutex"). */
static bool wanted(const char *name, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return argc < 2;
}

int main(int argc, char **argv)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	unlocker = pthread_self();
	sem_init(&go_steal, 0, 0);
	sem_init(&unmapped, 0, 0);
	qa_write_release(&qc_test_hook, released_hook);
	/* Waiters spin, never sleep; a TP top waiter asks for the hand-off
	 * at once. */
	assert(qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 2000000000L) == 0);
	assert(qlock_tune_set(QLOCK_TUNE_HANDOFF_NS, 0) == 0);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *s = &scenarios[i];

		if (!wanted(s->name, argc, argv))
			continue;
		assert(qlock_tune_set(QLOCK_TUNE_OWNER_SPIN_NS,
				      s->owner_spin_ns) == 0);
		for (int r = 0; r < ROUNDS; r++)
			round_of(s);
		printf("lifetime: %-16s %d rounds, the unlocker never touched the unmapped lock\n",
		       s->name, ROUNDS);
		fflush(stdout);
	}
	return 0;
}
