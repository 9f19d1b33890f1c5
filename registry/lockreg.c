/* SPDX-License-Identifier: MIT */
#include "lockreg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One line per lock family (see lockreg.h). */
extern const struct lr_lock lr_baseline[];
extern const struct lr_lock lr_qspinlock[];
extern const struct lr_lock lr_qrwlock[];
extern const struct lr_lock lr_tp[];
extern const struct lr_lock lr_rwsem[];
#ifdef QLOCK_HAVE_CK
extern const struct lr_lock lr_ck[];
#endif
#ifdef QLOCK_HAVE_ABSL
extern const struct lr_lock lr_absl[];
#endif
#ifdef QLOCK_HAVE_TBB
extern const struct lr_lock lr_tbb[];
#endif

static const struct lr_lock *const families[] = {
	lr_baseline,
	lr_qspinlock,
	lr_qrwlock,
	lr_tp,
	lr_rwsem,
#ifdef QLOCK_HAVE_CK
	lr_ck,
#endif
#ifdef QLOCK_HAVE_ABSL
	lr_absl,
#endif
#ifdef QLOCK_HAVE_TBB
	lr_tbb,
#endif
};

size_t lr_count(void)
{
	size_t n = 0;

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct lr_lock *l = families[f]; l->name; l++)
			n++;
	return n;
}

const struct lr_lock *lr_at(size_t i)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct lr_lock *l = families[f]; l->name; l++)
			if (i-- == 0)
				return l;
	return NULL;
}

const struct lr_lock *lr_find(const char *name)
{
	for (size_t i = 0, n = lr_count(); i < n; i++)
		if (!strcmp(lr_at(i)->name, name))
			return lr_at(i);
	return NULL;
}

void *lr_new(const struct lr_lock *lk)
{
	size_t sz = (lk->size + 63) & ~(size_t)63;
	void *l = aligned_alloc(64, sz ? sz : 64);
	int err;

	if (!l)
		return NULL;
	memset(l, 0, sz ? sz : 64);
	err = lk->init ? lk->init(l) : 0;
	if (err) {
		free(l);
		errno = err;
		return NULL;
	}
	return l;
}

void lr_free(const struct lr_lock *lk, void *l)
{
	if (!l)
		return;
	if (lk->destroy)
		lk->destroy(l);
	free(l);
}
