/* SPDX-License-Identifier: MIT */
/*
 * Misuse that a lock can detect cheaply (unlocking a lock that is not
 * held, ...) is a bug in the caller that would otherwise corrupt the lock
 * or hang a later thread.  qc_misuse() reports it to the handler installed
 * with qlock_set_misuse_handler() (include/qlock/qlock.h); the default one
 * prints a line on stderr and aborts.  When an installed handler returns,
 * so does qc_misuse(): the caller then leaves the lock as it found it and
 * returns (with EPERM where its API has an error code), except for the
 * release of a mutex or spinlock held by another thread, which proceeds.
 */
#ifndef QLOCK_CORE_MISUSE_H
#define QLOCK_CORE_MISUSE_H

__attribute__((cold)) void qc_misuse(const char *fn, const char *what,
				     const void *lock);

#endif /* QLOCK_CORE_MISUSE_H */
