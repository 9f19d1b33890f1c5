/* SPDX-License-Identifier: MIT */
/*
 * qlock from C, built with pkg-config against an installed qlock: four
 * threads add to one counter under a qlock_spinlock_t (the kernel's queued
 * spinlock; a waiter spins a bounded time, then sleeps on a futex).
 *
 * Build and run (qlock installed in PREFIX):
 *
 *   export PKG_CONFIG_PATH="PREFIX/lib/pkgconfig"
 *   cc -o app app.c $(pkg-config --cflags --libs qlock) -Wl,-rpath,"PREFIX/lib"
 *   ./app
 *
 * Prints the library's version and the counter, which must be
 * THREADS x ROUNDS; exits 1 if it is not.
 */
#include <pthread.h>
#include <stdio.h>

#include <qlock/qlock.h>
#include <qlock/qspinlock.h>

static qlock_spinlock_t lock = QLOCK_SPINLOCK_INIT;   /* 4 bytes, all zero */
static unsigned long counter;

static void update(void)
{
	qlock_spin_lock(&lock);
	counter++;                      /* the critical section */
	qlock_spin_unlock(&lock);
}

enum { THREADS = 4, ROUNDS = 100000 };

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		update();
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("qlock %s: %d threads x %d updates under a qlock_spinlock_t: "
	       "counter = %lu\n", qlock_version(), THREADS, ROUNDS, counter);
	return counter == (unsigned long)THREADS * ROUNDS ? 0 : 1;
}
