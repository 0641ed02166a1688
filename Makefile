# The two commands: `make demo` and `make test`. Both install what is missing first.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# The tests that run threads: the control loop's own, and every integration test (a real
# `serve` with its HTTP server, webhook driver and loop thread; agents; the CLI's client).
TSAN_TESTS ?= ^(ControlLoopTest|RequestSafetyTest)\.
CMAKE_FLAGS ?=
# The integration tests `make test` also runs under ASan+UBSan: hostile input to a real server.
ASAN_INTEGRATION ?= ^(BadInputCli|SecurityServe|ServeIntegration)\.

.PHONY: all setup build build-asan build-tsan demo test test-all test-unit test-asan test-tsan bench clean format format-check tidy fuzz fuzz-short

all: build

setup:
	@scripts/setup

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGPUFLEET_SANITIZE=ON $(CMAKE_FLAGS)

$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUFLEET_TSAN=ON $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# Runs the demo on embedded defaults (SQLite, simulated cloud). Builds the binary only, not the
# tests and benchmarks.
demo: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gpufleet
	@scripts/demo $(BUILD)/gpufleet

# Formatting first (seconds), then the whole suite, then every fuzz target for a few seconds on
# its corpus (regressions of the parsers outside input reaches), then under ASan+UBSan the unit
# and scenario tests and the integration tests that send a real server hostile input. The other
# integration tests drive real daemons through the same code the scenario tests cover; they run
# once, in the release build, to keep CI's 2 cores under half an hour (docs/performance.md,
# "Build and suite time"). `make test-asan` runs every test under the sanitizers.
test: format-check build build-asan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@JOBS=$(JOBS) FUZZ_SECONDS=3 scripts/fuzz
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L integration -R '$(ASAN_INTEGRATION)'
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE integration

# ThreadSanitizer over the tests that run threads (docs/style.md). Not part of `make test`: a
# third full build does not fit CI's time on 2 cores; `make test-all` runs both.
# Only what test-tsan runs: the loop's tests and the integration tests (with the binary).
build-tsan: setup $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target unit_loop_tests integration_tests

test-tsan: build-tsan
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -j $(JOBS) -L integration

test-all: test test-tsan

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

test-asan: build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bench/journal_bench --benchmark_min_time=1

# .clang-format (Google style, 100 columns) over every C++ file of src/, tests/ and bench/.
SOURCES = find src tests bench \( -name '*.h' -o -name '*.cpp' \) -print0
format: setup
	$(SOURCES) | xargs -0 clang-format -i

format-check: setup
	@$(SOURCES) | xargs -0 clang-format --dry-run -Werror || \
	  { echo "format-check: files above are not formatted; run 'make format'"; exit 1; }
	@echo "format-check: src/ tests/ bench/ formatted"

# .clang-tidy's checks over src/ with the release build's compile commands (minutes on 2 cores;
# not part of `make test`, see docs/style.md).
tidy: build
	run-clang-tidy -quiet -p $(BUILD) -j $(JOBS) '$(CURDIR)/src/.*\.cpp$$'

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)

# libFuzzer targets (docs/fuzzing.md): build-fuzz/ with clang++, FUZZ_SECONDS per target.
fuzz: setup
	@JOBS=$(JOBS) scripts/fuzz

fuzz-short: setup
	@JOBS=$(JOBS) FUZZ_SECONDS=3 scripts/fuzz
