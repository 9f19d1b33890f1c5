/* SPDX-License-Identifier: MIT */
/*
 * Unlocking a mutex the caller does not hold, per kind, as glibc answers
 * it: a NORMAL (and DEFAULT, ADAPTIVE) mutex returns 0 whether it was
 * free or held by another thread (which loses it); ERRORCHECK and
 * RECURSIVE return EPERM.  The program must keep running, and the mutex
 * must stay usable.  Output must be identical with and without the
 * drop-in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t held;

static void *hold(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	return NULL; /* exits holding it */
}

static const char *err(int e)
{
	return e == 0 ? "0" : e == EPERM ? "EPERM" : e == EBUSY ? "EBUSY" : strerror(e);
}

static void one(const char *name, int type)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	pthread_t t;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutex_init(&m, &a);
	printf("%-10s unlock free:           %s\n", name, err(pthread_mutex_unlock(&m)));
	printf("%-10s unlock free again:     %s\n", name, err(pthread_mutex_unlock(&m)));
	printf("%-10s trylock after:         %s\n", name, err(pthread_mutex_trylock(&m)));
	printf("%-10s unlock:                %s\n", name, err(pthread_mutex_unlock(&m)));

	pthread_mutex_init(&held, &a);
	pthread_create(&t, NULL, hold, NULL);
	pthread_join(t, NULL);
	int r = pthread_mutex_unlock(&held);
	printf("%-10s unlock other's:        %s\n", name, err(r));
	printf("%-10s trylock after:         %s\n", name, err(pthread_mutex_trylock(&held)));
	pthread_mutexattr_destroy(&a);
}

int main(void)
{
	one("normal", PTHREAD_MUTEX_NORMAL);
	one("default", PTHREAD_MUTEX_DEFAULT);
	one("adaptive", PTHREAD_MUTEX_ADAPTIVE_NP);
	one("errorcheck", PTHREAD_MUTEX_ERRORCHECK);
	one("recursive", PTHREAD_MUTEX_RECURSIVE);
	printf("still running\n");
	return 0;
}
