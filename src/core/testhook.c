/* SPDX-License-Identifier: MIT */
#include "testhook.h"

#ifdef QLOCK_TEST_HOOKS
qc_test_hook_fn qc_test_hook;
#else
typedef int qc_testhook_unused; /* ISO C wants a non-empty unit */
#endif
