/* SPDX-License-Identifier: MIT */
/*
 * Ticket spinlock: FIFO, waiters never sleep (a pure-spinner baseline).
 *
 * Word layout (one uint32_t):
 *   bits  0-15  owner: the ticket now being served
 *   bits 16-31  next:  the next ticket to hand out
 * free <=> owner == next.
 *
 * Transitions:
 *   lock:    my = fetch_add(word, 1 << 16) >> 16; spin until owner == my
 *   trylock: cmpxchg(word, v, v + (1 << 16)) only when owner == next in v
 *   unlock:  owner = owner + 1 (halfword store; only the holder writes it)
 * Both halves wrap modulo 2^16 (the carry out of `next` is lost), so up to
 * 65535 waiters are exact.  A ticket cannot be given back, so the timed
 * lock polls trylock until the deadline (it is not FIFO).
 */
#include "baseline.h"

#include <errno.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "core/lockevent.h"

#define TICKET_OWNER_SHIFT 0
#define TICKET_NEXT_ONE    (1u << 16)

static inline uint16_t ticket_owner(uint32_t v) { return (uint16_t)v; }
static inline uint16_t ticket_next(uint32_t v) { return (uint16_t)(v >> 16); }

void ticket_init(struct ticket_lock *l)
{
	qa_write(&l->word, 0);
}

void ticket_lock(struct ticket_lock *l)
{
	/* Relaxed: taking a ticket orders nothing; the owner read does. */
	uint16_t my = ticket_next(qa_fetch_add_relaxed(&l->word,
						       TICKET_NEXT_ONE));
	uint32_t spins = 0;

	/* Acquire: pairs with the release owner store in ticket_unlock(). */
	while (qa_u16_read_acquire(&l->word, TICKET_OWNER_SHIFT) != my) {
		qa_cpu_relax();
		spins++;
	}
	if (spins)
		qc_event_add(QC_CLASS_ticket, QC_EV_spin, spins);
}

bool ticket_trylock(struct ticket_lock *l)
{
	uint32_t v = qa_read(&l->word);

	if (ticket_owner(v) != ticket_next(v))
		return false;
	/* Acquire on success: pairs with the release in ticket_unlock(). */
	return qa_try_cmpxchg_acquire(&l->word, &v, v + TICKET_NEXT_ONE);
}

int ticket_timedlock(struct ticket_lock *l, const struct timespec *abs)
{
	if (!qc_timespec_valid(abs))
		return EINVAL;
	while (!ticket_trylock(l)) {
		if (qc_deadline_passed(abs, CLOCK_MONOTONIC))
			return ETIMEDOUT;
		qa_cpu_relax();
	}
	return 0;
}

void ticket_unlock(struct ticket_lock *l)
{
	uint16_t owner = qa_u16_read(&l->word, TICKET_OWNER_SHIFT);

	/* Release: the critical section happens before the next owner's
	 * acquire read of `owner` (ticket_lock) or cmpxchg (trylock). */
	qa_u16_write_release(&l->word, TICKET_OWNER_SHIFT, (uint16_t)(owner + 1));
}
