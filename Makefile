# Thin wrapper over CMake for the two README commands.
#   make run    install dependencies, build, run the main job on the bundled example
#   make test   install dependencies, build (plain, ASan+UBSan, and TSan for the thread
#               tests), run every test (the heavy
#               suites, CTest label `heavy`: JAX corpus, browser, image build, fuzzing, run
#               once, in the plain build only)
#   make install PREFIX=DIR   install the C client library, its headers, pkg-config file and
#               the shardplan command (default PREFIX /usr/local)
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?= --output-on-failure

.PHONY: deps build build-asan build-tsan run test test-plain test-asan test-tsan conformance bench screenshots clean install

deps:
	@./deploy/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSP_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)

# ThreadSanitizer: the suites that run the engine on several threads at once.
TSAN_TESTS ?= test_threads
build-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSP_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j$(JOBS) --target $(TSAN_TESTS)

run: build
	@./deploy/run-example.sh $(BUILD)

test-plain: build
	@echo "== tests (RelWithDebInfo) =="
	@cd $(BUILD) && ctest $(CTEST_ARGS) -j$(JOBS)

test-asan: build-asan
	@echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest $(CTEST_ARGS) -j$(JOBS) -LE heavy

test-tsan: build-tsan
	@echo "== tests (ThreadSanitizer) =="
	@cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1 ctest $(CTEST_ARGS) -R '^($(subst $(eval ) ,|,$(TSAN_TESTS)))$$'

test: test-plain test-asan test-tsan

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

# Refreshes the dashboard screenshots README.md shows (docs/screenshots/), from the browser
# test's run against a real daemon.
screenshots: build
	@cd $(BUILD) && ctest -R '^browser_dashboard$$' --output-on-failure
	@mkdir -p docs/screenshots
	@cp $(BUILD)/screenshots/plan.png $(BUILD)/screenshots/factor_table.png \
	    $(BUILD)/screenshots/provenance.png $(BUILD)/screenshots/conflicts.png docs/screenshots/
	@echo "docs/screenshots/ refreshed"

bench: build
	@cmake --build $(BUILD) --target bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
