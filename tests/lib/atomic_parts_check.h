/* SPDX-License-Identifier: MIT */
/*
 * Checks of the byte/halfword operations on parts of a 32-bit word,
 * shared by test_core_atomic.c (native part access) and
 * test_core_atomic_word.c (QLOCK_WORD_ATOMICS_ONLY): include after
 * core/atomic.h.  Both modes must give the same results.
 */
#ifndef QLOCK_TESTS_ATOMIC_PARTS_CHECK_H
#define QLOCK_TESTS_ATOMIC_PARTS_CHECK_H

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* The endian index math: the byte/halfword the ops address is the one
 * holding bits [shift, shift + width) of the value, whatever the byte
 * order.  Checked against the host's actual memory layout. */
static void check_part_index_math(void)
{
	for (unsigned shift = 0; shift < 32; shift += 8) {
		uint32_t w = 0xabu << shift;
		uint8_t bytes[4];

		memcpy(bytes, &w, 4);
		assert(bytes[qa__u8_index(shift)] == 0xab);
	}
	for (unsigned shift = 0; shift < 32; shift += 16) {
		uint32_t w = 0xbeefu << shift;
		uint16_t halves[2];

		memcpy(halves, &w, 4);
		assert(halves[qa__u16_index(shift)] == 0xbeef);
	}
	/* The formula for the other byte order, by hand. */
	assert((QA_BIG_ENDIAN ? 3 - 8 / 8 : 8 / 8) == qa__u8_index(8));
}

static void check_part_ops_single(void)
{
	uint32_t w = 0x11223344;

	assert(qa_u8_read(&w, 0) == 0x44);
	assert(qa_u8_read(&w, 8) == 0x33);
	assert(qa_u8_read_acquire(&w, 16) == 0x22);
	assert(qa_u8_read(&w, 24) == 0x11);
	assert(qa_u16_read(&w, 0) == 0x3344);
	assert(qa_u16_read_acquire(&w, 16) == 0x1122);

	qa_u8_write(&w, 0, 0x01);
	assert(w == 0x11223301);
	qa_u8_write_release(&w, 24, 0xff);
	assert(w == 0xff223301);
	qa_u16_write(&w, 0, 0xcafe);
	assert(w == 0xff22cafe);
	qa_u16_write_release(&w, 16, 0x0102);
	assert(w == 0x0102cafe);

	assert(qa_u8_xchg_relaxed(&w, 8, 0x77) == 0xca);
	assert(w == 0x010277fe);
	assert(qa_u16_xchg_relaxed(&w, 16, 0xa5a5) == 0x0102);
	assert(w == 0xa5a577fe);

	/* cmpxchg: returns the part found; changes only on a match. */
	assert(qa_u8_cmpxchg_relaxed(&w, 0, 0x00, 0x11) == 0xfe);
	assert(w == 0xa5a577fe);
	assert(qa_u8_cmpxchg_acquire(&w, 0, 0xfe, 0x11) == 0xfe);
	assert(w == 0xa5a57711);
	assert(qa_u8_cmpxchg_release(&w, 16, 0xa5, 0x5a) == 0xa5);
	assert(w == 0xa55a7711);
	assert(qa_u16_cmpxchg_acquire(&w, 0, 0x7711, 0x0000) == 0x7711);
	assert(w == 0xa55a0000);
	assert(qa_u16_cmpxchg_release(&w, 16, 0x1234, 0x0000) == 0xa55a);
	assert(w == 0xa55a0000);
	assert(qa_u16_cmpxchg_relaxed(&w, 16, 0xa55a, 0x0001) == 0xa55a);
	assert(w == 0x00010000);
}

/* Threads hammer different bytes of one word: no update may clobber a
 * neighbour (a real risk for the whole-word emulation if it were wrong). */
#define PART_ITERS 20000

struct part_arg {
	uint32_t *w;
	unsigned shift;
};

static void *bump_part(void *arg)
{
	struct part_arg *a = arg;

	for (int i = 0; i < PART_ITERS; i++) {
		uint8_t v = qa_u8_read(a->w, a->shift);

		/* Only this thread writes this byte: read-modify-write by
		 * plain part store, and an xchg / cmpxchg now and then. */
		if (i % 3 == 0)
			(void)qa_u8_xchg_relaxed(a->w, a->shift, (uint8_t)(v + 1));
		else if (i % 3 == 1)
			assert(qa_u8_cmpxchg_relaxed(a->w, a->shift, v,
						     (uint8_t)(v + 1)) == v);
		else
			qa_u8_write_release(a->w, a->shift, (uint8_t)(v + 1));
	}
	return NULL;
}

static void check_part_ops_concurrent(void)
{
	uint32_t w = 0;
	struct part_arg a[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		a[i] = (struct part_arg){ .w = &w, .shift = 8u * (unsigned)i };
		pthread_create(&t[i], NULL, bump_part, &a[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		assert(qa_u8_read(&w, 8u * (unsigned)i) == (uint8_t)PART_ITERS);
}

static void check_word_ops(void)
{
	uint32_t w = 5;
	uint32_t o = 5;

	assert(qa_xchg(&w, 7) == 5 && w == 7);
	assert(qa_cmpxchg_acquire(&w, 7, 9) == 7 && w == 9);
	assert(qa_cmpxchg_release(&w, 1, 2) == 9 && w == 9);
	assert(!qa_try_cmpxchg_relaxed(&w, &o, 1) && o == 9);
	assert(qa_try_cmpxchg(&w, &o, 1) && w == 1);
	assert(qa_fetch_or(&w, 6) == 1 && w == 7);
	assert(qa_fetch_andnot_release(&w, 2) == 7 && w == 5);
	assert(qa_fetch_add_acquire(&w, 3) == 5 && w == 8);
	assert(qa_add_return(&w, 2) == 10);
	assert(qa_fetch_sub_release(&w, 10) == 10 && w == 0);
}

static inline int run_atomic_checks(void)
{
	check_part_index_math();
	check_part_ops_single();
	check_part_ops_concurrent();
	check_word_ops();
	return 0;
}

#endif /* QLOCK_TESTS_ATOMIC_PARTS_CHECK_H */
