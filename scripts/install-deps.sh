#!/bin/sh
# Install what qlock can use beyond gcc, cmake and make, on Debian/Ubuntu.
#   --optional   libck-dev, libabsl-dev, libtbb-dev and g++ (Concurrency Kit,
#                absl::Mutex and oneTBB baselines for lockbench),
#                python3-matplotlib (the plots of the `make bench` report)
#   --ci         also clang-14 (the warning-free clang build check) and
#                the --cross tools
#   --cross      s390x and aarch64 cross gcc, g++ and libc, qemu-user-static
#                (make test-cross)
#   --peers      the other projects' suites and programs that make test-peers
#                runs under the drop-in: GLib's installed tests, CPython's
#                test modules, Ruby, Node.js, stress-ng and the threaded
#                compressors (Perl is already there)
# Best effort: without root or apt-get, or offline, it says so and exits 0,
# and the build simply goes without the optional parts.
set -u
pkgs="libck-dev libabsl-dev libtbb-dev g++ python3-matplotlib"
cross="gcc-s390x-linux-gnu g++-s390x-linux-gnu libc6-dev-s390x-cross gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
[ "${1:-}" = "--ci" ] && pkgs="$pkgs clang-14 $cross"
[ "${1:-}" = "--cross" ] && pkgs="$cross"
[ "${1:-}" = "--peers" ] && pkgs="libglib2.0-tests python3.11 libpython3.11-testsuite perl ruby nodejs stress-ng xz-utils pigz zstd pbzip2"

missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: not root or no apt-get; going without:$missing" >&2
	exit 0
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! timeout 300 apt-get install -y -qq $missing >/dev/null 2>&1; then
	timeout 300 apt-get update -qq >/dev/null 2>&1
	timeout 300 apt-get install -y -qq $missing >/dev/null 2>&1 ||
		echo "install-deps: could not install$missing; going without" >&2
fi
exit 0
