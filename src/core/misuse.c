/* SPDX-License-Identifier: MIT */
#include "misuse.h"

#ifndef QLOCK_MODEL

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* write(2), not stdio: the caller may hold locks stdio uses. */
static void put(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));

	(void)r;
}

void qc_misuse(const char *fn, const char *what)
{
	put("qlock: ");
	put(fn);
	put(": ");
	put(what);
	put("\n");
	abort();
}

#else /* QLOCK_MODEL: no stderr; a checker reports the failed assertion */

#include <assert.h>
#include <stdlib.h>

#include "model.h"

void qc_misuse(const char *fn, const char *what)
{
	(void)fn;
	(void)what;
	assert(!"qlock misuse (see qc_misuse's caller in the trace)");
	abort();
}

#endif /* QLOCK_MODEL */
