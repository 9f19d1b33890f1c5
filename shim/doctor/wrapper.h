/* SPDX-License-Identifier: MIT */
/*
 * Lock wrappers: the one rule by which the lock doctor's reports decide
 * that a frame only wraps a lock call and is transparent.  lockdep names
 * a class and marks a stack's frames by it (lockdep.c), the profile names
 * a contended wait's site by it (stacks.c): in both, the first frame
 * outside wrappers is the one shown.
 *
 * A frame is a wrapper when its function (demangled and qualified; the
 * patterns and the rules below read it without its parameter list,
 * template arguments kept for the patterns and left out for the rules):
 *   - matches a pattern of QLOCK_WRAPPER, QLOCK_LOCKDEP_WRAPPER or
 *     QLOCK_PROFILE_WRAPPER (fnmatch, patterns separated by commas; one
 *     list whichever variable names them: qlock-run --wrapper=,
 *     --lockdep-wrapper=, --profile-wrapper=);
 *   - lies in the runtime: libc, libpthread, libstdc++, qlock's own
 *     libraries or a sanitizer's runtime, or is a std::, __gnu_cxx::, __gthread or pthread_
 *     function inlined elsewhere;
 *   - says "lock" as a word of its own name (lock, Lock, lock_reader,
 *     LockInternal, ReadLock, acct_lock, rdlock, spinlock; not block,
 *     clock or deadlock);
 *   - is a member of a class whose name says lock as a word or holds
 *     "mutex" (port::Mutex::Lock, MutexLock::~MutexLock,
 *     kyotocabinet::ScopedSpinRWLock::ScopedSpinRWLock), or a constructor
 *     of a class whose name holds "guard" or "spin";
 *   - is small (at most SHIM_WRAPPER_BYTES of code, when its symbol gives
 *     a size) and its name holds "mutex", or "lock" anywhere but in
 *     block, clock or deadlock (mylock, trylock_acct).
 * A frame without a function name (a stripped module with no .dynsym
 * entry for it) is never one.
 */
#ifndef QLOCK_SHIM_WRAPPER_H
#define QLOCK_SHIM_WRAPPER_H

#include <stdbool.h>
#include <stddef.h>

#define SHIM_WRAPPER_BYTES 64

/* Read the patterns from the environment (once; later calls do nothing).
 * Call at set-up, before any shim_is_wrapper(). */
void shim_wrapper_setup(void);

/* Does `func` (as the symbolizer names it: demangled, with parameters;
 * "" when unknown), `size` bytes of code (0: unknown), in the module
 * named `module` (its file name; "" unknown), only wrap a lock call? */
bool shim_is_wrapper(const char *func, unsigned long size, const char *module);

/* func's qualified name without its parameter list, template arguments
 * kept: "std::lock_guard<std::mutex>::lock_guard" (size > 0). */
void shim_func_strip_params(const char *func, char *out, size_t size);

#endif /* QLOCK_SHIM_WRAPPER_H */
