# qlock: the two set-up commands of README.md, and a few helpers.
#   make bench   build, then run the seed-reproduction benchmark suite (short mode)
#   make test    build, then run every test, then again under ThreadSanitizer,
#                then model-check (when genmc is installed)
#   make modelcheck  GenMC on every tests/model harness, RC11 and IMM, and
#                    each harness's mutation (docs/testing.md)
BUILD_DIR ?= build
TSAN_DIR  ?= build-tsan
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
BENCH_ARGS ?= seed all --short

.PHONY: all build bench test test-plain test-tsan test-model modelcheck deps clean

all: build

build:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Optional extras (Concurrency Kit baselines); never fails the build.
deps:
	@sh scripts/install-deps.sh --optional

bench: deps build
	$(BUILD_DIR)/bench/lockbench $(BENCH_ARGS)

test: test-plain test-tsan test-model

test-plain: build
	ctest --test-dir $(BUILD_DIR) -j $(JOBS) --output-on-failure

test-tsan:
	cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQLOCK_TSAN=ON $(CMAKE_FLAGS)
	cmake --build $(TSAN_DIR) -j $(JOBS)
	ctest --test-dir $(TSAN_DIR) -j $(JOBS) --output-on-failure

modelcheck:
	tests/model/modelcheck.sh -j $(JOBS) -o $(BUILD_DIR)/modelcheck

test-model:
	@if command -v genmc >/dev/null 2>&1; then $(MAKE) --no-print-directory modelcheck; \
	else echo "model checking skipped: genmc not installed (bash ../shared/tools/genmc/install.sh, then make modelcheck)"; fi

clean:
	rm -rf $(BUILD_DIR) $(TSAN_DIR)
