/* SPDX-License-Identifier: MIT */
/*
 * ThreadSanitizer annotations for baselines whose synchronisation TSan
 * cannot see (inline assembly, or a library built without TSan): each
 * acquire and release is announced so TSan knows the lock orders the
 * critical sections.  No-ops in other builds.
 */
#ifndef QLOCK_HARNESS_TSAN_NOTE_H
#define QLOCK_HARNESS_TSAN_NOTE_H

#if defined(__SANITIZE_THREAD__)
#define LR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LR_TSAN 1
#endif
#endif

#ifdef LR_TSAN
#include <sanitizer/tsan_interface.h>
/* Pairs with the annotation of the previous holder's release. */
#define tsan_acquired(l) __tsan_acquire(l)
#define tsan_releasing(l) __tsan_release(l)
#else
#define tsan_acquired(l) ((void)(l))
#define tsan_releasing(l) ((void)(l))
#endif

#endif /* QLOCK_HARNESS_TSAN_NOTE_H */
