#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the qlock.hpp test with another C++ compiler, C++17 and C++20,
# warnings as errors, against the built static library; run each.
#   other_cxx.sh CXX TEST.cpp INCLUDE_DIR LIBQLOCK.a OUTDIR PROJECT_CXX ["SANITIZER FLAGS"]
# Under a sanitizer (TSan, or ASan+UBSan) the test is compiled by CXX but
# linked by the project's C++ compiler: the library's instrumentation
# calls that compiler's runtime (both runtimes are compiler-rt; clang's
# may not even be installed).
set -eu
cxx=$1 src=$2 inc=$3 lib=$4 out=$5 project_cxx=$6 san=${7:-}
mkdir -p "$out"
linker=$cxx
[ -n "$san" ] && linker=$project_cxx
for std in c++17 c++20; do
	exe="$out/qlock_hpp_$std"
	"$cxx" -std=$std -Wall -Wextra -Werror -pedantic -O1 -g $san \
		-I"$inc" -c -o "$exe.o" "$src"
	"$linker" $san -o "$exe" "$exe.o" "$lib" -pthread
	echo "$(basename "$cxx") -std=$std $san (linked by $(basename "$linker")):"
	"$exe"
done
