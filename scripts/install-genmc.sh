#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build and install the GenMC model checker, version 0.10.3, with LLVM 14:
# the checker `make modelcheck` (and `make test`) runs on tests/model
# (docs/testing.md).  GenMC is a tool (GPL-3), not a dependency of qlock.
#
#   scripts/install-genmc.sh [--dry-run] [--prefix DIR] [--jobs N] [SOURCE]
#
# SOURCE is a GenMC 0.10.3 source tree, or its release tarball; it is
# built in a scratch copy, never in place.  Without SOURCE the tag v0.10.3
# is cloned from https://github.com/MPI-SWS/genmc (needs git and network).
# GenMC 0.11 and later need GCC 13 or newer, hence 0.10.3 on Debian 12.
#
# Build dependencies (Debian 12 packages): g++ make autoconf automake
# llvm-14-dev clang-14 libclang-14-dev libffi-dev zlib1g-dev libedit-dev
# (and git to clone).  Run as root, the script installs the missing ones
# with apt-get; otherwise it names them and stops.
#
#   --prefix DIR   install into DIR/bin/genmc (default /usr/local; a
#                  prefix you can write to needs no root once the
#                  dependencies are there)
#   --jobs N       parallel make jobs (default: the number of CPUs)
#   --dry-run      check the arguments and print every step, change nothing
#
# Does nothing when DIR/bin/genmc is already 0.10.3.  About 3-6 minutes on
# 2 CPUs.  Exit status 0 when installed, 1 on any failure (with one line
# saying what failed and, for a build error, the end of the build log), 2
# for bad usage.
set -euo pipefail

me=install-genmc.sh
version=0.10.3
repo=https://github.com/MPI-SWS/genmc
tag=v$version
llvm=14
deps="g++ make autoconf automake llvm-$llvm-dev clang-$llvm libclang-$llvm-dev libffi-dev zlib1g-dev libedit-dev"

usage() { sed -n '/^#   scripts/,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p;}' "$0"; }
die() { echo "$me: $*" >&2; exit 1; }
bad_usage() { echo "$me: $* (see $me --help)" >&2; exit 2; }

prefix=/usr/local
jobs=$(nproc 2>/dev/null || echo 2)
dry=
src=
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--prefix) [ $# -ge 2 ] || bad_usage "--prefix needs a directory"
		prefix=$2; shift ;;
	--prefix=*) prefix=${1#*=} ;;
	--jobs|-j) [ $# -ge 2 ] || bad_usage "$1 needs a number"
		jobs=$2; shift ;;
	--jobs=*) jobs=${1#*=} ;;
	-h|--help) usage; exit 0 ;;
	-*) bad_usage "unknown option $1" ;;
	*) [ -z "$src" ] || bad_usage "one SOURCE only ($src, then $1)"
		src=$1 ;;
	esac
	shift
done
case $jobs in ''|*[!0-9]*|0) bad_usage "--jobs $jobs: not a positive number" ;; esac
[ -n "$prefix" ] || bad_usage "--prefix: empty directory name"
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

# step CMD...: print it, and run it unless --dry-run.
step() {
	echo "+ $*"
	[ -n "$dry" ] || "$@"
}
[ -n "$dry" ] && echo "$me: dry run: nothing is changed"

# ---- the source ----------------------------------------------------------------
# A source tree must say it is GenMC 0.10.3 (configure.ac's AC_INIT).
check_tree() {
	local ac=$1/configure.ac
	[ -f "$ac" ] || die "$1: not a GenMC source tree (no configure.ac)"
	local v
	v=$(sed -n 's/^AC_INIT(\[GenMC\], *\[\([^]]*\)\].*/\1/p' "$ac")
	[ -n "$v" ] || die "$1: not a GenMC source tree (configure.ac has no AC_INIT([GenMC], ...))"
	[ "$v" = "$version" ] || die "$1: GenMC $v, this script builds $version (later versions need GCC >= 13)"
}
kind=clone
if [ -n "$src" ]; then
	if [ -d "$src" ]; then
		kind=tree
		check_tree "$src"
	elif [ -f "$src" ]; then
		case $src in
		*.tar.xz|*.tar.gz|*.tgz|*.tar.bz2|*.tar) kind=tarball ;;
		*) die "$src: neither a source directory nor a tarball (.tar.xz, .tar.gz, .tar.bz2, .tar)" ;;
		esac
		tar -tf "$src" >/dev/null 2>&1 || die "$src: not a readable tar archive"
	else
		die "$src: no such directory or file"
	fi
	src=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
fi

# ---- already there? ----------------------------------------------------------
if "$prefix/bin/genmc" --version 2>/dev/null | grep -q "v$version"; then
	echo "$me: GenMC $version already installed: $prefix/bin/genmc"
	exit 0
fi

# ---- build dependencies ----------------------------------------------------------
need=$deps
[ "$kind" = clone ] && need="$need git"
missing=
if command -v dpkg >/dev/null 2>&1; then
	for p in $need; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
else
	# Not Debian: check for the programs instead of the packages.
	for c in g++ make autoreconf automake "llvm-config-$llvm" "clang-$llvm"; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	[ "$kind" = clone ] && ! command -v git >/dev/null 2>&1 && missing="$missing git"
	[ -z "$missing" ] || [ -n "$dry" ] ||
		die "missing:$missing (not a Debian system: install LLVM/clang $llvm with its development files, libffi, zlib and libedit by hand)"
fi
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "$me: installing the build dependencies:$missing"
		export DEBIAN_FRONTEND=noninteractive
		step apt-get update -q || die "apt-get update failed"
		# shellcheck disable=SC2086  # one word per package
		step apt-get install -y -q --no-install-recommends $missing ||
			die "apt-get install$missing failed"
	elif [ -n "$dry" ]; then
		echo "$me: would need, as root: apt-get install$missing"
	else
		die "missing build dependencies:$missing; as root: apt-get install$missing (or run this script as root)"
	fi
fi

# ---- the prefix ----------------------------------------------------------------------
if [ -z "$dry" ] && [ "$(id -u)" != 0 ]; then
	d=$prefix
	while [ ! -e "$d" ]; do d=$(dirname "$d"); done
	[ -w "$d" ] || die "cannot write to $prefix ($d is not writable): run as root or give --prefix DIR"
fi

# ---- build in a scratch directory ------------------------------------------------------
if [ -n "$dry" ]; then
	work='$WORK'   # printed as is
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/genmc-build.XXXXXX")
fi
tree=$work/genmc-$version
log=$work/build.log
case $kind in
tree)
	step cp -R "$src" "$tree" || die "cannot copy $src to $tree" ;;
tarball)
	step mkdir -p "$tree"
	step tar -xf "$src" -C "$tree" --strip-components=1 ||
		die "cannot unpack $src"
	[ -n "$dry" ] || check_tree "$tree" ;;
clone)
	echo "$me: no SOURCE given: cloning $repo at $tag"
	if ! step timeout 300 git clone -q --depth 1 --branch "$tag" "$repo" "$tree"; then
		rm -rf "$work"
		die "cannot clone $repo ($tag): no network, or no access? Get the GenMC $version source elsewhere and pass its directory or tarball: $me SOURCE"
	fi
	[ -n "$dry" ] || check_tree "$tree" ;;
esac

if [ -n "$dry" ]; then
	llvm_prefix="\$(llvm-config-$llvm --prefix)"
else
	command -v "llvm-config-$llvm" >/dev/null 2>&1 ||
		die "llvm-config-$llvm not found (package llvm-$llvm-dev)"
	llvm_prefix=$(llvm-config-"$llvm" --prefix)
fi
echo "$me: building GenMC $version in $tree (log: $log; 3-6 minutes)"
build() {
	cd "$tree" &&
	step autoreconf --install &&
	step ./configure --prefix="$prefix" --with-llvm="$llvm_prefix" &&
	step make -j"$jobs" &&
	step make install
}
if [ -n "$dry" ]; then
	echo "+ cd $tree"
	step autoreconf --install
	step ./configure --prefix="$prefix" --with-llvm="$llvm_prefix"
	step make -j"$jobs"
	step make install
	echo "$me: dry run done; then $prefix/bin/genmc --version names $tag"
	exit 0
fi
if ! (build) >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "GenMC build failed (whole log: $log; the scratch directory $work is kept)"
fi
"$prefix/bin/genmc" --version | head -n 2
"$prefix/bin/genmc" --version 2>/dev/null | grep -q "v$version" ||
	die "$prefix/bin/genmc does not report $tag (log: $log)"
rm -rf "$work"
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*) echo "$me: note: $prefix/bin is not on PATH; make modelcheck looks for genmc there" ;;
esac
echo "$me: GenMC $version installed: $prefix/bin/genmc"
