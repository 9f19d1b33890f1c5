#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the qlock.hpp test with another C++ compiler, C++17 and C++20,
# warnings as errors, against the built static library; run each.
#   other_cxx.sh CXX TEST.cpp INCLUDE_DIR LIBQLOCK.a OUTDIR [EXTRA_FLAGS]
set -eu
cxx=$1 src=$2 inc=$3 lib=$4 out=$5 extra=${6:-}
mkdir -p "$out"
for std in c++17 c++20; do
	exe="$out/qlock_hpp_$std"
	"$cxx" -std=$std -Wall -Wextra -Werror -pedantic -O1 -g $extra \
		-I"$inc" -o "$exe" "$src" "$lib" -pthread
	echo "$(basename "$cxx") -std=$std $extra:"
	"$exe"
done
