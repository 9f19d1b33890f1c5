/* SPDX-License-Identifier: MIT */
#include "misuse.h"

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
