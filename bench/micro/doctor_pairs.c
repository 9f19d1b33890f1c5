/* SPDX-License-Identifier: MIT */
/*
 * doctor_pairs: uncontended lock and unlock pairs in the shapes the lock
 * doctor's per-acquisition cost depends on, for counting instructions
 * under callgrind (bench/report/doctor_callgrind.py runs it with 0 and N
 * iterations, plain, --lockdep and --profile, and divides the difference
 * by the pairs).  Two threads (so the process is multi-threaded), each
 * running N iterations of one shape:
 *
 *	nested  an outer mutex, then one of 64 inner mutexes (2 pairs)
 *	flat    two of the 64 mutexes, one after the other (2 pairs)
 *	rwread  one of the 64 mutexes, then a read lock of one of 8
 *	        rwlocks (2 pairs)
 *	mutex, read, write  one pair on the thread's own mutex, or read or
 *	        write lock on its own rwlock (1 pair): the drop-in's own
 *	        cost per pair against glibc's (run it without the drop-in)
 *
 *	doctor_pairs nested|flat|rwread|mutex|read|write N
 *
 * The locks are heap objects made by pthread_*_init, as a C++ program's
 * members are; prints the pairs taken.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *m;
static pthread_rwlock_t *rw;
static volatile unsigned data;
static long iters;
static int shape;

static void *run(void *arg)
{
	unsigned me = (unsigned)(unsigned long)arg; /* 0 or 1 */

	for (long i = 0; i < iters; i++) {
		switch (shape) {
		case 0:
			pthread_mutex_lock(&outer);
			pthread_mutex_lock(&m[i & 63]);
			data++;
			pthread_mutex_unlock(&m[i & 63]);
			pthread_mutex_unlock(&outer);
			break;
		case 1:
			pthread_mutex_lock(&m[i & 63]);
			data++;
			pthread_mutex_unlock(&m[i & 63]);
			pthread_mutex_lock(&m[(i + 7) & 63]);
			data++;
			pthread_mutex_unlock(&m[(i + 7) & 63]);
			break;
		case 3:
			pthread_mutex_lock(&m[me * 32]);
			data++;
			pthread_mutex_unlock(&m[me * 32]);
			break;
		case 4:
			pthread_rwlock_rdlock(&rw[me * 4]);
			data++;
			pthread_rwlock_unlock(&rw[me * 4]);
			break;
		case 5:
			pthread_rwlock_wrlock(&rw[me * 4]);
			data++;
			pthread_rwlock_unlock(&rw[me * 4]);
			break;
		default:
			pthread_mutex_lock(&m[i & 63]);
			pthread_rwlock_rdlock(&rw[i & 7]);
			data++;
			pthread_rwlock_unlock(&rw[i & 7]);
			pthread_mutex_unlock(&m[i & 63]);
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const shapes[] = { "nested", "flat", "rwread",
					      "mutex", "read", "write" };
	const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
	pthread_t t[2];

	if (argc != 3) {
		fprintf(stderr, "usage: doctor_pairs nested|flat|rwread|mutex|read|write N\n");
		return 2;
	}
	for (shape = 0; shape < nshapes && strcmp(argv[1], shapes[shape]); shape++)
		;
	if (shape == nshapes) {
		fprintf(stderr, "doctor_pairs: no shape %s\n", argv[1]);
		return 2;
	}
	iters = atol(argv[2]);
	m = malloc(64 * sizeof *m);
	rw = malloc(8 * sizeof *rw);
	if (!m || !rw)
		return 1;
	for (int i = 0; i < 64; i++)
		pthread_mutex_init(&m[i], NULL);
	for (int i = 0; i < 8; i++)
		pthread_rwlock_init(&rw[i], NULL);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(unsigned long)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld pairs\n", 2 * 2 * iters);
	return 0;
}
