#!/bin/sh
# Every symbol the libraries define for others must be public API
# (qlock_*): the dynamic symbols of libqlock.so, and the global symbols of
# libqlock.a's members, which a static link merges with the program's own
# names (an internal qc_futex_wait there would clash with a program's).
#   exported_symbols.sh libqlock.so [libqlock.a]
set -eu
lib=$1
archive=${2:-}
status=0
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBRVW]/ {print $3}' |
	grep -v -E '^(qlock_|_init$|_fini$|_edata$|_end$|__bss_start$)' || true)
if [ -n "$bad" ]; then
	echo "non-qlock_ symbols exported from $lib:"
	echo "$bad"
	status=1
else
	echo "exported: $(nm -D --defined-only "$lib" | awk '$3 ~ /^qlock_/' | wc -l) qlock_ symbols, nothing else"
fi
if [ -n "$archive" ]; then
	# Global (upper-case) definitions, common symbols included.
	bad=$(nm --defined-only "$archive" 2>/dev/null |
		awk 'NF == 3 && $2 ~ /^[A-Z]$/ {print $3}' | sort -u |
		grep -v -E '^qlock_' || true)
	if [ -n "$bad" ]; then
		echo "non-qlock_ global symbols in $archive ($(echo "$bad" | wc -l)):"
		echo "$bad" | head -n 20
		status=1
	else
		echo "archive: $(nm --defined-only "$archive" | awk 'NF == 3 && $2 ~ /^[A-Z]$/ && $3 ~ /^qlock_/' | sort -u | wc -l) global qlock_ symbols, nothing else"
	fi
fi
exit $status
