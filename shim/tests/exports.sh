#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim exports only pthread_* (and glibc's __pthread_mutex_* /
# __pthread_rwlock_* aliases), qlock_* symbols and the calls that leave
# the CPU (sched_yield, nanosleep, clock_nanosleep, usleep, sleep), all
# unversioned.
set -u
syms=$(nm -D --defined-only "$1" | awk '{print $3}')
bad=$(echo "$syms" | grep -Ev '^(pthread_|__pthread_(mutex|rwlock)_|qlock_|sched_yield$|nanosleep$|clock_nanosleep$|usleep$|sleep$|thrd_yield$)')
[ -z "$bad" ] || { echo "FAIL: unexpected exports:"; echo "$bad"; exit 1; }
for s in pthread_mutex_lock pthread_mutex_clocklock pthread_rwlock_clockwrlock \
         pthread_cond_clockwait pthread_cond_wait pthread_spin_trylock; do
  echo "$syms" | grep -qx "$s" || { echo "FAIL: $s not exported"; exit 1; }
done
ver=$(objdump -T "$1" | grep -v UND | grep -E ' (pthread_|__pthread_|qlock_|sched_yield|nanosleep|clock_nanosleep|usleep|sleep|thrd_yield)' | grep -v ' Base ')
[ -z "$ver" ] || { echo "FAIL: versioned exports:"; echo "$ver"; exit 1; }
echo "$(echo "$syms" | wc -l) exports, all pthread_/qlock_/off-CPU calls, unversioned"
