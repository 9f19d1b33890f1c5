/* SPDX-License-Identifier: MIT */
/*
 * A program with its own allocator that takes a pthread mutex on every
 * call (as jemalloc or tcmalloc linked into a program do): every
 * allocation of the C library (stdio buffers, thread stacks' TLS) goes
 * through it, from a constructor before main and from threads, and the
 * drop-in's own set-up must neither allocate nor lock (it would re-enter
 * itself).  Not built with a sanitizer (which owns malloc).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static _Alignas(64) char heap[64 << 20];
static size_t top;
static long calls;

void *malloc(size_t n)
{
	size_t a;

	pthread_mutex_lock(&heap_lock);
	a = top;
	top = (a + 16 + n + 63) & ~(size_t)63;
	calls++;
	if (top > sizeof(heap)) {
		pthread_mutex_unlock(&heap_lock);
		return NULL;
	}
	pthread_mutex_unlock(&heap_lock);
	*(size_t *)(void *)(heap + a) = n;
	return heap + a + 16; /* 16-byte aligned */
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t a, size_t b)
{
	void *p = malloc(a * b);

	if (p)
		memset(p, 0, a * b);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);

	if (p && q) {
		size_t o = *(size_t *)(void *)((char *)p - 16);
		memcpy(q, p, o < n ? o : n);
	}
	return q;
}

void *memalign(size_t al, size_t n)
{
	char *p = malloc(n + al);

	return p ? (void *)(((uintptr_t)p + al - 1) & ~(uintptr_t)(al - 1)) : NULL;
}

int posix_memalign(void **r, size_t al, size_t n)
{
	*r = memalign(al, n);
	return *r ? 0 : 12;
}

void *aligned_alloc(size_t al, size_t n)
{
	return memalign(al, n);
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: watchdog\n";
	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static long ctor_allocs;

static void *ctor_thread(void *arg)
{
	(void)arg;
	free(malloc(32));
	return NULL;
}

/* As a C++ static constructor would: allocate and start a thread. */
__attribute__((constructor)) static void before_main(void)
{
	pthread_t t;
	void *volatile p = malloc(100);

	free(p);
	pthread_create(&t, NULL, ctor_thread, NULL);
	pthread_join(t, NULL);
	pthread_mutex_lock(&heap_lock);
	ctor_allocs = calls;
	pthread_mutex_unlock(&heap_lock);
}

static void *allocate(void *arg)
{
	void *volatile p;

	(void)arg;
	for (int i = 0; i < 2000; i++) {
		p = malloc(64);
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	long before;

	signal(SIGALRM, on_alarm);
	alarm(300);
	pthread_mutex_lock(&heap_lock);
	before = calls;
	pthread_mutex_unlock(&heap_lock);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, allocate, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("allocations before main: %s\n", ctor_allocs >= 2 ? "counted" : "LOST");
	printf("allocations by 4 threads: %s\n",
	       calls - before >= 4 * 2000 ? "all counted" : "LOST");
	return calls - before >= 4 * 2000 && ctor_allocs >= 2 ? 0 : 1;
}
