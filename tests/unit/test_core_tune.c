/* SPDX-License-Identifier: MIT */
/*
 * Tunables: defaults, set/get, rejected values; and the TP top waiter's
 * poll spacing (QLOCK_POLL_MAX): 8 pauses after any change of the lock
 * word, doubling while it reads the same, capped by the tunable, and
 * never below 8 (a cap under 8 keeps the fixed spacing of before).
 */
#include <assert.h>
#include <errno.h>

#include "lock/tp_internal.h"
#include "qlock/qlock.h"

static void check_tunables(void)
{
	assert(qlock_tune_get(QLOCK_TUNE_POLL_MAX) == 1024);
	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, 256) == 0);
	assert(qlock_tune_get(QLOCK_TUNE_POLL_MAX) == 256);
	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, -1) == EINVAL);
	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, 65537) == EINVAL);
	assert(qlock_tune_get(QLOCK_TUNE_POLL_MAX) == 256);
	assert(qlock_tune_set(QLOCK_TUNE_NR, 1) == EINVAL);
	assert(qlock_tune_get(QLOCK_TUNE_NR) == -1);
}

static void check_poll_spacing(void)
{
	struct tp_poll p = TP_POLL_INIT;
	static const uint32_t want[] = { 8, 16, 32, 64, 64 };

	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, 64) == 0);
	for (unsigned i = 0; i < 5; i++) {
		tp_poll_relax(&p, 0x1234);
		assert(p.relax == want[i]);
	}
	tp_poll_relax(&p, 0x1235); /* the word changed: watch closely */
	assert(p.relax == 8);
	tp_poll_relax(&p, 0x1235);
	assert(p.relax == 16);

	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, 0) == 0);
	p = (struct tp_poll)TP_POLL_INIT;
	for (unsigned i = 0; i < 4; i++) {
		tp_poll_relax(&p, 7);
		assert(p.relax == 8);
	}
	assert(qlock_tune_set(QLOCK_TUNE_POLL_MAX, 100) == 0);
	p = (struct tp_poll)TP_POLL_INIT;
	for (unsigned i = 0; i < 6; i++)
		tp_poll_relax(&p, 7);
	assert(p.relax == 100); /* a cap that is not a power of two */
}

int main(void)
{
	check_tunables();
	check_poll_spacing();
	return 0;
}
