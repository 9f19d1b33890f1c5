#!/bin/sh
# SPDX-License-Identifier: MIT
# One version everywhere: the header's QLOCK_VERSION_STRING, qlock_version()
# of the built library, lockbench --version, the pkg-config file and the
# CMake package version file must all say the same.
#   version.sh INCLUDE_DIR LIBQLOCK.a BUILD_DIR [LOCKBENCH]
set -eu
inc=$1 lib=$2 build=$3 lockbench=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/v.c" <<'C'
#include <qlock/qlock.h>
#include <stdio.h>
int main(void) { printf("%s %s\n", QLOCK_VERSION_STRING, qlock_version()); return 0; }
C
# A sanitizer build's archive needs the same -fsanitize flags at link time.
cc -I"$inc" -o "$work/v" "$work/v.c" "$lib" -pthread ${QLOCK_CONSUMER_FLAGS:-}
set -- $("$work/v")
header=$1 runtime=$2
pc=$(sed -n 's/^Version: *//p' "$build/qlock.pc")
cm=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/qlockConfigVersion.cmake")
bench=
[ -n "$lockbench" ] && bench=$("$lockbench" --version | awk '{print $NF}')

echo "header $header, qlock_version() $runtime, qlock.pc $pc, CMake package $cm${bench:+, lockbench $bench}"
for v in "$runtime" "$pc" "$cm" ${bench:+"$bench"}; do
	if [ "$v" != "$header" ]; then
		echo "FAIL: versions disagree"
		exit 1
	fi
done
echo "one version: $header"
