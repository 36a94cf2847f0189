# sluice: a thin driver of CMake (the build itself is described in CMakeLists.txt).
#
#   make / make build   install missing Debian packages, configure and build into build/
#                       (RelWithDebInfo with assertions on, warnings are errors)
#   make check          build, then run ctest in build/
#   make test           lint, check, then the ASan+UBSan build (build-asan/: labels unit ops exec
#                       cli gpu-emulated), the TSan build (build-tsan/: label exec), a short
#                       fuzz of every fuzz target (test-fuzz) and `pip install .` into a fresh
#                       virtual environment (test-pip); what CI runs
#   make test-pip       `pip install --no-build-isolation .` into a fresh `python3 -m venv
#                       --system-site-packages` (offline), then the installed package, its
#                       `sluice` command and a C program against its library used from outside
#                       the tree (tests/install_pip.sh; pip's CMake build is kept in build-pip/)
#   make test-asan / make test-tsan   one sanitizer configuration alone
#   make fuzz           build the libFuzzer targets of tests/fuzz with clang into build-fuzz/
#                       (ASan+UBSan, no CUDA), then run each FUZZ_SECONDS (60) on its corpus in
#                       build-fuzz/corpus/, seeded from the test images and the committed
#                       regression inputs (scripts/fuzz.sh, docs/fuzzing.md); a finding fails
#                       and prints its reproducer (build-fuzz/findings/<target>/)
#   make test-fuzz      make fuzz for FUZZ_TEST_SECONDS (15) per target: the CI step
#   make test-repeat    build, then the parallel Python source tests REPEAT times in a row (20),
#                       failing on the first failed run or on a worker process or /dev/shm
#                       entry left behind (issue 6's reliability check)
#   make demo           build, make the demo data set once, run DEMO_CMD
#   make bench          build, then bench/run: sluice against torchvision, OpenCV and the
#                       libjpeg-turbo decode bound, interleaved rounds; the table goes to the
#                       terminal and bench/results/latest.{json,md,png} (BENCH_ARGS="--quick")
#   make bench-ops      build, make the demo data set once, then build/bench_ops: MP/s per thread
#                       of every operator on one batch of 64 photos, 1 and <cores> threads
#                       (bench/ops_bench.c), then the same operations in OpenCV, PIL and NumPy
#                       on 1 thread (bench/ops_ref.py); tables to the terminal and
#                       bench/results/ops{.json,.md,_ref.json} (BENCH_OPS_ARGS="--filter resize")
#   make install        build, then install (PREFIX=/some/where to choose the prefix): the
#                       library, headers, CLI and the Python package `sluice` (into the site
#                       directory of /usr/bin/python3 under the prefix)
#   make docs           build, then generate the operator reference build/docs/ops.md from the
#                       registry (`sluice ops --markdown`); docs/guide.md is written by hand
#   make format / make format-check (= make lint)   clang-format on src include cli tests/c
#                       tests/fuzz and python/sluice/_sluice
#   make clean          remove every build directory (demo data included)
#
# Variables (make VAR=value): JOBS, BUILD_TYPE, BUILD_DIR, ASAN_DIR, TSAN_DIR, FUZZ_DIR,
# SLUICE_CUDA (empty: auto-detect, ON iff nvcc works; ON/OFF to force; sticky in
# build/CMakeCache.txt), WERROR, CMAKE_ARGS (extra -D... for every configure), CTEST_ARGS (e.g.
# -R test_batch), REPEAT, PREFIX, DEMO_DATA, DEMO_CMD, BENCH_ARGS, PYTHON, CLANG_FORMAT,
# FUZZ_SECONDS, FUZZ_TEST_SECONDS, FUZZ_TARGETS (e.g. "decode roi"; empty: all), FUZZ_CC,
# and scripts/fuzz.sh's FUZZ_TIMEOUT, FUZZ_RSS_MB, FUZZ_ARGS (environment).

SHELL := /bin/bash
MAKEFLAGS += --no-print-directory
.DEFAULT_GOAL := build
# Steps run one after another; parallelism lives inside cmake --build and ctest (JOBS).
.NOTPARALLEL:

JOBS         ?= 2
BUILD_TYPE   ?= RelWithDebInfo
BUILD_DIR    ?= build
ASAN_DIR     ?= build-asan
TSAN_DIR     ?= build-tsan
FUZZ_DIR     ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 15
FUZZ_TARGETS ?=
FUZZ_CC      ?= clang
SLUICE_CUDA  ?=
WERROR       ?= ON
CMAKE_ARGS   ?=
CTEST_ARGS   ?=
REPEAT       ?= 20
PREFIX       ?=
CMAKE        ?= cmake
CTEST        ?= ctest
PYTHON       ?= /usr/bin/python3
CLANG_FORMAT ?= clang-format

DEMO_DATA ?= $(BUILD_DIR)/demo-data
DEMO_CMD  ?= $(BUILD_DIR)/sluice run examples/demo.json --root $(DEMO_DATA) --epochs 3 --stats
BENCH_ARGS ?=
BENCH_OPS_ARGS ?=

# Every configuration made here keeps assert() on (SLUICE_ASSERT drops -DNDEBUG).
CONFIG_ARGS := -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSLUICE_ASSERT=ON -DSLUICE_WERROR=$(WERROR) \
               -DSLUICE_BUILD_TESTS=ON $(CMAKE_ARGS)
SAN_ARGS    := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_ASSERT=ON -DSLUICE_WERROR=$(WERROR) \
               -DSLUICE_BUILD_TESTS=ON $(CMAKE_ARGS)
# The ASan+UBSan build keeps CUDA (when nvcc is there) to run the GPU stage's tests emulated
# (label gpu-emulated: no driver is touched, and the executor's C side is instrumented); the
# real-device tests stay out of it, as the CUDA driver and ASan do not mix well. TSan skips CUDA.
ASAN_ARGS   := $(SAN_ARGS)
TSAN_ARGS   := $(SAN_ARGS) -DSLUICE_CUDA=OFF
# The fuzzing build: clang, the library and the targets only (SLUICE_FUZZ implies ASan+UBSan).
FUZZ_ARGS_CMAKE := -DCMAKE_C_COMPILER=$(FUZZ_CC) -DSLUICE_FUZZ=ON -DSLUICE_CUDA=OFF \
                   -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_WERROR=$(WERROR) \
                   -DSLUICE_BUILD_TESTS=OFF -DSLUICE_PYTHON_MODULE=OFF -DSLUICE_BUILD_BENCH=OFF \
                   $(CMAKE_ARGS)

export ASAN_OPTIONS  := detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS  := halt_on_error=1 second_deadlock_stack=1

# Sanitizer runtimes of gcc 12 / clang 14 fail at start-up ("unexpected memory mapping") on
# kernels with vm.mmap_rnd_bits > 28; running the tests with ASLR off avoids that where allowed.
SAN_RUN := $(shell setarch $$(uname -m) -R true >/dev/null 2>&1 && echo setarch $$(uname -m) -R)

FORMAT_FILES = $(shell find src include cli tests/c tests/fuzz python/sluice/_sluice -type f \
                 \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) \
                 2>/dev/null | sort)

.PHONY: all setup configure build check test test-asan test-tsan test-repeat lint format format-check \
        install docs demo bench bench-ops clean fuzz fuzz-build test-fuzz test-pip

all: build

setup:
	@scripts/setup.sh

configure: setup
	$(CMAKE) -S . -B $(BUILD_DIR) $(CONFIG_ARGS) $(if $(SLUICE_CUDA),-DSLUICE_CUDA=$(SLUICE_CUDA))

build: configure
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

check: build
	cd $(BUILD_DIR) && $(CTEST) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test: setup lint check test-asan test-tsan test-fuzz test-pip

test-asan: setup
	$(CMAKE) -S . -B $(ASAN_DIR) $(ASAN_ARGS) -DSLUICE_SANITIZE=address,undefined
	$(CMAKE) --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && $(SAN_RUN) $(CTEST) --output-on-failure -j $(JOBS) \
	    -L '^(unit|ops|exec|cli|gpu-emulated)$$' -LE '^python$$' $(CTEST_ARGS)

test-repeat: build
	scripts/repeat-parallel-tests.sh $(BUILD_DIR) $(REPEAT)

test-tsan: setup
	$(CMAKE) -S . -B $(TSAN_DIR) $(TSAN_ARGS) -DSLUICE_SANITIZE=thread
	$(CMAKE) --build $(TSAN_DIR) -j $(JOBS)
	cd $(TSAN_DIR) && $(SAN_RUN) $(CTEST) --output-on-failure -j $(JOBS) \
	    -L '^exec$$' $(CTEST_ARGS)

# After `check` (its test tree, build/testtree, is what the C program reads), or alone.
test-pip: setup
	PYTHON=$(PYTHON) SLUICE_CUDA=$(SLUICE_CUDA) tests/install_pip.sh . $(wildcard $(BUILD_DIR)/testtree)

fuzz-build: setup
	$(CMAKE) -S . -B $(FUZZ_DIR) $(FUZZ_ARGS_CMAKE)
	$(CMAKE) --build $(FUZZ_DIR) -j $(JOBS)

fuzz: fuzz-build
	PYTHON=$(PYTHON) scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

test-fuzz: fuzz-build
	PYTHON=$(PYTHON) scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_TEST_SECONDS) $(FUZZ_TARGETS)

lint: format-check

format-check:
	@files="$(FORMAT_FILES)"; \
	if [ -z "$$files" ]; then echo "format-check: no C sources yet"; exit 0; fi; \
	$(CLANG_FORMAT) --dry-run --Werror $$files && echo "format-check: $$(wc -w <<<"$$files") files ok"

format:
	@files="$(FORMAT_FILES)"; [ -z "$$files" ] || $(CLANG_FORMAT) -i $$files

install: build
	$(CMAKE) --install $(BUILD_DIR) $(if $(PREFIX),--prefix $(PREFIX))

docs: build
	$(CMAKE) --build $(BUILD_DIR) --target docs
	@echo "operator reference: $(BUILD_DIR)/docs/ops.md"

# The demo data set, made once (200 photos; also what bench-ops measures on).
$(DEMO_DATA):
	rm -rf $(DEMO_DATA).tmp
	$(PYTHON) bench/make_dataset.py --out $(DEMO_DATA).tmp --n 200 --seed 0
	mv $(DEMO_DATA).tmp $(DEMO_DATA)

demo: build $(DEMO_DATA)
	$(DEMO_CMD)

bench: build
	$(PYTHON) bench/run --no-build --build-dir $(BUILD_DIR) $(BENCH_ARGS)

bench-ops: build $(DEMO_DATA)
	@mkdir -p bench/results
	$(BUILD_DIR)/bench_ops --data $(DEMO_DATA) --json bench/results/ops.json \
	    --md bench/results/ops.md --commit "$$(git rev-parse --short HEAD 2>/dev/null)" \
	    $(BENCH_OPS_ARGS)
	$(PYTHON) bench/ops_ref.py --data $(DEMO_DATA) --json bench/results/ops_ref.json

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR) build-pip
