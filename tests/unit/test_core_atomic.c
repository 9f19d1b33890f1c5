/* SPDX-License-Identifier: MIT */
/* Atomics with native byte/halfword access to parts of a lock word. */
#include "core/atomic.h"

#include "atomic_parts_check.h"

#ifdef QLOCK_WORD_ATOMICS_ONLY
#error "this test checks the native part operations"
#endif

int main(void)
{
	return run_atomic_checks();
}
