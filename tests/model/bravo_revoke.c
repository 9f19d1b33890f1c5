/* SPDX-License-Identifier: MIT */
/*
 * Model-check harness for the read bias's writer side: the program of
 * tests/model/bravo.c (the qrwlock's biased variant, a lock that starts
 * biased), with its own mutation, the writer's fence F1 dropped (the
 * store buffering shape from the writer's side: the writer misses the
 * reader's slot, the reader sees the bias still on).  Checked: variant 0
 * (the write lock, which waits for the slot to drain) and variant 2 (the
 * write trylock, which revokes without waiting).
 *
 * modelcheck: -unroll=3 variants=0,2
 */
#include "bravo.c"
