/* SPDX-License-Identifier: MIT */
#include "spin.h"

#include <errno.h>
#include <stdlib.h>

#include "qlock/qlock.h"
#include "slot.h"

struct qc_tunables qc_tune = {
	.spin_limit = 512,
	.handoff_ns = 4000000,
	.owner_spin_ns = 20000,
	/* Why 1024 (docs/performance.md, "Defaults and why"): a read of the
	 * held word costs the running owner one cache miss (~100 ns) on its
	 * next lock or unlock; at every 8 pauses that is a miss every one to
	 * three short critical sections (a loss to glibc at 2 threads, no
	 * gap).  At 64 (~1 us here) the waiter still took the lock after
	 * one run of ~10-30 operations, so about 1 % of acquisitions waited
	 * for a whole gap: a p99 wait of ~3 us against glibc's 0.8.  At 1024
	 * (~16 us at 16 ns a pause) runs are long enough that the p99 is
	 * within 2x of glibc's, and throughput rises; the owner-spin budget
	 * still ends the spin on time (tp_poll_clock_due()). */
	.poll_max = 1024,
	.spin_adapt = 1,
};

#ifndef QLOCK_MODEL
__thread uint32_t qc_spin_learned __attribute__((tls_model("initial-exec")));
__thread uint8_t qc_owner_spin_shift __attribute__((tls_model("initial-exec")));

void qc_spin_learn(bool ran_out)
{
	uint32_t limit = qc_spin_limit(), floor = limit / 32 ? limit / 32 : 1;
	uint32_t b = qc_spin_learned && qc_spin_learned < limit ?
		     qc_spin_learned : limit;

	if (!limit || !qa_read(&qc_tune.spin_adapt))
		return;
	if (ran_out)
		b = b / 2 > floor ? b / 2 : floor;
	else
		b = b > limit / 2 ? limit : b * 2;
	qc_spin_learned = b;
}
#endif

QLOCK_API int qlock_tune_set(enum qlock_tunable t, long value)
{
	if (value < 0)
		return EINVAL;
	switch (t) {
	case QLOCK_TUNE_SPIN_LIMIT:
		if (value > (long)UINT32_MAX)
			return EINVAL;
		qa_write(&qc_tune.spin_limit, (uint32_t)value);
		return 0;
	case QLOCK_TUNE_HANDOFF_NS:
		qa_write(&qc_tune.handoff_ns, (uint64_t)value);
		return 0;
	case QLOCK_TUNE_OWNER_SPIN_NS:
		qa_write(&qc_tune.owner_spin_ns, (uint64_t)value);
		return 0;
	case QLOCK_TUNE_POLL_MAX:
		if (value > 65536)
			return EINVAL;
		qa_write(&qc_tune.poll_max, (uint32_t)value);
		return 0;
	case QLOCK_TUNE_SPIN_ADAPT:
		if (value > 1)
			return EINVAL;
		qa_write(&qc_tune.spin_adapt, (uint32_t)value);
		return 0;
	default:
		return EINVAL;
	}
}

QLOCK_API long qlock_tune_get(enum qlock_tunable t)
{
	switch (t) {
	case QLOCK_TUNE_SPIN_LIMIT:
		return (long)qc_spin_limit();
	case QLOCK_TUNE_HANDOFF_NS:
		return (long)qc_handoff_ns();
	case QLOCK_TUNE_OWNER_SPIN_NS:
		return (long)qc_owner_spin_ns();
	case QLOCK_TUNE_POLL_MAX:
		return (long)qc_poll_max();
	case QLOCK_TUNE_SPIN_ADAPT:
		return (long)qa_read(&qc_tune.spin_adapt);
	default:
		return -1;
	}
}

#ifndef QLOCK_MODEL /* a model program reads no environment */

/* A malformed value is ignored: a lock library must not abort start-up. */
static void env_tunable(const char *name, enum qlock_tunable t)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 0)
		return;
	(void)qlock_tune_set(t, n);
}

__attribute__((constructor)) void qc_tune_init_from_env(void)
{
	const char *v;

	env_tunable("QLOCK_SPIN_LIMIT", QLOCK_TUNE_SPIN_LIMIT);
	env_tunable("QLOCK_HANDOFF_NS", QLOCK_TUNE_HANDOFF_NS);
	env_tunable("QLOCK_OWNER_SPIN_NS", QLOCK_TUNE_OWNER_SPIN_NS);
	env_tunable("QLOCK_POLL_MAX", QLOCK_TUNE_POLL_MAX);
	env_tunable("QLOCK_SPIN_ADAPT", QLOCK_TUNE_SPIN_ADAPT);
	v = getenv("QLOCK_MAX_THREADS");
	if (v && *v) {
		char *end;
		long n = strtol(v, &end, 10);

		if (!*end && n > 0)
			(void)qc_slot_set_limit(n > QLOCK_MAX_THREADS ?
						QLOCK_MAX_THREADS : (int)n);
	}
}

#endif /* QLOCK_MODEL */
