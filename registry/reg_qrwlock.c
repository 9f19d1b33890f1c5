/* SPDX-License-Identifier: MIT */
/*
 * Registry entries for the queued rwlock and its seed 000 variants (all
 * built from the one slow path in src/lock/qrwlock.c).
 */
#include "lockreg.h"

#include "lock/qrwlock_variants.h"
#include "qlock/qrwlock.h"

static int qrw_init(void *l) { qlock_rwlock_init(l); return 0; }

#define QRW_REG_OPS(p)                                                        \
	static void p##_wr(void *l) { p##_write_lock(l); }                    \
	static void p##_wrun(void *l) { p##_write_unlock(l); }                \
	static bool p##_trywr(void *l) { return p##_write_trylock(l); }       \
	static void p##_rd(void *l) { p##_read_lock(l); }                     \
	static void p##_rdun(void *l) { p##_read_unlock(l); }                 \
	static bool p##_tryrd(void *l) { return p##_read_trylock(l); }

/* qlock_* is the public API: alias it to the same naming scheme. */
#define qrw_cur_write_lock qlock_write_lock
#define qrw_cur_write_unlock qlock_write_unlock
#define qrw_cur_write_trylock qlock_write_trylock
#define qrw_cur_read_lock qlock_read_lock
#define qrw_cur_read_unlock qlock_read_unlock
#define qrw_cur_read_trylock qlock_read_trylock

QRW_REG_OPS(qrw_cur)
QRW_REG_OPS(qrw_2015_loop)
QRW_REG_OPS(qrw_2015_byte)

/* The read-biased variant (qlock_biased_*). */
static int qrb_init(void *l)
{
	*(qlock_rwlock_biased_t *)l = (qlock_rwlock_biased_t)QLOCK_RWLOCK_BIASED_INIT;
	return 0;
}
static void qrb_wr(void *l) { qlock_biased_write_lock(l); }
static void qrb_wrun(void *l) { qlock_biased_write_unlock(l); }
static bool qrb_trywr(void *l) { return qlock_biased_write_trylock(l); }
static void qrb_rd(void *l) { qlock_biased_read_lock(l); }
static void qrb_rdun(void *l) { qlock_biased_read_unlock(l); }
static bool qrb_tryrd(void *l) { return qlock_biased_read_trylock(l); }

#define QRW_ENTRY(n, d, p)                                                    \
	{ .name = n, .desc = d, .kind = LR_RWLOCK,                            \
	  .size = sizeof(qlock_rwlock_t), .stats_class = "qrwlock",           \
	  .init = qrw_init, .lock = p##_wr, .unlock = p##_wrun,               \
	  .trylock = p##_trywr, .rdlock = p##_rd, .rdunlock = p##_rdun,       \
	  .tryrdlock = p##_tryrd }

const struct lr_lock lr_qrwlock[] = {
	QRW_ENTRY("qrwlock",
		  "kernel queued rwlock, current layout, parking (qlock_read/write_*)",
		  qrw_cur),
	QRW_ENTRY("qrwlock-2015-cmpxchg-loop",
		  "qrwlock 2015 layout, WAITING set by a word cmpxchg loop (seed 000 before)",
		  qrw_2015_loop),
	QRW_ENTRY("qrwlock-2015-byte",
		  "qrwlock 2015 layout, WAITING set by a byte cmpxchg (seed 000 after)",
		  qrw_2015_byte),
	{ .name = "qrwlock-biased",
	  .desc = "qrwlock with read bias (BRAVO: readers publish in a table of visible readers; qlock_biased_*)",
	  .kind = LR_RWLOCK, .size = sizeof(qlock_rwlock_biased_t),
	  .stats_class = "qrwlock", .init = qrb_init, .lock = qrb_wr,
	  .unlock = qrb_wrun, .trylock = qrb_trywr, .rdlock = qrb_rd,
	  .rdunlock = qrb_rdun, .tryrdlock = qrb_tryrd },
	{ .name = NULL },
};
