#!/bin/sh
# SPDX-License-Identifier: MIT
# The condvar's FUTEX_WAKEs, from the drop-in's verbose counters, must not
# outnumber its sleeps (cond_wakes.c: signals sent while the woken waiter
# is still on its way out wake nobody and must make no system call).
#   cond_wakes.sh SHIM PROGRAM
set -u
shim=$1 prog=$2
out=$(QLOCK_STATS=1 QLOCK_VERBOSE=1 LD_PRELOAD="$shim" "$prog" 2>&1) || {
  echo "FAIL: program exit"; echo "$out"; exit 1; }
line=$(echo "$out" | grep '^libqlock-pthread: other ')
waits=$(echo "$line" | sed -n 's/.*futex_wait\[other\]=\([0-9]*\).*/\1/p')
wakes=$(echo "$line" | sed -n 's/.*futex_wake\[other\]=\([0-9]*\).*/\1/p')
echo "condvar sleeps ${waits:-none}, FUTEX_WAKEs ${wakes:-none}"
if [ -z "$waits" ] || [ -z "$wakes" ]; then
  echo "FAIL: no condvar counters in the report:"; echo "$out"; exit 1
fi
if [ "$wakes" -gt "$waits" ]; then
  echo "FAIL: more FUTEX_WAKEs than sleeps"; exit 1
fi
echo ok
