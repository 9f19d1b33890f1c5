#!/bin/sh
# Cross-build the whole suite for big-endian s390x and weakly ordered
# aarch64 with Debian's cross gcc and run it under qemu-user.
#   test-cross.sh [ARCH...]        default: s390x aarch64
# An architecture whose tools are missing is reported in one line (not a
# failure: scripts/install-deps.sh --cross installs them).  Tests that
# run their target binary from a host-side script, not through the
# emulator, are named in one line and not run.
# Environment: JOBS, CMAKE_FLAGS (extra cmake flags; make test-cross
# passes -DQLOCK_WERROR=ON).
set -u
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
rc=0
for arch in ${*:-s390x aarch64}; do
	triple=$arch-linux-gnu
	if ! command -v "$triple-gcc" >/dev/null 2>&1 ||
	   ! command -v "qemu-$arch-static" >/dev/null 2>&1 ||
	   [ ! -e "/usr/$triple/lib/libc.so.6" ]; then
		echo "test-cross: $arch NOT TESTED: needs $triple-gcc, qemu-$arch-static and /usr/$triple (scripts/install-deps.sh --cross)"
		continue
	fi
	dir=build-$arch
	start=$(date +%s)
	if ! cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="cmake/toolchain-$arch.cmake" \
		-DQLOCK_WITH_CK=OFF ${CMAKE_FLAGS:-} >/dev/null ||
	   ! cmake --build "$dir" -j "$jobs" >/dev/null; then
		echo "test-cross: $arch: build FAILED"; rc=1; continue
	fi
	host=$(ctest --test-dir "$dir" -N -V |
	       awk '/Test command:/ { emu = ($0 ~ /qemu-/) }
		    /^ *Test +#[0-9]+:/ { if (!emu) print $3 }')
	echo "test-cross: $arch: not run (host-side script execs the target binary):" $host
	skip=$(printf '%s\n' $host | sed 's/[].[*+?()|^$\\]/\\&/g' | paste -sd '|' -)
	if ! ctest --test-dir "$dir" -j "$jobs" --output-on-failure ${skip:+-E "^($skip)\$"}; then
		rc=1
	fi
	echo "test-cross: $arch done in $(( $(date +%s) - start )) s"
done
exit $rc
