/* SPDX-License-Identifier: MIT */
/*
 * libqlock-lockdep-hooks.so: what qlock-run --lockdep preloads beside the
 * drop-in, so that a lock's history dies with its memory, and so that a
 * thread's joins are known (qlock_lockdep_joined(): a cycle through the
 * dependencies of threads it has joined is not a deadlock of the run).  free(),
 * realloc() (when the block moves), munmap() and dlclose() (when the
 * module is unloaded) tell the drop-in which memory went
 * (qlock_lockdep_forget(), lockdep.h); a lock that lived there is then
 * forgotten as if destroyed, so whatever is built there next (another
 * heap object, a std::mutex member that is never destroyed, another
 * library at the same address) starts with no dependencies.
 *
 * Each call costs the look-up of the block's size and a filter read per
 * page (lockdep.c); the lock calls are unchanged.  Memory released inside
 * libc (glibc's own munmap of a thread stack, its realloc's internal
 * moves) is not seen.  A program that defines free() itself (a static
 * allocator) keeps its own, unseen.  Under a sanitizer's allocator, the
 * sanitizer's free hook does what free() does here (below).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "lockdep.h"

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_realloc(void *p, size_t n);

/*
 * Under a sanitizer (AddressSanitizer and the others with an allocator of
 * their own): its runtime replaces malloc and free, and asking it a
 * block's size from inside free() (malloc_usable_size) fails while it is
 * still starting (its thread data is not set up yet).  There, free() and
 * realloc() only forward, and the runtime's own free hook, called on
 * every block it releases (a realloc's moved-from block included) while
 * the block is still its, tells lockdep which memory went.  The
 * interface is weak: without a sanitizer runtime in the process these
 * are null, and nothing of it is linked.
 */
extern int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
						     void (*)(const volatile void *))
	__attribute__((weak));
extern size_t __sanitizer_get_allocated_size(const volatile void *) __attribute__((weak));
extern int __sanitizer_get_ownership(const volatile void *) __attribute__((weak));

static bool sanitized(void)
{
	return __sanitizer_install_malloc_and_free_hooks != NULL &&
	       __sanitizer_get_allocated_size != NULL && __sanitizer_get_ownership != NULL;
}

static void san_malloc_hook(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
}

static void san_free_hook(const volatile void *p)
{
	if (p && __sanitizer_get_ownership(p))
		qlock_lockdep_forget((const void *)p, __sanitizer_get_allocated_size(p));
}

static void (*real_free)(void *);
static void *(*real_realloc)(void *, size_t);
static size_t (*real_usable)(void *);
/* free()'s size look-up: real_usable, or NULL under a sanitizer (whose
 * free hook tells lockdep instead): one test on every free(). */
static size_t (*free_usable)(void *);
/* qlock_lockdep_filter(), once lockdep gives it. */
static const uint32_t *filter;
static int (*real_munmap)(void *, size_t);
static int (*real_dlclose)(void *);
static int (*real_join)(pthread_t, void **);
static int (*real_tryjoin)(pthread_t, void **);
static int (*real_timedjoin)(pthread_t, void **, const struct timespec *);
static int (*real_clockjoin)(pthread_t, void **, clockid_t, const struct timespec *);
static __thread int resolving __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
	if (resolving)
		return;
	resolving = 1;
	real_usable = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	real_join = (int (*)(pthread_t, void **))dlsym(RTLD_NEXT, "pthread_join");
	real_tryjoin = (int (*)(pthread_t, void **))dlsym(RTLD_NEXT, "pthread_tryjoin_np");
	real_timedjoin = (int (*)(pthread_t, void **, const struct timespec *))
		dlsym(RTLD_NEXT, "pthread_timedjoin_np");
	real_clockjoin = (int (*)(pthread_t, void **, clockid_t, const struct timespec *))
		dlsym(RTLD_NEXT, "pthread_clockjoin_np");
	free_usable = sanitized() ? NULL : real_usable;
	/* Last, with release: free() reads it first (acquire), the others after. */
	__atomic_store_n(&real_free, (void (*)(void *))dlsym(RTLD_NEXT, "free"), __ATOMIC_RELEASE);
	resolving = 0;
}

__attribute__((constructor)) static void mem_ctor(void)
{
	resolve();
	if (sanitized())
		(void)__sanitizer_install_malloc_and_free_hooks(san_malloc_hook, san_free_hook);
}

EXPORT void free(void *p)
{
	void (*f)(void *) = __atomic_load_n(&real_free, __ATOMIC_ACQUIRE);

	if (!f) {
		resolve();
		f = __atomic_load_n(&real_free, __ATOMIC_ACQUIRE);
		if (!f) /* freed while dlsym runs: kept (whose allocator owns it
			 * is not known yet) */
			return;
	}
	if (p && free_usable) {
		/* Relaxed both ways: the filter is mapped (zero pages) before
		 * lockdep turns on and stays for the process's life, its
		 * slots are read atomically (ld_filter_first()), and a NULL
		 * read here only asks the drop-in again. */
		const uint32_t *flt = qa_read(&filter);

		if (qa_unlikely(!flt)) { /* until lockdep is on */
			flt = qlock_lockdep_filter();
			qa_write(&filter, flt);
		}
		if (flt) {
			size_t n = free_usable(p);

			/* The filter's test here, the rest (a lock may
			 * live in the block) in the drop-in. */
			if (n && ld_filter_first(flt, (uintptr_t)p, (uintptr_t)p + n))
				qlock_lockdep_forget(p, n);
		}
	}
	f(p);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (!real_realloc) {
		resolve();
		if (!real_realloc)
			return __libc_realloc(p, n);
	}
	if (sanitized()) /* the free hook sees a moved block go */
		return real_realloc(p, n);
	size_t old = p && real_usable ? real_usable(p) : 0;
	void *q = real_realloc(p, n);

	if (p && q && q != p)
		qlock_lockdep_forget(p, old); /* moved: the old block is gone */
	return q;
}

EXPORT int munmap(void *p, size_t n)
{
	if (!real_munmap)
		resolve();
	int r = real_munmap(p, n);

	if (r == 0)
		qlock_lockdep_forget(p, n);
	return r;
}

/* The address ranges of a loaded module, found by its load bias and name. */
struct mod {
	uintptr_t bias;
	const char *name;
	bool found;
	unsigned n;
	uintptr_t lo[16], hi[16];
};

static int find_mod(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod *m = arg;

	(void)size;
	if (info->dlpi_addr != m->bias || !info->dlpi_name || strcmp(info->dlpi_name, m->name))
		return 0;
	m->found = true;
	for (int i = 0; i < info->dlpi_phnum && m->n < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		m->lo[m->n] = info->dlpi_addr + ph->p_vaddr;
		m->hi[m->n] = m->lo[m->n] + ph->p_memsz;
		m->n++;
	}
	return 1;
}

EXPORT int dlclose(void *h)
{
	struct link_map *lm = NULL;
	struct mod m = { 0 };
	char name[4096];

	if (!real_dlclose)
		resolve();
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0]) {
		strncpy(name, lm->l_name, sizeof name - 1);
		name[sizeof name - 1] = '\0';
		m.bias = lm->l_addr;
		m.name = name;
		(void)dl_iterate_phdr(find_mod, &m);
	}
	int r = real_dlclose(h);

	if (r == 0 && m.found) {
		struct mod again = { .bias = m.bias, .name = name };

		(void)dl_iterate_phdr(find_mod, &again);
		if (!again.found) /* unloaded: its static locks are gone */
			for (unsigned i = 0; i < m.n; i++)
				qlock_lockdep_forget((const void *)m.lo[i], m.hi[i] - m.lo[i]);
	}
	return r;
}

/* The joins: once one returns 0, the thread has ended and been waited for. */
EXPORT int pthread_join(pthread_t th, void **ret)
{
	if (!real_join)
		resolve();
	int r = real_join(th, ret);

	if (r == 0)
		qlock_lockdep_joined(th);
	return r;
}

EXPORT int pthread_tryjoin_np(pthread_t th, void **ret)
{
	if (!real_tryjoin)
		resolve();
	int r = real_tryjoin(th, ret);

	if (r == 0)
		qlock_lockdep_joined(th);
	return r;
}

EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abs)
{
	if (!real_timedjoin)
		resolve();
	int r = real_timedjoin(th, ret, abs);

	if (r == 0)
		qlock_lockdep_joined(th);
	return r;
}

EXPORT int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clk,
				const struct timespec *abs)
{
	if (!real_clockjoin)
		resolve();
	int r = real_clockjoin(th, ret, clk, abs);

	if (r == 0)
		qlock_lockdep_joined(th);
	return r;
}
