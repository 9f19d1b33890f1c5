#!/bin/sh
# SPDX-License-Identifier: MIT
# Run a program without and with the shim preloaded; outputs must match.
#   compare.sh SHIM PROGRAM [ARGS...]
# The preloaded run must really be served by qlock (checked with the
# api program's `which` mode when the program is `api`).
set -u
shim=$1; shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$@" > "$tmp/plain" 2> "$tmp/plain.err"; rc1=$?
LD_PRELOAD="$shim" "$@" > "$tmp/shim" 2> "$tmp/shim.err"; rc2=$?
if [ "$(basename "$1")" = api ]; then
  w=$(LD_PRELOAD="$shim" "$1" which)
  echo "served by: $w"
  case $w in qlock*) ;; *) echo "FAIL: the shim is not serving the calls"; exit 1;; esac
fi
echo "plain exit $rc1, preloaded exit $rc2, $(wc -l < "$tmp/plain") lines"
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
  echo "FAIL: non-zero exit"; cat "$tmp/plain.err" "$tmp/shim.err"; exit 1
fi
if ! diff -u "$tmp/plain" "$tmp/shim"; then
  echo "FAIL: output differs with the shim preloaded"; exit 1
fi
echo "identical"
