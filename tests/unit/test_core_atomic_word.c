/* SPDX-License-Identifier: MIT */
/* The same checks with QLOCK_WORD_ATOMICS_ONLY: every part operation
 * becomes a whole-word operation and must behave identically. */
#define QLOCK_WORD_ATOMICS_ONLY 1
#include "core/atomic.h"

#include "atomic_parts_check.h"

int main(void)
{
	return run_atomic_checks();
}
