/* SPDX-License-Identifier: MIT */
/*
 * Unlocking an rwlock the caller does not hold, from a thread that has
 * taken no lock before (so the drop-in has no thread id cached for it):
 * the drop-in must report the misuse and keep the lock usable, as it does
 * for any other thread.  Preloaded only (glibc's answer is undefined
 * behaviour); exit status 77 (skipped) without the drop-in, 1 on failure.
 *
 * Cases: a free rwlock, and one write-held by another thread (which must
 * stay write-held: the misuse must not release it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static int reports;

static void on_misuse(const char *fn, const char *what, const void *lock)
{
	(void)lock;
	__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED);
	printf("qlock misuse: %s: %s\n", fn, what);
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

/* A fresh thread: its first pthread call is the unlock. */
static void *unlock_once(void *arg)
{
	(void)arg;
	pthread_rwlock_unlock(&rw);
	return NULL;
}

static int fresh_unlock(void)
{
	pthread_t t;
	int before = __atomic_load_n(&reports, __ATOMIC_RELAXED);

	if (pthread_create(&t, NULL, unlock_once, NULL) != 0)
		return -1;
	pthread_join(t, NULL);
	return __atomic_load_n(&reports, __ATOMIC_RELAXED) - before;
}

int main(void)
{
	typedef void (*misuse_fn)(const char *, const char *, const void *);
	misuse_fn (*set)(misuse_fn) = (misuse_fn (*)(misuse_fn))
		dlsym(RTLD_DEFAULT, "qlock_set_misuse_handler");
	int fails = 0, n;

	if (!set) {
		printf("not preloaded: skipped\n");
		return 77;
	}
	set(on_misuse);

	n = fresh_unlock();
	printf("free rwlock, unlocked by a fresh thread: %d report(s)\n", n);
	fails += n < 1;
	if (pthread_rwlock_trywrlock(&rw) != 0) {
		printf("FAIL: the rwlock is not usable afterwards\n");
		return 1;
	}
	n = fresh_unlock();
	printf("write-held rwlock, unlocked by a fresh thread: %d report(s)\n", n);
	fails += n < 1;
	if (pthread_rwlock_tryrdlock(&rw) == 0) {
		printf("FAIL: the misuse released another thread's write lock\n");
		fails++;
	}
	pthread_rwlock_unlock(&rw);
	if (pthread_rwlock_trywrlock(&rw) != 0) {
		printf("FAIL: the owner's unlock did not release it\n");
		fails++;
	}
	pthread_rwlock_unlock(&rw);
	printf("%s\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
