/* SPDX-License-Identifier: MIT */
/*
 * The plain data of the reader-writer harnesses (rwsem.c, ww_rwlock.c):
 * writers keep x == y, a reader inside sees them equal.  Any overlap of a
 * writer with anyone, or a missing happens-before, is an assertion or a
 * data race under the checker.  Included once per harness, after
 * model_core.h.
 */
#ifndef QLOCK_TESTS_MODEL_RWDATA_H
#define QLOCK_TESTS_MODEL_RWDATA_H

static int x, y;       /* plain data: writers keep x == y */
static int writes;     /* plain: completed write sections */
static uint32_t reads; /* atomic: readers share their section */

static void write_section(void)
{
	x++;
	assert(x == y + 1);
	y++;
	writes++;
}

static void read_section(void)
{
	assert(x == y);
	qa_fetch_add_relaxed(&reads, 1);
}

#endif /* QLOCK_TESTS_MODEL_RWDATA_H */
