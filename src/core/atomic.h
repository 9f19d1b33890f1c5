/* SPDX-License-Identifier: MIT */
/*
 * qlock internal atomics: the one place in the tree that touches compiler
 * atomic builtins or inline assembly.
 *
 * Vocabulary follows the kernel's (READ_ONCE, smp_load_acquire, xchg,
 * cmpxchg_{relaxed,acquire,release}, atomic_fetch_or, ...) with a `qa_`
 * prefix so it cannot collide with <stdatomic.h>.  Every operation is
 * type-generic over naturally aligned scalars and pointers, like the
 * kernel's, because __atomic builtins are.
 *
 * Ordering suffixes:
 *   (none)    sequentially consistent (the kernel's fully ordered RMW)
 *   _relaxed  no ordering
 *   _acquire  later accesses stay after it
 *   _release  earlier accesses stay before it
 *
 * Lock words are plain uint32_t accessed only through these operations.
 * Parts of a 32-bit word (a byte or a halfword, named by the bit offset
 * of its least significant bit, as the kernel's _Q_*_OFFSET constants)
 * are reached with qa_u8_* / qa_u16_*, which pick the right address for
 * little- and big-endian.
 *
 * QLOCK_WORD_ATOMICS_ONLY: every byte/halfword operation becomes an
 * equivalent operation on the whole 32-bit word (a plain store becomes a
 * cmpxchg loop that changes only that part).  This is strictly stronger,
 * so a lock correct in this mode is checked by model checkers that reject
 * mixed-size accesses, and the fast mode differs only in access size.
 * QLOCK_MODEL (core/model.h) implies it.
 *
 * Stand-alone fences (qa_smp_mb & co.) exist for completeness, but
 * ThreadSanitizer does not model them: lock code should put ordering on
 * the accesses themselves.
 */
#ifndef QLOCK_CORE_ATOMIC_H
#define QLOCK_CORE_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* ---- plain loads and stores ------------------------------------------ */

#define qa_read(p)             __atomic_load_n((p), __ATOMIC_RELAXED)
#define qa_read_acquire(p)     __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define qa_write(p, v)         __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define qa_write_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* A store that is also a full barrier (the kernel's smp_store_mb). */
#define qa_write_mb(p, v)      __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
/* seq_cst load: with seq_cst stores and RMWs it makes a store-load pair
 * without a stand-alone fence (ThreadSanitizer builds, which take none). */
#define qa_read_mb(p)          __atomic_load_n((p), __ATOMIC_SEQ_CST)

/* ---- exchange ---------------------------------------------------------- */

#define qa_xchg(p, v)          __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define qa_xchg_relaxed(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_RELAXED)
#define qa_xchg_acquire(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define qa_xchg_release(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_RELEASE)

/* ---- compare and exchange ---------------------------------------------- */

/* try_cmpxchg: true on success; on failure *oldp receives the current value. */
#define qa__try_cmpxchg(p, oldp, n, s, f) \
	__atomic_compare_exchange_n((p), (oldp), (n), false, (s), (f))
#define qa_try_cmpxchg(p, oldp, n) \
	qa__try_cmpxchg(p, oldp, n, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#define qa_try_cmpxchg_relaxed(p, oldp, n) \
	qa__try_cmpxchg(p, oldp, n, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define qa_try_cmpxchg_acquire(p, oldp, n) \
	qa__try_cmpxchg(p, oldp, n, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)
#define qa_try_cmpxchg_release(p, oldp, n) \
	qa__try_cmpxchg(p, oldp, n, __ATOMIC_RELEASE, __ATOMIC_RELAXED)

/* cmpxchg: returns the value found (== old on success), as the kernel's. */
#define qa__cmpxchg(p, o, n, s, f) __extension__({                     \
	__typeof__(*(p)) qa__old = (o);                                 \
	(void)qa__try_cmpxchg((p), &qa__old, (n), (s), (f));            \
	qa__old;                                                        \
})
#define qa_cmpxchg(p, o, n) \
	qa__cmpxchg(p, o, n, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#define qa_cmpxchg_relaxed(p, o, n) \
	qa__cmpxchg(p, o, n, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define qa_cmpxchg_acquire(p, o, n) \
	qa__cmpxchg(p, o, n, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)
#define qa_cmpxchg_release(p, o, n) \
	qa__cmpxchg(p, o, n, __ATOMIC_RELEASE, __ATOMIC_RELAXED)

/* ---- arithmetic and bit operations (return the old value) -------------- */

#ifndef QLOCK_UNDER_GENMC
#define qa_fetch_add(p, v)          __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define qa_fetch_add_relaxed(p, v)  __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define qa_fetch_add_acquire(p, v)  __atomic_fetch_add((p), (v), __ATOMIC_ACQUIRE)
#define qa_fetch_add_release(p, v)  __atomic_fetch_add((p), (v), __ATOMIC_RELEASE)
#else
/*
 * GenMC 0.10.3 does not wrap a 32-bit atomic add around: 257 + 0xffffff02
 * is stored as 2^32 + 3, and a later cmpxchg that expects 3 fails for
 * ever (the rwsem adds such "negative" adjustments to its count).  Under
 * the checker an addend with its top bit set is subtracted as such.
 */
#define qa__add(add, sub, p, v, mo) __extension__({ \
	__typeof__(*(p)) qa_v_ = (v); \
	(qa_v_ >> (sizeof(qa_v_) * 8 - 1)) ? sub((p), -qa_v_, (mo)) \
					     : add((p), qa_v_, (mo)); })
#define qa_fetch_add(p, v) \
	qa__add(__atomic_fetch_add, __atomic_fetch_sub, p, v, __ATOMIC_SEQ_CST)
#define qa_fetch_add_relaxed(p, v) \
	qa__add(__atomic_fetch_add, __atomic_fetch_sub, p, v, __ATOMIC_RELAXED)
#define qa_fetch_add_acquire(p, v) \
	qa__add(__atomic_fetch_add, __atomic_fetch_sub, p, v, __ATOMIC_ACQUIRE)
#define qa_fetch_add_release(p, v) \
	qa__add(__atomic_fetch_add, __atomic_fetch_sub, p, v, __ATOMIC_RELEASE)
#endif
#define qa_fetch_sub(p, v)          __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define qa_fetch_sub_relaxed(p, v)  __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define qa_fetch_sub_acquire(p, v)  __atomic_fetch_sub((p), (v), __ATOMIC_ACQUIRE)
#define qa_fetch_sub_release(p, v)  __atomic_fetch_sub((p), (v), __ATOMIC_RELEASE)
#define qa_fetch_or(p, v)           __atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
#define qa_fetch_or_relaxed(p, v)   __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
#define qa_fetch_or_acquire(p, v)   __atomic_fetch_or((p), (v), __ATOMIC_ACQUIRE)
#define qa_fetch_or_release(p, v)   __atomic_fetch_or((p), (v), __ATOMIC_RELEASE)
#define qa_fetch_andnot(p, v)         __atomic_fetch_and((p), ~(v), __ATOMIC_SEQ_CST)
#define qa_fetch_andnot_relaxed(p, v) __atomic_fetch_and((p), ~(v), __ATOMIC_RELAXED)
#define qa_fetch_andnot_acquire(p, v) __atomic_fetch_and((p), ~(v), __ATOMIC_ACQUIRE)
#define qa_fetch_andnot_release(p, v) __atomic_fetch_and((p), ~(v), __ATOMIC_RELEASE)

/* add_return: the new value, as the kernel's atomic_add_return*. */
#ifndef QLOCK_UNDER_GENMC
#define qa_add_return(p, v)          __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define qa_add_return_relaxed(p, v)  __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define qa_add_return_acquire(p, v)  __atomic_add_fetch((p), (v), __ATOMIC_ACQUIRE)
#define qa_add_return_release(p, v)  __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
#else /* see qa_fetch_add */
#define qa_add_return(p, v) \
	qa__add(__atomic_add_fetch, __atomic_sub_fetch, p, v, __ATOMIC_SEQ_CST)
#define qa_add_return_relaxed(p, v) \
	qa__add(__atomic_add_fetch, __atomic_sub_fetch, p, v, __ATOMIC_RELAXED)
#define qa_add_return_acquire(p, v) \
	qa__add(__atomic_add_fetch, __atomic_sub_fetch, p, v, __ATOMIC_ACQUIRE)
#define qa_add_return_release(p, v) \
	qa__add(__atomic_add_fetch, __atomic_sub_fetch, p, v, __ATOMIC_RELEASE)
#endif
#define qa_sub_return_release(p, v)  __atomic_sub_fetch((p), (v), __ATOMIC_RELEASE)

/* ---- fences ------------------------------------------------------------ */

#define qa_smp_mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define qa_smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define qa_smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
/*
 * A full fence right after a fully ordered RMW (qa_try_cmpxchg, qa_xchg,
 * ...), as the kernel's smp_mb__after_atomic(): on x86 the locked
 * instruction is a full barrier already, so only the compiler is stopped;
 * elsewhere, and in the model and ThreadSanitizer builds (which reason
 * about C11 fences, not instructions), it is qa_smp_mb().
 */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(QLOCK_MODEL) && \
	!defined(__SANITIZE_THREAD__)
#define qa_smp_mb__after_rmw() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define qa_smp_mb__after_rmw() qa_smp_mb()
#endif
/* Stops the compiler (only) from moving accesses across it.  GenMC
 * 0.10.3 takes a signal fence for a thread fence, which would check a
 * stronger program than the one that runs; it has no signal handlers to
 * order against, so the model build under it has no barrier at all. */
#ifndef QLOCK_UNDER_GENMC
#define qa_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define qa_barrier() ((void)0)
#endif

/* ---- statistics counters ----------------------------------------------- */

/*
 * A counter written by one thread and read racily by others: a relaxed
 * load and store, no locked instruction.
 */
#define qa_stat_add(p, v) qa_write((p), qa_read(p) + (v))

/* ---- compiler hints (kept here so no other file uses builtins) -------- */

#define qa_likely(x)   __builtin_expect(!!(x), 1)
#define qa_unlikely(x) __builtin_expect(!!(x), 0)
/* Index of the lowest set bit of a non-zero 64-bit value. */
#define qa_ctz64(x)    __builtin_ctzll(x)

/* ---- cpu_relax ---------------------------------------------------------- */

static inline __attribute__((always_inline)) void qa_cpu_relax(void)
{
#if defined(QLOCK_UNDER_GENMC)
	/* Nothing: GenMC cuts side-effect-free spin loops by itself. */
#elif defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	qa_barrier();
#endif
}

/* ---- parts of a 32-bit lock word --------------------------------------- */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define QA_BIG_ENDIAN 1
#else
#define QA_BIG_ENDIAN 0
#endif

/* Byte index (in memory) of the byte whose least significant bit is `shift`. */
#define qa__u8_index(shift)  (QA_BIG_ENDIAN ? 3 - (shift) / 8 : (shift) / 8)
#define qa__u16_index(shift) (QA_BIG_ENDIAN ? 1 - (shift) / 16 : (shift) / 16)

typedef uint16_t __attribute__((may_alias)) qa_u16_alias;

static inline uint8_t *qa__u8p(uint32_t *w, unsigned shift)
{
	return (uint8_t *)w + qa__u8_index(shift);
}

static inline qa_u16_alias *qa__u16p(uint32_t *w, unsigned shift)
{
	return (qa_u16_alias *)w + qa__u16_index(shift);
}

#define qa__part(word, shift, mask) (((word) >> (shift)) & (mask))
#define qa__with_part(word, shift, mask, v) \
	(((word) & ~((uint32_t)(mask) << (shift))) | ((uint32_t)(v) << (shift)))

#ifndef QLOCK_WORD_ATOMICS_ONLY

#define QA__PART_OPS(bits, type, ptrfn)                                        \
static inline type qa_u##bits##_read(uint32_t *w, unsigned shift)              \
{ return qa_read(ptrfn(w, shift)); }                                           \
static inline type qa_u##bits##_read_acquire(uint32_t *w, unsigned shift)      \
{ return qa_read_acquire(ptrfn(w, shift)); }                                   \
static inline void qa_u##bits##_write(uint32_t *w, unsigned shift, type v)     \
{ qa_write(ptrfn(w, shift), v); }                                              \
static inline void qa_u##bits##_write_release(uint32_t *w, unsigned shift,     \
					      type v)                          \
{ qa_write_release(ptrfn(w, shift), v); }                                      \
static inline type qa_u##bits##_xchg_relaxed(uint32_t *w, unsigned shift,      \
					     type v)                           \
{ return qa_xchg_relaxed(ptrfn(w, shift), v); }                                \
static inline type qa_u##bits##_xchg(uint32_t *w, unsigned shift, type v)      \
{ return qa_xchg(ptrfn(w, shift), v); }                                        \
static inline type qa_u##bits##_cmpxchg_relaxed(uint32_t *w, unsigned shift,   \
						type o, type n)                \
{ return qa_cmpxchg_relaxed(ptrfn(w, shift), o, n); }                          \
static inline type qa_u##bits##_cmpxchg_acquire(uint32_t *w, unsigned shift,   \
						type o, type n)                \
{ return qa_cmpxchg_acquire(ptrfn(w, shift), o, n); }                          \
static inline type qa_u##bits##_cmpxchg_release(uint32_t *w, unsigned shift,   \
						type o, type n)                \
{ return qa_cmpxchg_release(ptrfn(w, shift), o, n); }

#else /* QLOCK_WORD_ATOMICS_ONLY: the same operations on the whole word */

/*
 * Replace one part of *w, leaving the rest as it is: one cmpxchg loop.
 * Each try reads the word afresh rather than retrying with the value a
 * failed cmpxchg returned: a failed try then has no effect at all, which
 * is what model checkers' spin-loop reductions (GenMC's) assume of a loop.
 */
#define QA__WORD_SET(w, shift, mask, v, order_s, order_f) __extension__({      \
	uint32_t qa__o;                                                        \
	do {                                                                   \
		qa__o = qa_read(w);                                            \
	} while (!qa__try_cmpxchg((w), &qa__o,                                 \
				  qa__with_part(qa__o, shift, mask, v),        \
				  order_s, order_f));                          \
	qa__o;                                                                 \
})

/* Compare one part of *w with o and replace it by n, as a part cmpxchg. */
#define QA__WORD_CMPXCHG(w, shift, mask, o, n, order_s, order_f) __extension__({ \
	uint32_t qa__o;                                                          \
	uint32_t qa__r;                                                          \
	for (;;) {                                                               \
		qa__o = qa_read(w);                                              \
		qa__r = qa__part(qa__o, shift, mask);                            \
		if (qa__r != (uint32_t)(o)) {                                    \
			qc_model_step();                                         \
			break;                                                   \
		}                                                                \
		if (qa__try_cmpxchg((w), &qa__o,                                 \
				    qa__with_part(qa__o, shift, mask, n),        \
				    order_s, order_f))                           \
			break;                                                   \
	}                                                                        \
	qa__r;                                                                   \
})

#define QA__PART_OPS(bits, type, ptrfn)                                        \
static inline type qa_u##bits##_read(uint32_t *w, unsigned shift)              \
{ return (type)qa__part(qa_read(w), shift, (type)~0u); }                       \
static inline type qa_u##bits##_read_acquire(uint32_t *w, unsigned shift)      \
{ return (type)qa__part(qa_read_acquire(w), shift, (type)~0u); }               \
static inline void qa_u##bits##_write(uint32_t *w, unsigned shift, type v)     \
{ (void)QA__WORD_SET(w, shift, (type)~0u, v, __ATOMIC_RELAXED,                 \
		     __ATOMIC_RELAXED); }                                      \
static inline void qa_u##bits##_write_release(uint32_t *w, unsigned shift,     \
					      type v)                          \
{ (void)QA__WORD_SET(w, shift, (type)~0u, v, __ATOMIC_RELEASE,                 \
		     __ATOMIC_RELAXED); }                                      \
static inline type qa_u##bits##_xchg_relaxed(uint32_t *w, unsigned shift,      \
					     type v)                           \
{ return (type)qa__part(QA__WORD_SET(w, shift, (type)~0u, v,                   \
				      __ATOMIC_RELAXED, __ATOMIC_RELAXED),     \
			shift, (type)~0u); }                                   \
static inline type qa_u##bits##_xchg(uint32_t *w, unsigned shift, type v)      \
{ return (type)qa__part(QA__WORD_SET(w, shift, (type)~0u, v,                   \
				      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST),     \
			shift, (type)~0u); }                                   \
static inline type qa_u##bits##_cmpxchg_relaxed(uint32_t *w, unsigned shift,   \
						type o, type n)                \
{ return (type)QA__WORD_CMPXCHG(w, shift, (type)~0u, o, n,                     \
				__ATOMIC_RELAXED, __ATOMIC_RELAXED); }         \
static inline type qa_u##bits##_cmpxchg_acquire(uint32_t *w, unsigned shift,   \
						type o, type n)                \
{ return (type)QA__WORD_CMPXCHG(w, shift, (type)~0u, o, n,                     \
				__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE); }         \
static inline type qa_u##bits##_cmpxchg_release(uint32_t *w, unsigned shift,   \
						type o, type n)                \
{ return (type)QA__WORD_CMPXCHG(w, shift, (type)~0u, o, n,                     \
				__ATOMIC_RELEASE, __ATOMIC_RELAXED); }

#endif /* QLOCK_WORD_ATOMICS_ONLY */

/*
 * qa_u8_read(w, shift), qa_u8_write_release(w, shift, v),
 * qa_u16_xchg_relaxed(w, shift, v), qa_u16_xchg(w, shift, v) (fully ordered), qa_u8_cmpxchg_acquire(w, shift, o, n), ...
 * `shift` is 0, 8, 16 or 24 for bytes and 0 or 16 for halfwords.
 */
QA__PART_OPS(8, uint8_t, qa__u8p)
QA__PART_OPS(16, uint16_t, qa__u16p)

#endif /* QLOCK_CORE_ATOMIC_H */
