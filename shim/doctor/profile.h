/* SPDX-License-Identifier: MIT */
/*
 * The profile (profile.c, QLOCK_PROFILE): at exit, the report of what
 * the contention table (contention.h) recorded.  It reads that table and
 * never writes it; the table's owner is contention.c.
 */
#ifndef QLOCK_SHIM_PROFILE_H
#define QLOCK_SHIM_PROFILE_H

#include <stdint.h>

/* Read the profile's settings and register its report at exit; sets the
 * contention table up (lockstat_setup()). */
void shim_profile_setup(void);
/* When the profile started (qc_now_ns()). */
extern uint64_t shim_profile_t0;

#endif /* QLOCK_SHIM_PROFILE_H */
