/* SPDX-License-Identifier: MIT */
/*
 * Lock-order checking for unmodified programs (QLOCK_LOCKDEP, qlock-run
 * --lockdep), in the spirit of the kernel's lockdep but per lock object.
 * See lockdep.c for the design and docs/lock-doctor.md for the reports.
 *
 * Off, it costs the entry points one predictable branch on
 * shim_lockdep_on.  On, the drop-in's inline fast paths of the blocking
 * locks and of the unlocks tell it of each lock they take and release
 * (lockdep_took(), lockdep_unlocking() below: a look-up and a push, a
 * pop), and every other lock call (a trylock, a timed lock, a lock the
 * inline path did not take) reaches its hooks.
 *
 * Held-lock stacks (for the deadlock watchdog and any other reader in
 * the shim): every thread that takes a lock while lockdep is on has a
 * struct ld_thread, all of them on the list lockdep_threads() returns.
 * A record's owner thread alone writes it; a reader on another thread
 * reads `cap` with acquire, then `held` with acquire, then `depth` with
 * acquire and then held[0 .. min(depth, cap)-1]: an entry is filled
 * before the depth that covers it is published (release), a grown array
 * before the capacity that covers it, and an array, once replaced, is
 * never unmapped; so a reader sees whole entries, possibly of a stack that
 * has moved on by then (read twice and compare to get a stable picture).
 */
#ifndef QLOCK_SHIM_LOCKDEP_H
#define QLOCK_SHIM_LOCKDEP_H

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/atomic.h"

/* What is being taken (the rwlock's two modes share its class). */
enum ld_obj {
	LD_MUTEX,
	LD_RWLOCK_READ,
	LD_RWLOCK_WRITE,
	LD_SPIN,
	LD_NR_OBJ
};

/* How: the shim's modes (0 block, 1 try, 2 timed). */
#define LD_BLOCK 0
#define LD_TRY 1
#define LD_TIMED 2

#define LD_HELD_INLINE 16 /* held entries in the thread record; more grow an array */
#define LD_TCACHE 128     /* per-thread caches of nodes and chains (see lockdep.c) */
#define LD_TTRANS 1024    /* per-thread cache of pushes already checked (lockdep_took()) */

/* Mode a lock is held in, and the mode an acquisition waits in. */
#define LD_HOLD_W 0  /* exclusive: mutex, spinlock, write lock */
#define LD_HOLD_R 1  /* read lock */
#define LD_WAIT_W 0  /* exclusive acquisition */
#define LD_WAIT_R 1  /* read lock of a writer-preferring rwlock: waits behind queued writers */
#define LD_WAIT_RR 2 /* read lock of a reader-preferring rwlock: waits only for a writer */

struct ld_held {
	const void *lock;  /* the pthread object */
	uintptr_t pc;      /* return address of the call that took it */
	uint64_t chain;    /* chain key of the entries below this one */
	uint32_t node;     /* the lock object's node (index; 0 = none) */
	uint32_t gen;      /* the node's generation when taken */
	uint16_t count;    /* recursive acquisitions (mutex, read lock) */
	uint8_t obj;       /* enum ld_obj */
	uint8_t trylock;   /* taken with a trylock */
	uint8_t cond;      /* re-taken by a condition-variable wait */
};

struct ld_thread {
	struct ld_held *held;       /* inline[] or a grown array (see above) */
	uint32_t cap;               /* entries held[] has room for */
	uint32_t depth;             /* published with release (see above) */
	int32_t tid;                /* gettid(), 0 = record free */
	uint64_t chain;             /* chain key of the whole stack */
	/* The blocking acquisition under way, for the deadlock watchdog:
	 * wait_seq odd while it waits (wait_* valid), even otherwise. */
	uint64_t wait_seq;
	const void *wait_lock;
	uintptr_t wait_pc;
	uint8_t wait_obj;           /* enum ld_obj */
	uint8_t wait_behind;        /* a read that queues behind writers */
	uint32_t uid;               /* this thread's lifetime (not reused) */
	pthread_t self;
	bool armed;                 /* has started the deadlock watchdog */
	bool linked;                /* on the list */
	struct ld_thread *next;     /* lockdep_threads() list, never unlinked */
	struct ld_held inline_held[LD_HELD_INLINE];
	/* The owner's own caches, in front of the shared tables: lock ->
	 * node (checked against the node's generation) and chain keys seen. */
	struct ld_tnode {
		const void *lock;
		uint32_t node, gen;
	} tnode[LD_TCACHE];
	uint64_t tchain[LD_TCACHE];
	/* Pushes already checked: with the held stack's chain key `base`,
	 * `lock` (node, gen) was taken as `obj`, not held before, and the
	 * stack's key became `next`, a chain whose dependencies are in the
	 * graph.  A hit is valid while the node lives in that generation. */
	struct ld_trans {
		const void *lock;
		uint64_t base, next;
		const uint32_t *live_gen; /* the node's generation */
		uint32_t node, gen;
		uint8_t obj;
	} ttrans[LD_TTRANS];
};

extern bool shim_lockdep_on;
void shim_lockdep_setup(void);

/* Is lockdep on?  Read after the drop-in's set-up (the entry points ask
 * SHIM_LOCKDEP_ON(), entry.h, which sets up first). */
#define LOCKDEP_ON() qa_unlikely(qa_read(&shim_lockdep_on))

/* Every thread record (in use: tid != 0); NULL while lockdep is off. */
struct ld_thread *lockdep_threads(void);
/* A held entry's lock object, described ("mutex 0x... (class #3: created
 * at f (x.c:3) <- g (x.c:9))"); at report time only (it symbolizes). */
void lockdep_node_name(uint32_t node, uint32_t gen, char *buf, unsigned long len);

/* The hooks, called from the entry points when shim_lockdep_on. */
struct ld_acq {
	struct ld_thread *t;  /* NULL: not tracked */
	const void *lock;
	uintptr_t pc;
	uint32_t node, gen;
	uint64_t base, chain;  /* the held stack's chain key before, and with this lock */
	int recurse;          /* index of the held entry re-taken, or -1 */
	uint8_t obj, mode, cond;
};
void lockdep_acquire_pre(struct ld_acq *a, const volatile void *vlock, enum ld_obj obj,
			 int mode, uintptr_t pc);
void lockdep_acquire_post(struct ld_acq *a, int err);
/* A blocking acquisition that took the lock at its first try, with no
 * wait: the checks of lockdep_acquire_pre() and the push of
 * lockdep_acquire_post() in one call (lockdep_took() below first). */
void lockdep_acquired(const volatile void *vlock, enum ld_obj obj, uintptr_t pc);
/* A condition-variable wait releases its mutex (before the wait) and
 * re-takes it (after): the re-lock is an acquisition like any other, at
 * the wait's call site pc. */
void lockdep_cond_release(const void *mutex, uintptr_t pc);
void lockdep_cond_reacquire_pre(struct ld_acq *a, const void *mutex, uintptr_t pc);
/* An unlock (lockdep_unlocking() below first). */
void lockdep_release(const volatile void *vlock, enum ld_obj obj, uintptr_t pc);
void lockdep_init(const volatile void *vlock, enum ld_obj obj, uintptr_t pc);
/* After the destroy call, which answered err (the class is kept on EBUSY). */
void lockdep_destroy(const volatile void *vlock, enum ld_obj obj, uintptr_t pc, int err);

/* Memory [p, p + len) is released (free, munmap, dlclose): the locks in
 * it die, as if destroyed.  Exported for libqlock-lockdep-hooks.so, which
 * qlock-run --lockdep preloads. */
void qlock_lockdep_forget(const void *p, size_t len);

/* The filter of the pages that may hold a lock lockdep knows: a counter
 * per slot (a page's slot: ld_filter_slot()), non-zero while a lock's
 * node lives in a page of that slot.  NULL while lockdep is off; once
 * set, the same array for the process's life (its free() reads it
 * first, qlock_lockdep_forget() only on a hit). */
#define LD_PAGE_SHIFT 12
#define LD_FILTER_SLOTS (1u << 20)
const uint32_t *qlock_lockdep_filter(void);

static inline uint32_t ld_filter_slot(uintptr_t page)
{
	return (uint32_t)(page * 0x9e3779b97f4a7c15ull >> 44) & (LD_FILTER_SLOTS - 1);
}

/* The first page of [lo, hi) (hi > lo) whose slot is set, or 0. */
static inline uintptr_t ld_filter_first(const uint32_t *filter, uintptr_t lo, uintptr_t hi)
{
	uintptr_t p1 = (hi - 1) >> LD_PAGE_SHIFT;

	for (uintptr_t p = lo >> LD_PAGE_SHIFT; p <= p1; p++)
		if (qa_read(&filter[ld_filter_slot(p)]) != 0)
			return p;
	return 0;
}
/* pthread_join(th) returned 0 (libqlock-lockdep-hooks.so): the caller has
 * waited for th's end, and for the ends of the threads th had joined. */
void qlock_lockdep_joined(pthread_t th);

#define LOCKDEP_PC() ((uintptr_t)__builtin_return_address(0))

/* ---- the usual cases, inline in the entry points ----------------------------
 * The calling thread's record (NULL before its first tracked lock call),
 * and whether a hook runs on it (a lock call made inside one is not
 * tracked): lockdep.c's. */
extern __thread struct ld_thread *ld_me __attribute__((tls_model("initial-exec")));
extern __thread int ld_busy __attribute__((tls_model("initial-exec")));
/* ld_me while no hook runs on the thread, else NULL: the inline paths'
 * one test of both. */
extern __thread struct ld_thread *ld_hot __attribute__((tls_model("initial-exec")));

/*
 * The thread's cache of pushes already checked (struct ld_trans), in
 * front of everything else an acquisition does: its set of two for
 * `lock` taken on a held stack whose chain key is `base`.  A hit says
 * all the checks would: the stack is the one the entry was made with
 * (its key covers every held entry's node, generation and mode), so
 * `lock` is not on it (a re-take is never entered) and the chain with it
 * has been checked; and the lock's node is the one the entry names while
 * that node lives in the entry's generation (every death bumps it: a
 * destroy, a free or munmap of its memory, a dlclose, a re-init).  So a
 * hit is a look-up and a push: no node look-up, no scan of the held
 * locks, no hash, no call.
 */
_Static_assert(LD_TTRANS == 1024, "ld_trans_set() takes 9 bits, a set of two");
static inline struct ld_trans *ld_trans_set(struct ld_thread *t, uint64_t base,
					    const void *lock)
{
	/* Fibonacci hashing of the address (the locks of an array fall in
	 * different sets), moved by the stack's key. */
	return &t->ttrans[(((uintptr_t)lock >> 3) * 0x9e3779b97f4a7c15ull + base) >> 55 << 1];
}

static inline bool ld_trans_is(const struct ld_trans *e, const void *lock, uint64_t base,
			       enum ld_obj obj)
{
	/* The generation with acquire: pairs with the release of the
	 * node's death (lockdep.c, ld_node_kill()). */
	return e->lock == lock && e->base == base && e->obj == obj &&
	       qa_read_acquire(e->live_gen) == e->gen;
}

/* The entry for the push, or NULL.  Two ways: the one filled last first. */
static inline const struct ld_trans *ld_trans_find(struct ld_thread *t, uint64_t base,
						   const void *lock, enum ld_obj obj)
{
	const struct ld_trans *e = ld_trans_set(t, base, lock);

	if (qa_likely(ld_trans_is(e, lock, base, obj)))
		return e;
	if (ld_trans_is(e + 1, lock, base, obj))
		return e + 1;
	return NULL;
}

/* lockdep_acquired(): its usual case, a push already checked, is the
 * look-up and the push (as lockdep_acquire_post() writes it). */
static inline __attribute__((always_inline)) void lockdep_took(const volatile void *vlock,
							       enum ld_obj obj, uintptr_t pc)
{
	const void *lock = (const void *)(uintptr_t)vlock;
	struct ld_thread *t = ld_hot;

	if (qa_likely(t != NULL)) {
		uint64_t base = t->chain;
		const struct ld_trans *e = ld_trans_find(t, base, lock, obj);
		uint32_t d = t->depth;

		if (qa_likely(e != NULL && d < t->cap)) {
			struct ld_held *h = &t->held[d];

			h->lock = lock;
			h->pc = pc;
			h->chain = base;
			h->node = e->node;
			h->gen = e->gen;
			h->count = 1;
			h->obj = (uint8_t)obj;
			h->trylock = 0;
			h->cond = 0;
			t->chain = e->next;
			/* The entry before the depth that shows it (above). */
			qa_write_release(&t->depth, d + 1);
			return;
		}
	}
	lockdep_acquired(vlock, obj, pc);
}

/* lockdep_release(): its usual case, the top entry taken once, is a pop. */
static inline __attribute__((always_inline)) void lockdep_unlocking(const volatile void *vlock,
								    enum ld_obj obj, uintptr_t pc)
{
	const void *lock = (const void *)(uintptr_t)vlock;
	struct ld_thread *t = ld_hot;

	if (qa_likely(t != NULL)) {
		uint32_t d = t->depth;

		if (qa_likely(d != 0)) {
			const struct ld_held *h = &t->held[d - 1];

			if (qa_likely(h->lock == lock && h->count == 1)) {
				t->chain = h->chain;
				qa_write_release(&t->depth, d - 1); /* see above */
				return;
			}
		}
	}
	lockdep_release(vlock, obj, pc);
}

/* Take `lock` through `call` (an expression giving 0 or an error), with
 * the checks before and the held-stack push after; `pc` the call site. */
#define LOCKDEP_ACQUIRE_AT(lock, obj, mode, pc, call) __extension__({       \
	struct ld_acq ld_a_;                                                 \
	lockdep_acquire_pre(&ld_a_, (lock), (obj), (mode), (pc));            \
	int ld_err_ = (call);                                                \
	lockdep_acquire_post(&ld_a_, ld_err_);                               \
	ld_err_;                                                             \
})

#define LOCKDEP_ACQUIRE(lock, obj, mode, call)                               \
	LOCKDEP_ACQUIRE_AT(lock, obj, mode, LOCKDEP_PC(), call)

#endif /* QLOCK_SHIM_LOCKDEP_H */
