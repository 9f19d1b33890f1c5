/* SPDX-License-Identifier: MIT */
/*
 * Readers and writers on a qlock_rwlock_t (the kernel's queued rwlock):
 * writers move a pair of counters together, readers check that they never
 * see them apart.  Built by this directory's CMakeLists.txt (see there).
 * Exits 1 if a reader saw a torn pair or a write went missing.
 */
#include <pthread.h>
#include <stdio.h>

#include <qlock/qlock.h>
#include <qlock/qrwlock.h>

static qlock_rwlock_t rw = QLOCK_RWLOCK_INIT;
static unsigned long a, b;              /* a == b whenever rw is free */

enum { READERS = 3, WRITERS = 1, ROUNDS = 50000 };

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		qlock_write_lock(&rw);
		a++;
		b++;
		qlock_write_unlock(&rw);
	}
	return NULL;
}

static void *reader(void *arg)
{
	unsigned long *torn = arg;

	for (int i = 0; i < ROUNDS; i++) {
		qlock_read_lock(&rw);
		if (a != b)
			++*torn;
		qlock_read_unlock(&rw);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[READERS + WRITERS];
	unsigned long torn[READERS] = { 0 }, torn_sum = 0;

	for (int i = 0; i < READERS + WRITERS; i++)
		if (pthread_create(&t[i], NULL, i < READERS ? reader : writer,
				   i < READERS ? &torn[i] : NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < READERS + WRITERS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < READERS; i++)
		torn_sum += torn[i];
	printf("qlock %s: %d readers, %d writer on a qlock_rwlock_t: "
	       "%lu writes, %lu torn reads\n", qlock_version(), READERS,
	       WRITERS, a, torn_sum);
	return a == (unsigned long)WRITERS * ROUNDS && b == a && !torn_sum ? 0 : 1;
}
