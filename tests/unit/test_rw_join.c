/* SPDX-License-Identifier: MIT */
/*
 * Joining readers past a waiting writer, in every rwlock family
 * (qlock_read_trylock_join, qlock_down_read_trylock_join,
 * qlock_tp_rwlock_tryrdlock_join): it fails on a free lock and on a
 * write-held one, and succeeds while readers hold the lock, also while a
 * writer waits (which then waits for the joined reader too).  And the
 * qrwlock's bounded writer (qlock_write_lock_bounded): a reader queued
 * behind it while another reader holds the lock gets in without that
 * reader leaving, and the writer gets the lock once both have left.  A
 * hang is turned into a failure by alarm().
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "qlock/qrwlock.h"
#include "qlock/rwsem.h"
#include "qlock/tp_rwlock.h"

static qlock_rwlock_t qrw = QLOCK_RWLOCK_INIT;
static qlock_rwsem_t sem = QLOCK_RWSEM_INIT;
static qlock_tp_rwlock_t tp = QLOCK_TP_RWLOCK_INIT;
static volatile int wrote, got;

static void *qrw_writer(void *a) { (void)a; qlock_write_lock(&qrw); wrote = 1; qlock_write_unlock(&qrw); return NULL; }
static void *qrw_bounded_writer(void *a) { (void)a; qlock_write_lock_bounded(&qrw, 1000000); wrote = 1; qlock_write_unlock(&qrw); return NULL; }
static void *qrw_reader(void *a) { (void)a; qlock_read_lock(&qrw); got = 1; qlock_read_unlock(&qrw); return NULL; }
static void *sem_writer(void *a) { (void)a; qlock_down_write(&sem); wrote = 1; qlock_up_write(&sem); return NULL; }
static void *tp_writer(void *a) { (void)a; qlock_tp_rwlock_wrlock(&tp); wrote = 1; qlock_tp_rwlock_wrunlock(&tp); return NULL; }

/* Start a writer and wait until it stops new fair readers. */
static pthread_t start_writer(void *(*fn)(void *), bool (*tryrd)(void *),
			      void (*rdunlock)(void *))
{
	pthread_t t;

	wrote = 0;
	pthread_create(&t, NULL, fn, NULL);
	while (tryrd(NULL)) {
		rdunlock(NULL);
		usleep(1000);
	}
	return t;
}

static bool qrw_try(void *a) { (void)a; return qlock_read_trylock(&qrw); }
static void qrw_un(void *a) { (void)a; qlock_read_unlock(&qrw); }
static bool sem_try(void *a) { (void)a; return qlock_down_read_trylock(&sem); }
static void sem_un(void *a) { (void)a; qlock_up_read(&sem); }
static bool tp_try(void *a) { (void)a; return qlock_tp_rwlock_tryrdlock(&tp); }
static void tp_un(void *a) { (void)a; qlock_tp_rwlock_rdunlock(&tp); }

static void qrw_cases(void)
{
	pthread_t w, r;

	assert(!qlock_read_trylock_join(&qrw)); /* free */
	qlock_write_lock(&qrw);
	assert(!qlock_read_trylock_join(&qrw)); /* write-held */
	qlock_write_unlock(&qrw);
	qlock_read_lock(&qrw);
	assert(qlock_read_trylock_join(&qrw)); /* read-held */
	qlock_read_unlock(&qrw);
	w = start_writer(qrw_writer, qrw_try, qrw_un);
	assert(qlock_read_trylock_join(&qrw)); /* past the waiting writer */
	qlock_read_unlock(&qrw);
	assert(!wrote);
	qlock_read_unlock(&qrw);
	pthread_join(w, NULL);
	assert(wrote);

	/* A reader queued behind a bounded writer gets in while we hold. */
	qlock_read_lock(&qrw);
	w = start_writer(qrw_bounded_writer, qrw_try, qrw_un);
	got = 0;
	pthread_create(&r, NULL, qrw_reader, NULL);
	pthread_join(r, NULL);
	assert(got && !wrote);
	qlock_read_unlock(&qrw);
	pthread_join(w, NULL);
	assert(wrote);
}

static void sem_cases(void)
{
	pthread_t w;

	assert(!qlock_down_read_trylock_join(&sem));
	qlock_down_write(&sem);
	assert(!qlock_down_read_trylock_join(&sem));
	qlock_up_write(&sem);
	qlock_down_read(&sem);
	assert(qlock_down_read_trylock_join(&sem));
	qlock_up_read(&sem);
	w = start_writer(sem_writer, sem_try, sem_un);
	assert(qlock_down_read_trylock_join(&sem));
	qlock_up_read(&sem);
	assert(!wrote);
	qlock_up_read(&sem);
	pthread_join(w, NULL);
	assert(wrote);
}

static void tp_cases(void)
{
	pthread_t w;

	assert(!qlock_tp_rwlock_tryrdlock_join(&tp));
	qlock_tp_rwlock_wrlock(&tp);
	assert(!qlock_tp_rwlock_tryrdlock_join(&tp));
	qlock_tp_rwlock_wrunlock(&tp);
	qlock_tp_rwlock_rdlock(&tp);
	assert(qlock_tp_rwlock_tryrdlock_join(&tp));
	qlock_tp_rwlock_rdunlock(&tp);
	w = start_writer(tp_writer, tp_try, tp_un);
	assert(qlock_tp_rwlock_tryrdlock_join(&tp));
	qlock_tp_rwlock_rdunlock(&tp);
	assert(!wrote);
	qlock_tp_rwlock_rdunlock(&tp);
	pthread_join(w, NULL);
	assert(wrote);
}

int main(void)
{
	alarm(600); /* a hang is a failure */
	qrw_cases();
	sem_cases();
	tp_cases();
	printf("rw join: ok\n");
	return 0;
}
