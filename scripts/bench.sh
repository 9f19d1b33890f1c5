#!/bin/sh
# `make bench` and `make bench-full`: build quietly (the log is shown only
# when the build fails), run the seed presets into one JSON file, and render
# the seed reproduction report from it (docs/bench-report.md).
#   sh scripts/bench.sh [LOCKBENCH ARGS]     default: seed all --short
# Environment: BUILD_DIR (build), REPORT_DIR (report), JOBS, BUILD_TYPE,
# CMAKE_FLAGS; BENCH_MAP: the `lockbench map --json` result shown in the
# report's machine section (unset: the newest $BUILD_DIR/map*.json that is
# not a --hogs map, which `make map` writes; set but empty: none);
# BENCH_MAP_HOGS: the map with busy processes beside it, shown after it
# (unset: $BUILD_DIR/map-short-hogs2.json when present, which `make map`
# writes too; set but empty: none).  The maps are not run here: the
# short grid alone takes 3-4 minutes (docs/bench-report.md).  BENCH_APPS:
# the `make bench-apps` result for the report's application benchmark
# section (unset: $BUILD_DIR/bench-apps.json when present; set but empty:
# none); not run here either (about 15 minutes, docs/bench-apps.md).  The JSON is
# kept as $REPORT_DIR/lockbench.json, so
# `lockbench report report/lockbench.json -o DIR` re-renders it.
set -u
build_dir=${BUILD_DIR:-build}
report_dir=${REPORT_DIR:-report}
[ $# -eq 0 ] && set -- seed all --short

mkdir -p "$build_dir" "$report_dir"
log="$build_dir/bench-build.log"
echo "bench: building in $build_dir (log: $log)"
# shellcheck disable=SC2086 # CMAKE_FLAGS is a list of flags
if ! { cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
	${CMAKE_FLAGS:-} && cmake --build "$build_dir" -j "${JOBS:-2}"; } \
	>"$log" 2>&1; then
	cat "$log"
	echo "bench: build failed (log above, also in $log)" >&2
	exit 1
fi

json="$report_dir/lockbench.json"
echo "bench: lockbench $* (progress on stderr)"
"$build_dir/bench/lockbench" "$@" --json >"$json.part"
rc=$?
if [ $rc -ne 0 ]; then
	echo "bench: lockbench failed with status $rc; partial output in $json.part" >&2
	exit $rc
fi
mv "$json.part" "$json"
if [ -z "${BENCH_MAP+set}" ]; then
	# shellcheck disable=SC2012 # the names are ours: map*.json
	BENCH_MAP=$(ls -t "$build_dir"/map*.json 2>/dev/null |
		grep -v -- '-hogs[0-9]*\.json$' | head -n 1)
fi
if [ -z "${BENCH_MAP_HOGS+set}" ]; then
	BENCH_MAP_HOGS=
	[ -f "$build_dir/map-short-hogs2.json" ] &&
		BENCH_MAP_HOGS=$build_dir/map-short-hogs2.json
fi
if [ -z "${BENCH_APPS+set}" ]; then
	BENCH_APPS=
	[ -f "$build_dir/bench-apps.json" ] && BENCH_APPS=$build_dir/bench-apps.json
fi
if ! "$build_dir/bench/lockbench" report "$json" -o "$report_dir" \
	${BENCH_MAP:+--map "$BENCH_MAP"} \
	${BENCH_MAP_HOGS:+--map "$BENCH_MAP_HOGS"} \
	${BENCH_APPS:+--apps "$BENCH_APPS"}; then
	echo "bench: the run is saved in $json; once python3 (and" \
	     "python3-matplotlib) are installed, render it with:" \
	     "$build_dir/bench/lockbench report $json -o $report_dir" >&2
	exit 1
fi
if [ -z "$BENCH_MAP" ]; then
	echo "bench: no performance map in the report: \`make map\` writes" \
	     "$build_dir/map-short.json (3-4 min), which the next \`make bench\`" \
	     "shows; or BENCH_MAP=FILE make bench"
fi
if [ -z "$BENCH_APPS" ]; then
	echo "bench: no application benchmark in the report: \`make" \
	     "bench-apps\` writes $build_dir/bench-apps.json (about 15 min)," \
	     "which the next \`make bench\` shows; or BENCH_APPS=FILE make bench"
fi
