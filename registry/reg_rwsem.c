/* SPDX-License-Identifier: MIT */
/*
 * Registry entries for the rwsem (src/lock/rwsem.c) and its seed 002
 * "before" wake-up variant, both from the one slow path.
 */
#include "lockreg.h"

#include <time.h>

#include "lock/rwsem_variants.h"
#include "qlock/rwsem.h"

static int rs_init(void *l) { qlock_rwsem_init(l); return 0; }
static bool rs_trywr(void *l) { return qlock_down_write_trylock(l); }
static bool rs_tryrd(void *l) { return qlock_down_read_trylock(l); }

/* "rwsem": the public API. */
static void rs_wr(void *l) { qlock_down_write(l); }
static void rs_wrun(void *l) { qlock_up_write(l); }
static int rs_twr(void *l, const struct timespec *abs)
{ return qlock_down_write_timed(l, abs, CLOCK_MONOTONIC); }
static void rs_rd(void *l) { qlock_down_read(l); }
static void rs_rdun(void *l) { qlock_up_read(l); }
static int rs_trd(void *l, const struct timespec *abs)
{ return qlock_down_read_timed(l, abs, CLOCK_MONOTONIC); }

/* "rwsem-wake-front": readers woken only up to the first writer. */
static void rf_wr(void *l) { qrwsem_front_down_write(l); }
static void rf_wrun(void *l) { qrwsem_front_up_write(l); }
static int rf_twr(void *l, const struct timespec *abs)
{ return qrwsem_front_down_write_timed(l, abs, CLOCK_MONOTONIC); }
static void rf_rd(void *l) { qrwsem_front_down_read(l); }
static void rf_rdun(void *l) { qrwsem_front_up_read(l); }
static int rf_trd(void *l, const struct timespec *abs)
{ return qrwsem_front_down_read_timed(l, abs, CLOCK_MONOTONIC); }

/* "rwsem-biased": the same, initialised with read bias. */
static int rb_init(void *l) { qlock_rwsem_init_biased(l); return 0; }

#define RS_ENTRY(n, d, p)                                                     \
	{ .name = n, .desc = d, .kind = LR_RWLOCK,                            \
	  .size = sizeof(qlock_rwsem_t), .stats_class = "rwsem",              \
	  .init = rs_init, .lock = p##_wr, .unlock = p##_wrun,                \
	  .trylock = rs_trywr, .timedlock = p##_twr,                          \
	  .rdlock = p##_rd, .rdunlock = p##_rdun, .tryrdlock = rs_tryrd,      \
	  .timedrdlock = p##_trd }

const struct lr_lock lr_rwsem[] = {
	RS_ENTRY("rwsem",
		 "kernel rwsem: spinning writers, reader stealing, hand-off, wakes all queued readers (seed 002 after)",
		 rs),
	RS_ENTRY("rwsem-wake-front",
		 "rwsem waking only the readers before the first queued writer (seed 002 before)",
		 rf),
	{ .name = "rwsem-biased",
	  .desc = "rwsem with read bias (BRAVO: readers publish in a table of visible readers)",
	  .kind = LR_RWLOCK, .size = sizeof(qlock_rwsem_t), .stats_class = "rwsem",
	  .init = rb_init, .lock = rs_wr, .unlock = rs_wrun,
	  .trylock = rs_trywr, .timedlock = rs_twr,
	  .rdlock = rs_rd, .rdunlock = rs_rdun, .tryrdlock = rs_tryrd,
	  .timedrdlock = rs_trd },
	{ .name = NULL },
};
