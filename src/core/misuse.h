/* SPDX-License-Identifier: MIT */
/*
 * Misuse that a lock can detect cheaply (unlocking a lock that is not
 * held, ...) is a bug in the caller that would otherwise corrupt the lock
 * or hang a later thread: report it on stderr and abort.
 */
#ifndef QLOCK_CORE_MISUSE_H
#define QLOCK_CORE_MISUSE_H

__attribute__((noreturn, cold)) void qc_misuse(const char *fn, const char *what);

#endif /* QLOCK_CORE_MISUSE_H */
