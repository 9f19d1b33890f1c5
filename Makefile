# qlock: the two set-up commands of README.md, and a few helpers.
#   make bench   build, then run the seed-reproduction benchmark suite (short mode)
#                and write the report to report/ (scripts/bench.sh)
#   make bench-full  the same at the patches' full sizes
#   make bench-apps  real programs (RocksDB, memcached, sysbench, ...) under
#                glibc and under the pthread drop-in (scripts/bench-apps.sh,
#                about 15 min; APPS_ARGS=--quick for a 1-2 min check)
#   make test    build, then run every test, then again under ThreadSanitizer
#                and under AddressSanitizer + UndefinedBehaviorSanitizer,
#                then model-check (when genmc is installed; the quick set:
#                make modelcheck adds the longest verify runs)
#   make modelcheck  GenMC on every tests/model harness, RC11 and IMM, and
#                    each harness's mutation (docs/testing.md)
#   make test-peers  other projects' suites (GLib, CPython, stress-ng, ...)
#                under every qlock-run --mutex x --rwlock combination, each
#                compared with plain glibc (scripts/test-peers.sh, about
#                1000 CPU-seconds; PEERS_ARGS=--quick for a third of that)
BUILD_DIR ?= build
TSAN_DIR  ?= build-tsan
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
# The project's own builds treat warnings as errors (a plain cmake build
# does not: QLOCK_WERROR is off by default); WERROR=OFF to build anyway.
WERROR ?= ON
CMAKE_FLAGS ?=
QLOCK_CMAKE_FLAGS = -DQLOCK_WERROR=$(WERROR) $(CMAKE_FLAGS)
BENCH_ARGS ?= seed all --short
APPS_ARGS ?=
PEERS_ARGS ?=

.PHONY: all build bench bench-full bench-apps test test-plain test-tsan test-asan test-cross test-word test-model test-peers modelcheck deps clean

all: build

build:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(QLOCK_CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Optional extras (Concurrency Kit, absl, TBB baselines); never fails the build.
deps:
	@sh scripts/install-deps.sh --optional

BENCH_ENV = BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) BUILD_TYPE=$(BUILD_TYPE) \
	CMAKE_FLAGS="$(QLOCK_CMAKE_FLAGS)"

bench: deps
	@$(BENCH_ENV) sh scripts/bench.sh $(BENCH_ARGS)

bench-full: deps
	@$(BENCH_ENV) sh scripts/bench.sh seed all

# The application benchmark (docs/bench-apps.md): writes
# $(BUILD_DIR)/bench-apps.json, which the next `make bench` report shows.
bench-apps:
	@$(BENCH_ENV) sh scripts/bench-apps.sh $(APPS_ARGS)

# The performance map against glibc, short grid, then its mutex and rwlock
# cells at 2 and 8 threads with two busy processes beside them
# (docs/performance.md).
.PHONY: map
map: deps build
	$(BUILD_DIR)/bench/lockbench map --short --json $(BUILD_DIR)/map-short.json
	$(BUILD_DIR)/bench/lockbench map --short --family both -t 2,8 --hogs 2 \
		--json $(BUILD_DIR)/map-short-hogs2.json

test: test-plain test-tsan test-asan test-model

test-plain: build
	ctest --test-dir $(BUILD_DIR) -j $(JOBS) --output-on-failure

test-tsan:
	cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQLOCK_TSAN=ON $(QLOCK_CMAKE_FLAGS)
	cmake --build $(TSAN_DIR) -j $(JOBS)
	ctest --test-dir $(TSAN_DIR) -j $(JOBS) --output-on-failure

test-asan:
	cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQLOCK_ASAN=ON $(QLOCK_CMAKE_FLAGS)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ctest --test-dir $(ASAN_DIR) -j $(JOBS) --output-on-failure

# The suite cross-built for s390x and aarch64, run under qemu-user.
test-cross:
	JOBS=$(JOBS) CMAKE_FLAGS="$(QLOCK_CMAKE_FLAGS)" sh scripts/test-cross.sh

# The library and its unit tests with whole-word atomics only (the
# 1-bit pending qspinlock layout), natively.
test-word:
	cmake -S . -B build-word -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQLOCK_WORD_ATOMICS_ONLY=ON -DQLOCK_BUILD_BENCH=OFF $(QLOCK_CMAKE_FLAGS)
	cmake --build build-word -j $(JOBS)
	ctest --test-dir build-word -j $(JOBS) --output-on-failure -LE 'shim|torture'

# Other projects' suites under the drop-in (docs/testing.md): installs
# their packages when it can, builds the drop-in only, and fails on any
# result that differs from plain glibc's.
test-peers:
	@sh scripts/install-deps.sh --peers
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(QLOCK_CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target qlock_pthread
	BUILD_DIR=$(BUILD_DIR) bash scripts/test-peers.sh $(PEERS_ARGS)

modelcheck:
	tests/model/modelcheck.sh -j $(JOBS) -o $(BUILD_DIR)/modelcheck

# make test's model check: every harness under RC11 and IMM and every
# mutation, less the few verify runs marked full-only (make modelcheck).
test-model:
	@if command -v genmc >/dev/null 2>&1; then \
		tests/model/modelcheck.sh --quick -j $(JOBS) -o $(BUILD_DIR)/modelcheck; \
	else echo "model checking skipped: genmc not installed (scripts/install-genmc.sh installs it, then make modelcheck)"; fi

clean:
	rm -rf $(BUILD_DIR) $(TSAN_DIR) $(ASAN_DIR) build-s390x build-aarch64 build-word
