#!/bin/sh
# SPDX-License-Identifier: MIT
# Prove that every symbol version a program references is interposed:
# with LD_BIND_NOW the dynamic linker resolves all references at start-up
# and LD_DEBUG=bindings names the object each one bound to.
#   bindings.sh SHIM PROGRAM [ARGS...]
set -u
shim=$1; shift
out=$(LD_BIND_NOW=1 LD_DEBUG=bindings LD_PRELOAD="$shim" "$@" 2>&1 >/dev/null |
      grep -E "binding file [^ ]*$(basename "$1") \[0\]" |
      grep -E "symbol \`(__)?pthread_(mutex|rwlock|cond|spin)_(init|destroy|lock|trylock|timedlock|clocklock|unlock|rdlock|tryrdlock|timedrdlock|clockrdlock|wrlock|trywrlock|timedwrlock|clockwrlock|wait|timedwait|clockwait|signal|broadcast)'")
[ -n "$out" ] || { echo "FAIL: no pthread bindings seen"; exit 1; }
echo "$out" | sed 's/.*to \([^ ]*\) .*symbol `\([^'"'"']*\)'"'"' \[\(.*\)\]/\2@\3 -> \1/' | sort -u
bad=$(echo "$out" | grep -v "libqlock-pthread")
if [ -n "$bad" ]; then echo "FAIL: not interposed:"; echo "$bad"; exit 1; fi
echo "all $(echo "$out" | wc -l) pthread lock bindings go to libqlock-pthread.so"
