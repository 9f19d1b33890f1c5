#!/bin/sh
# SPDX-License-Identifier: MIT
# QLOCK_STATS=PATH (with %p = pid) writes the drop-in's report to that file,
# also for a program that closes stderr before exit; QLOCK_STATS=1 keeps
# stderr.
#   stats_file.sh SHIM CLOSES_STDERR_PROGRAM OTHER_PROGRAM
set -u
shim=$1 prog=$2 other=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

pid=$(QLOCK_STATS="$tmp/stats.%p" LD_PRELOAD="$shim" "$prog") || fail "program exit"
f="$tmp/stats.$pid"
[ -f "$f" ] || fail "no report in $f (files: $(ls "$tmp"))"
grep -q '^libqlock-pthread: mutex=' "$f" || fail "report without the algorithm line: $(cat "$f")"
echo "QLOCK_STATS=PATH: $(wc -l < "$f") lines in stats.<pid>"

QLOCK_STATS="$tmp/plain%%p" LD_PRELOAD="$shim" "$prog" > /dev/null || fail "program exit"
[ -f "$tmp/plain%p" ] || fail "%% is not a literal %: $(ls "$tmp")"

QLOCK_STATS=1 LD_PRELOAD="$shim" "$other" 2> "$tmp/err1" > /dev/null || fail "$other exit"
grep -q '^libqlock-pthread: mutex=' "$tmp/err1" || fail "QLOCK_STATS=1 printed nothing on stderr"
echo "QLOCK_STATS=1: report on stderr"
echo ok
