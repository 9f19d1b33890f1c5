#!/bin/sh
# SPDX-License-Identifier: MIT
# The drop-in runs its locks with its own hand-off default (1 ms, shim/config.c)
# unless QLOCK_HANDOFF_NS says otherwise.
#   handoff_default.sh SHIM SHIM_API
set -u
shim=$1 api=$2
got=$(env -u QLOCK_HANDOFF_NS LD_PRELOAD="$shim" "$api" handoff)
[ "$got" = 1000000 ] || { echo "FAIL: default hand-off $got ns, want 1000000"; exit 1; }
got=$(QLOCK_HANDOFF_NS=4000000 LD_PRELOAD="$shim" "$api" handoff)
[ "$got" = 4000000 ] || { echo "FAIL: QLOCK_HANDOFF_NS=4000000 gave $got"; exit 1; }
got=$(QLOCK_HANDOFF_NS=0 LD_PRELOAD="$shim" "$api" handoff)
[ "$got" = 0 ] || { echo "FAIL: QLOCK_HANDOFF_NS=0 gave $got"; exit 1; }
echo "drop-in hand-off: 1 ms by default, the environment's value when set"
