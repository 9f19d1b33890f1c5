#!/bin/sh
# Every symbol libqlock.so defines for others must be public API (qlock_*).
set -eu
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBRVW]/ {print $3}' |
	grep -v -E '^(qlock_|_init$|_fini$|_edata$|_end$|__bss_start$)' || true)
if [ -n "$bad" ]; then
	echo "non-qlock_ symbols exported from $lib:"
	echo "$bad"
	exit 1
fi
echo "exported: $(nm -D --defined-only "$lib" | awk '$3 ~ /^qlock_/' | wc -l) qlock_ symbols, nothing else"
