#!/bin/bash
# SPDX-License-Identifier: MIT
# Run the Open POSIX Test Suite's pthread mutex/rwlock/cond conformance
# tests (LTP, GPL: not part of qlock, not run by CI) without and with the
# drop-in, and list the results side by side.
#   opts.sh LTP_SOURCE_DIR SHIM [JOBS]
# e.g. git clone https://github.com/linux-test-project/ltp /tmp/ltp
#      shim/tests/opts.sh /tmp/ltp build/shim/libqlock-pthread.so
# Exit codes of the suite: 0 PASS, 1 FAIL, 2 UNRESOLVED, 4 UNSUPPORTED,
# 5 UNTESTED; 124 = killed after 90 s.
set -u
ltp=$(cd "$1" && pwd) shim=$(realpath "$2") jobs=${3:-3}
suite=$ltp/testcases/open_posix_testsuite
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/log" "$work/run"
cc -w -O1 -I"$suite/include" -c -o "$work/common.o" "$suite/lib/common.c" || exit 1

one() { # DIR/N-M.c -> "name plain_rc shim_rc"
	local c=$1 d n libs a b
	d=$(dirname "$c"); n=${d}_$(basename "$c" .c)
	libs=$(cat "$d/LDLIBS" 2>/dev/null)
	if ! cc -w -O1 -D_GNU_SOURCE -I"$suite/include" -pthread -o "$work/bin/$n" \
		"$c" "$work/common.o" $libs -lrt 2> "$work/log/$n.build"; then
		echo "$n build-fail -"; return
	fi
	mkdir -p "$work/run/$n" && cd "$work/run/$n" || return
	timeout 90 "$work/bin/$n" > "$work/log/$n.plain" 2>&1; a=$?
	LD_PRELOAD=$shim timeout 90 "$work/bin/$n" > "$work/log/$n.shim" 2>&1; b=$?
	echo "$n $a $b"
}
export -f one
export suite work shim
cd "$suite/conformance/interfaces" || exit 1
ls pthread_mutex*/*.c pthread_rwlock*/*.c pthread_cond*/*.c |
	xargs -P "$jobs" -I{} bash -c 'one {}' | sort > "$work/results"
echo "test glibc drop-in"
cat "$work/results"
awk '{ n++; g += $2 == 0; s += $3 == 0; if ($2 == 0 && $3 != 0) worse++ }
     END { printf "%d tests: glibc passes %d, the drop-in %d; ", n, g, s
	   printf "passing under glibc but not the drop-in: %d\n", worse
	   exit worse != 0 }' "$work/results"
