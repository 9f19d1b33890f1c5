/* SPDX-License-Identifier: MIT */
/*
 * The core of the library, in its model build, for a harness to include:
 * a harness is one translation unit, so that GenMC (which checks a single
 * file) sees the library's real sources, not copies.
 *
 *	#include "model_core.h"      first, before any other header
 *	#include "lock/tp_mutex.c"   then the lock sources under test
 *
 * The same file builds as an ordinary test (tests/CMakeLists.txt).  Each
 * harness also has one mutation (QLOCK_MUTATE_<NAME>, a weakened ordering
 * or a dropped wake in the lock source) that the checker must catch.
 */
#ifndef QLOCK_TESTS_MODEL_CORE_H
#define QLOCK_TESTS_MODEL_CORE_H

#define QLOCK_MODEL 1

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/model.c"
#include "core/futex.c"
#include "core/misuse.c"
#include "core/slot.c"
#include "core/spin.c"
#include "core/stats.c"

#endif /* QLOCK_TESTS_MODEL_CORE_H */
