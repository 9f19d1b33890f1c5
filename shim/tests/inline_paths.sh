#!/bin/sh
# SPDX-License-Identifier: MIT
# The lock entry points' inline paths make no call: the helpers they
# expand (the algorithms' one-RMW paths, the statistics' count and pop)
# must not exist as functions of their own in the shim.  A compiler that
# outlines one (as it may once a helper has several call sites) turns
# every uncontended lock call into a call.  Needs the symbol table: a
# stripped library is skipped (exit 77).
set -u
syms=$(nm "$1" 2>/dev/null | awk '$2 == "t" || $2 == "T" {print $3}')
echo "$syms" | grep -qx mutex_acquire || { echo "no symbol table: skipped"; exit 77; }
bad=$(echo "$syms" | grep -E '^(rw_(rd|wr)lock_fast_alg|rw_unlock_fast_alg|rw_unlock_fast_qrwlock|mutex_lock_tp|mutex_unlock_tp|mutex_lock_fast(_counted)?|mutex_unlock_fast|rw_(rd|wr)?lock_fast(_counted)?|lockstat_acquired|lockstat_release|pf_count_hit|pf_push)(\.[a-z]+\.[0-9]+)?$')
[ -z "$bad" ] || { echo "FAIL: inline helpers compiled as functions:"; echo "$bad"; exit 1; }
echo "the inline paths' helpers are all expanded in the entry points"
