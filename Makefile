# Thin wrapper over CMake for the two README commands.
#   make run    install dependencies, build, run the main job on the bundled example
#   make test   install dependencies, build (plain and ASan+UBSan), run every test (the heavy
#               suites, CTest label `heavy`: JAX corpus, browser, image build, fuzzing, run
#               once, in the plain build only)
#   make install PREFIX=DIR   install the C client library, its headers, pkg-config file and
#               the shardplan command (default PREFIX /usr/local)
BUILD      ?= build
ASAN_BUILD ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?= --output-on-failure

.PHONY: deps build build-asan run test test-plain test-asan conformance bench screenshots clean install

deps:
	@./deploy/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSP_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)

run: build
	@./deploy/run-example.sh $(BUILD)

test-plain: build
	@echo "== tests (RelWithDebInfo) =="
	@cd $(BUILD) && ctest $(CTEST_ARGS) -j$(JOBS)

test-asan: build-asan
	@echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest $(CTEST_ARGS) -j$(JOBS) -LE heavy

test: test-plain test-asan

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
	rm -rf $(BUILD) $(ASAN_BUILD)
