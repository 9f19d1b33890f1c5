#!/bin/sh
# `make bench-apps`: build quietly (the log is shown only when the build
# fails), then run the application benchmark (bench/apps/bench_apps.py,
# docs/bench-apps.md): real programs under glibc and under the pthread
# drop-in, interleaved, with a glibc A/A control.  The driver installs the
# Debian packages it needs when it can (apt-get as root) and skips each
# program still missing with one line.
#   sh scripts/bench-apps.sh [DRIVER ARGS]     e.g. --quick, --all-algorithms
# Writes $BUILD_DIR/bench-apps.json (which the next `make bench` report
# shows) and $BUILD_DIR/bench-apps.txt (the summary table, also printed).
# Environment: BUILD_DIR (build), JOBS, BUILD_TYPE, CMAKE_FLAGS,
# QLOCK_PYTHON (the interpreter; default /usr/bin/python3, else python3).
set -u
build_dir=${BUILD_DIR:-build}
# SQLite's headers, for bench/apps/sqlite_threads, before configuring; the
# driver installs the programs' own packages.
if ! dpkg -s libsqlite3-dev >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "bench-apps: installing libsqlite3-dev"
		DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq \
			libsqlite3-dev >/dev/null 2>&1 ||
			echo "bench-apps: could not install libsqlite3-dev; the sqlite workload will be skipped"
	else
		echo "bench-apps: libsqlite3-dev not installed (not root or no apt-get); the sqlite workload will be skipped"
	fi
fi
mkdir -p "$build_dir"
log="$build_dir/bench-build.log"
echo "bench-apps: building in $build_dir (log: $log)"
# shellcheck disable=SC2086 # CMAKE_FLAGS is a list of flags
if ! { cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
	${CMAKE_FLAGS:-} && cmake --build "$build_dir" -j "${JOBS:-2}"; } \
	>"$log" 2>&1; then
	cat "$log"
	echo "bench-apps: build failed (log above, also in $log)" >&2
	exit 1
fi
py=${QLOCK_PYTHON:-}
[ -z "$py" ] && { [ -x /usr/bin/python3 ] && py=/usr/bin/python3 || py=python3; }
exec "$py" bench/apps/bench_apps.py --qlock-run "$build_dir/shim/qlock-run" \
	--json "$build_dir/bench-apps.json" --table "$build_dir/bench-apps.txt" "$@"
