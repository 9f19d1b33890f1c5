#!/bin/sh
# Install the built tree into a scratch prefix, then build and run a tiny
# consumer against it twice: with find_package(qlock) and with pkg-config.
set -eu
build=$1      # qlock build directory
src=$2        # this directory
work=$3       # scratch directory
# A sanitizer build's archive needs the same -fsanitize flags at link time.
extra=${QLOCK_CONSUMER_FLAGS:-}
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

echo "== find_package(qlock)"
cmake -S "$src/project" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$work/cmake-build/consumer_shared"
"$work/cmake-build/consumer_static"

echo "== pkg-config qlock"
pcdir=$(dirname "$(find "$prefix" -name qlock.pc | head -n 1)")
if command -v pkg-config >/dev/null 2>&1; then
	flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs qlock)
	static_flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --cflags --libs qlock)
else
	# No pkg-config on this machine: expand the .pc file by hand.
	pc="$pcdir/qlock.pc"
	eval "$(sed -n 's/^\([a-z_]*\)=\(.*\)$/\1="\2"/p' "$pc")"
	flags=$(eval echo "$(sed -n 's/^Cflags: //p' "$pc") $(sed -n 's/^Libs: //p' "$pc")")
	static_flags="$flags $(eval echo "$(sed -n 's/^Libs.private: //p' "$pc")")"
fi
cc -o "$work/pc_shared" "$src/project/consumer.c" $flags $extra
LD_LIBRARY_PATH="$prefix/lib" "$work/pc_shared"
cc -static -o "$work/pc_static" "$src/project/consumer.c" $static_flags $extra 2>/dev/null ||
	cc -o "$work/pc_static" "$src/project/consumer.c" -I"$prefix/include" "$(find "$prefix" -name libqlock.a | head -n 1)" -pthread $extra
"$work/pc_static"

echo "== libqlock.a beside a program's own qc_* names"
cc -o "$work/clash" "$src/project/clash.c" -I"$prefix/include" \
	"$(find "$prefix" -name libqlock.a | head -n 1)" -pthread $extra
"$work/clash"
echo "consumer: all ok"
