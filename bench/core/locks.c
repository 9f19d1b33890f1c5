/* SPDX-License-Identifier: MIT */
/*
 * Lock lookup for lockbench: the harness registry, by name only.
 *
 * The test-only lockbench_dev (LOCKBENCH_DEV_LOCKS) also sees the locks of
 * bench/core/broken_lock.c, consulted only for names the registry does
 * not have; the installed lockbench never carries them.
 */
#include <string.h>

#include "lb.h"

#ifdef LOCKBENCH_DEV_LOCKS
extern const struct lr_lock lb_dev_locks[];

static size_t lb_dev_count(void)
{
	size_t n = 0;

	while (lb_dev_locks[n].name)
		n++;
	return n;
}

/* A stand-in is listed only while the registry lacks its name. */
static bool lb_dev_visible(size_t i)
{
	return !lr_find(lb_dev_locks[i].name);
}
#else
static size_t lb_dev_count(void) { return 0; }
static bool lb_dev_visible(size_t i) { (void)i; return false; }
#endif

size_t lb_lock_count(void)
{
	size_t n = lr_count();

	for (size_t i = 0; i < lb_dev_count(); i++)
		n += lb_dev_visible(i);
	return n;
}

const struct lr_lock *lb_lock_at(size_t i)
{
	if (i < lr_count())
		return lr_at(i);
	i -= lr_count();
#ifdef LOCKBENCH_DEV_LOCKS
	for (size_t d = 0; d < lb_dev_count(); d++)
		if (lb_dev_visible(d) && i-- == 0)
			return &lb_dev_locks[d];
#endif
	return NULL;
}

const struct lr_lock *lb_lock_find(const char *name)
{
	const struct lr_lock *lk = lr_find(name);

	for (size_t i = 0; !lk && i < lb_lock_count(); i++)
		if (!strcmp(lb_lock_at(i)->name, name))
			lk = lb_lock_at(i);
	return lk;
}
