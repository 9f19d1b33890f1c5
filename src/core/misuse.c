/* SPDX-License-Identifier: MIT */
#include "misuse.h"

#ifndef QLOCK_MODEL

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic.h"
#include "qlock/qlock.h"

/* write(2), not stdio: the caller may hold locks stdio uses, or be a
 * signal handler. */
static void put(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));

	(void)r;
}

static void put_address(const void *p)
{
	char buf[2 + 2 * sizeof(uintptr_t) + 1];
	uintptr_t v = (uintptr_t)p;
	int i = (int)sizeof(buf) - 1;

	buf[i] = '\0';
	do {
		buf[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v && i > 2);
	buf[--i] = 'x';
	buf[--i] = '0';
	put(&buf[i]);
}

static void report_and_abort(const char *fn, const char *what,
			     const void *lock)
{
	put("qlock: ");
	put(fn);
	put(": ");
	put(what);
	put(" (lock ");
	put_address(lock);
	put(")\n");
	abort();
}

/* NULL stands for the default, so a zero-initialised word is correct
 * before any constructor has run. */
static qlock_misuse_fn handler;

QLOCK_API qlock_misuse_fn qlock_set_misuse_handler(qlock_misuse_fn fn)
{
	/* Acquire/release: a handler's own data, set up before it is
	 * installed, is visible to the thread that calls it. */
	qlock_misuse_fn old = qa_xchg(&handler, fn);

	return old ? old : report_and_abort;
}

void qc_misuse(const char *fn, const char *what, const void *lock)
{
	qlock_misuse_fn h = qa_read_acquire(&handler);

	(h ? h : report_and_abort)(fn, what, lock);
}

#else /* QLOCK_MODEL: no stderr; a checker reports the failed assertion */

#include <assert.h>
#include <stdlib.h>

#include "model.h"

void qc_misuse(const char *fn, const char *what, const void *lock)
{
	(void)fn;
	(void)what;
	(void)lock;
	assert(!"qlock misuse (see qc_misuse's caller in the trace)");
	abort();
}

#endif /* QLOCK_MODEL */
