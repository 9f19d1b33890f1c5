/* SPDX-License-Identifier: MIT */
/*
 * Lock wrappers (wrapper.h): the patterns, read once at set-up into a
 * static buffer (no malloc: the set-up may run before the allocator is
 * usable), and the rule on a function's name, size and module.
 */
#define _GNU_SOURCE
#include "wrapper.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define WRAPPER_PATTERNS 64

static char pattern_buf[4096];
static const char *patterns[WRAPPER_PATTERNS];
static unsigned npatterns;
static bool set_up;

static void add_patterns(const char *name)
{
	const char *v = getenv(name);
	size_t used = 0;

	if (!v || !*v)
		return;
	for (unsigned i = 0; i < npatterns; i++)
		used += strlen(patterns[i]) + 1;
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ",");

		if (n && npatterns < WRAPPER_PATTERNS && used + n + 1 <= sizeof pattern_buf) {
			memcpy(pattern_buf + used, p, n);
			pattern_buf[used + n] = '\0';
			patterns[npatterns++] = pattern_buf + used;
			used += n + 1;
		} else if (n) {
			fprintf(stderr, "libqlock-pthread: %s: too many wrapper patterns; "
				"%.*s and those after it left out\n", name, (int)n, p);
			return;
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

void shim_wrapper_setup(void)
{
	if (set_up)
		return;
	set_up = true;
	add_patterns("QLOCK_WRAPPER");
	add_patterns("QLOCK_LOCKDEP_WRAPPER");
	add_patterns("QLOCK_PROFILE_WRAPPER");
}

void shim_func_strip_params(const char *f, char *out, size_t size)
{
	int angle = 0;
	size_t o = 0;

	for (const char *p = f; *p && o + 1 < size; p++) {
		if (strncmp(p, "operator", 8) == 0 && angle == 0) {
			/* operator<, operator(), ...: copy through the operator's own symbol */
			size_t k = 8;
			while (p[k] && p[k] != '(' && o + k + 1 < size)
				k++;
			if (p[k] == '(' && p[k + 1] == ')' && o + k + 3 < size)
				k += 2;
			memcpy(out + o, p, k);
			o += k;
			p += k - 1;
			continue;
		}
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle > 0)
			angle--;
		else if (*p == '(' && angle == 0)
			break;
		out[o++] = *p;
	}
	out[o] = '\0';
}

/* src into dst[size], cut to fit (size > 0). */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The last two components of a qualified name, template arguments left
 * out: cls "" for a free function. */
static void last_parts(const char *q, char *cls, char *fn, size_t size)
{
	char comp[2][256] = { "", "" };
	size_t o = 0;
	int angle = 0, cur = 0, ncomp = 1;

	for (const char *p = q; *p; p++) {
		if (*p == '<') {
			angle++;
		} else if (*p == '>' && angle > 0) {
			angle--;
		} else if (angle == 0 && p[0] == ':' && p[1] == ':') {
			comp[cur][o] = '\0';
			cur ^= 1;
			ncomp++;
			o = 0;
			p++;
		} else if (angle == 0 && *p == ' ') {
			o = 0; /* a return type before the name */
		} else if (angle == 0 && o + 1 < sizeof(comp[0])) {
			comp[cur][o++] = *p;
		}
	}
	comp[cur][o] = '\0';
	copy_cut(fn, size, comp[cur]);
	copy_cut(cls, size, ncomp > 1 ? comp[cur ^ 1] : "");
}

static bool has_ci(const char *s, const char *word)
{
	return strcasestr(s, word) != NULL;
}

/* A name that says "lock" as a word of its own: lock, Lock, lock_reader,
 * LockInternal, ReadLock, item_lock, rdlock, wrlock, spinlock (not block,
 * clock or deadlock). */
static bool lock_word(const char *fn)
{
	size_t n = strlen(fn);

	if (strncasecmp(fn, "lock", 4) == 0 && (!fn[4] || fn[4] == '_' || isupper((unsigned char)fn[4])))
		return true;
	if (n < 4)
		return false;
	const char *t = fn + n - 4;
	if (strcmp(t, "Lock") == 0 || strcmp(t, "LOCK") == 0)
		return true;
	if (strcmp(t, "lock") == 0 && (t[-1] == '_' || !islower((unsigned char)t[-1])))
		return true;
	return n >= 6 && (strcmp(fn + n - 6, "rdlock") == 0 || strcmp(fn + n - 6, "wrlock") == 0 ||
			  (n >= 8 && strcmp(fn + n - 8, "spinlock") == 0));
}

/* "lock" anywhere in the name but in block, clock or deadlock (a small
 * function's name: mylock, getlock, trylock_acct); or "mutex". */
static bool says_lock(const char *fn)
{
	if (has_ci(fn, "mutex"))
		return true;
	for (const char *p = fn; (p = strcasestr(p, "lock")) != NULL; p += 4) {
		char b = p > fn ? (char)tolower((unsigned char)p[-1]) : '\0';

		if (b == 'b' || b == 'c' || (p - fn >= 4 && strncasecmp(p - 4, "dead", 4) == 0))
			continue;
		return true;
	}
	return false;
}

static bool pattern_match(const char *q, const char *func)
{
	for (unsigned i = 0; i < npatterns; i++)
		if (fnmatch(patterns[i], q, 0) == 0 || fnmatch(patterns[i], func, 0) == 0)
			return true;
	return false;
}

static bool runtime_module(const char *mod)
{
	const char *base = strrchr(mod, '/');

	base = base ? base + 1 : mod;
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libpthread", 10) == 0 ||
	       strncmp(base, "libstdc++", 9) == 0 || strncmp(base, "libqlock", 8) == 0 ||
	       strncmp(base, "libasan", 7) == 0 || strncmp(base, "libubsan", 8) == 0 ||
	       strncmp(base, "libtsan", 7) == 0;
}

bool shim_is_wrapper(const char *func, unsigned long size, const char *module)
{
	char q[512], cls[256], fn[256];

	if (!func || !*func)
		return false;
	shim_func_strip_params(func, q, sizeof q);
	if (pattern_match(q, func))
		return true;
	if (module && runtime_module(module))
		return true;
	if (strncmp(q, "std::", 5) == 0 || strncmp(q, "__gnu_cxx::", 11) == 0 ||
	    strncmp(q, "__gthread", 9) == 0 || strncmp(q, "__gthrw", 7) == 0 ||
	    strncmp(q, "pthread_", 8) == 0)
		return true;
	last_parts(q, cls, fn, sizeof fn);
	if (lock_word(fn))
		return true;
	if (cls[0] && (lock_word(cls) || has_ci(cls, "mutex")))
		return true;
	if (cls[0] && strcmp(cls, fn) == 0 && (has_ci(cls, "guard") || has_ci(cls, "spin")))
		return true;
	return size > 0 && size <= SHIM_WRAPPER_BYTES && says_lock(fn);
}
