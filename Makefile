# ttt — the two set-up commands of the README, and their parts.
#   make demo   installs what is missing, builds, explains + rewrites the bundled LaCT layer and runs both forms
#   make test   installs what is missing, builds, runs every test suite
BUILD_DIR ?= build
BUILD_TYPE ?= Release
PYTHON ?= python3
JOBS ?= $(shell nproc)
# clang builds MLIR code faster and in less memory than g++; either works.
CXX_COMPILER ?= $(shell command -v clang++ 2>/dev/null || command -v g++)
C_COMPILER ?= $(shell command -v clang 2>/dev/null || command -v gcc)

.PHONY: all setup configure build demo test check-lit check-python check-format format check-gcc lint docs clean fuzz fixtures python check-package bench check-iree check-torch linalg-fixtures

all: build

setup:
	@./scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_COMPILER=$(CXX_COMPILER) -DCMAKE_C_COMPILER=$(C_COMPILER) \
	  -DPython3_EXECUTABLE=$$(command -v $(PYTHON))

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

demo: build
	BUILD_DIR=$(BUILD_DIR) ./scripts/demo.sh

# One pytest worker per core; a test file stays on one worker (--dist
# loadfile), so a file's module fixtures and README commands run in order.
check-python: build
	TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q -n $(JOBS) --dist loadfile test/python

# The Python extension ttt._ttt in $(BUILD_DIR)/python/ttt (use it with
# PYTHONPATH=$(BUILD_DIR)/python). make test's pytest run includes its tests
# (test/python/test_package_*.py).
python: configure
	ninja -C $(BUILD_DIR) -j $(JOBS) _ttt

# `pip install .` as a user runs it (build isolation: pip brings scikit-build-core,
# nanobind and a CMake >= 3.26), into a fresh venv $(BUILD_DIR)/pip-venv; only the
# ONNX library of $(BUILD_DIR) is reused, and the build is kept in $(BUILD_DIR)/pip
# so that a rerun is incremental. Then, outside the source tree, the package and
# the installed commands ttt, ttt-opt and ttt-run (the C++ tools) on README commands.
PIP_VENV = $(abspath $(BUILD_DIR))/pip-venv
check-package: configure
	rm -rf $(PIP_VENV)
	$(PYTHON) -m venv $(PIP_VENV)
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) CC=$(C_COMPILER) CXX=$(CXX_COMPILER) \
	  CMAKE_ARGS="$(if $(ONNX_PREFIX),-DTTT_ONNX_PREFIX=$(ONNX_PREFIX))" \
	  $(PIP_VENV)/bin/pip install --disable-pip-version-check '.[runtime]' \
	  -C build-dir=$(abspath $(BUILD_DIR))/pip/{wheel_tag}
	cd /tmp && PATH=$(PIP_VENV)/bin:$$PATH && \
	  python -c "import ttt; print(ttt.__version__, len(ttt.explain('$(CURDIR)/examples/lact_v2_small.mlir')), 'layer'); \
	    m = '$(CURDIR)/test/fixtures/onnx/lact_v3.scripted.onnx'; print(ttt.verify(m, ttt.optimize(m)))" && \
	  test "$$(command -v ttt-opt)" = $(PIP_VENV)/bin/ttt-opt && \
	  ttt explain $(CURDIR)/examples/lact_v2_small.mlir | grep 'prefix sum' && \
	  ttt-opt $(CURDIR)/examples/lact_v2_small.mlir --ttt-explain -o /dev/null 2>&1 | \
	    grep -o 'remark: ttt-explain: exact lowering: [^;]*' && \
	  ttt-run $(CURDIR)/examples/lact_v2_small.mlir --random-inputs=1 --repeat=2 --print-results=false \
	    2>&1 | grep 'median of 2 runs' && \
	  ttt-run $(CURDIR)/examples/linear_dot_layer.mlir --device=cuda \
	    --gpu-options='emulate=true contractions=cublas' --random-inputs=1 --print-results=false && \
	  test -f $(PIP_VENV)/lib/libttt_cuda_runtime.so && test -f $(PIP_VENV)/lib/libttt_cpu_runtime.so && \
	  echo "check-package: the package and the commands ttt, ttt-opt and ttt-run work"

# ttt between two stages of IREE: ttt-optimize-linalg's output compiled by
# iree-compile and run by IREE's runtime against the original (test_iree.py).
# The IREE wheels go into $(BUILD_DIR)/iree-venv; make test skips these tests.
IREE_VERSION ?= 3.13.0
check-iree: build
	test -x $(BUILD_DIR)/iree-venv/bin/iree-compile || { $(PYTHON) -m venv $(BUILD_DIR)/iree-venv && \
	  $(BUILD_DIR)/iree-venv/bin/pip install -q iree-base-compiler==$(IREE_VERSION) \
	    iree-base-runtime==$(IREE_VERSION); }
	TTT_IREE_BIN=$(abspath $(BUILD_DIR))/iree-venv/bin TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(PYTHON) -m pytest -q test/python/test_iree.py

# ttt.optimize on the public research modules as they are (test_torch_corpus.py): PyTorch
# and what the modules import (python/requirements-torch.txt, a few GB) go into
# $(BUILD_DIR)/torch-venv, and the upstream code is cloned at pinned commits into
# $(BUILD_DIR)/upstream unless TTT_LACT_DIR, TTT_TTT_LM_DIR and TTT_VITTT_DIR name
# checkouts. make test skips these tests (no torch there).
TORCH_VENV ?= $(abspath $(BUILD_DIR))/torch-venv
UPSTREAM_DIR ?= $(abspath $(BUILD_DIR))/upstream
check-torch: build
	test -x $(TORCH_VENV)/bin/python || { $(PYTHON) -m venv $(TORCH_VENV) && \
	  $(TORCH_VENV)/bin/pip install -q -r python/requirements-torch.txt; }
	python/scripts/fetch_upstream.sh $(UPSTREAM_DIR)
	TTT_LACT_DIR=$${TTT_LACT_DIR:-$(UPSTREAM_DIR)/LaCT} \
	TTT_TTT_LM_DIR=$${TTT_TTT_LM_DIR:-$(UPSTREAM_DIR)/ttt-lm-pytorch} \
	TTT_VITTT_DIR=$${TTT_VITTT_DIR:-$(UPSTREAM_DIR)/ViTTT} \
	TTT_REQUIRE_UPSTREAM=1 TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(TORCH_VENV)/bin/python -m pytest -q -p no:cacheprovider test/python/test_torch_corpus.py \
	    test/python/test_package_front_door.py
	# ttt.optimize(..., via="mlir") where make linalg-fixtures installed torch-mlir
	! test -x $(BUILD_DIR)/linalgenv/bin/python || TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(BUILD_DIR)/linalgenv/bin/python -m pytest -q -p no:cacheprovider \
	    test/python/test_package_front_door.py

check-lit: build
	ninja -C $(BUILD_DIR) check-ttt

# The CPU benchmark, side by side in one run: ttt-run's recurrent, parallel and
# auto forms, PyTorch eager and onnxruntime (where torch imports: it is not
# installed here, see python/requirements-models.txt), the same-run GEMM peak;
# writes bench/results/cpu_compare.md and its PNG plots. Not a test.
bench: build
	@$(PYTHON) -c "import matplotlib" >/dev/null 2>&1 || $(PYTHON) -m pip install -q matplotlib
	TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) bench/cpu_compare.py \
	  --output bench/results/cpu_compare.md --plots bench/results

# Python tests first so that the output ends with the lit summary.
test: check-format build check-python check-lit

# Every tracked C/C++ file as clang-format 14 (Debian 12's) writes it, in the
# LLVM style of .clang-format. `make format` rewrites them in place.
CLANG_FORMAT ?= clang-format-14
SOURCES = $(shell git ls-files '*.cpp' '*.h' '*.c' 2>/dev/null || \
            find include lib tools python/src test -name '*.cpp' -o -name '*.h' -o -name '*.c')
check-format: setup
	@$(CLANG_FORMAT) --dry-run --Werror $(SOURCES) && \
	  echo "check-format: $(words $(SOURCES)) files are formatted"
format: setup
	$(CLANG_FORMAT) -i $(SOURCES)

# clang-tidy 14 with the checks of .clang-tidy on every compiled project file
# (needs the build's compile_commands.json and generated headers).
CLANG_TIDY_RUNNER ?= run-clang-tidy-14
lint: build
	$(CLANG_TIDY_RUNNER) -quiet -j $(JOBS) -p $(BUILD_DIR) \
	  '$(CURDIR)/(lib|tools|python/src)/.*\.cpp$$'

# The lit suite again, built with g++ in $(GCC_BUILD_DIR); then the output of
# both builds compared byte for byte (test/python/test_same_output.py). The
# argument evaluation order of C++ differs between the two compilers, so this
# catches IR that depends on it.
GCC_BUILD_DIR ?= build-gcc
# It reuses the ONNX library $(BUILD_DIR) built (cmake/BuildONNX.cmake).
ONNX_PREFIX = $(shell cmake -N -LA $(BUILD_DIR) 2>/dev/null | sed -n 's/^TTT_ONNX_PREFIX:PATH=//p')
$(GCC_BUILD_DIR)/build.ninja:
	cmake -G Ninja -S . -B $(GCC_BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DTTT_BUILD_PYTHON=OFF \
	  $(if $(ONNX_PREFIX),-DTTT_ONNX_PREFIX=$(ONNX_PREFIX))
check-gcc: build $(GCC_BUILD_DIR)/build.ninja
	ninja -C $(GCC_BUILD_DIR) -j $(JOBS) check-ttt
	TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) TTT_SECOND_BUILD_DIR=$(abspath $(GCC_BUILD_DIR)) \
	  $(PYTHON) -m pytest -q test/python/test_same_output.py

# libFuzzer on the ONNX reader and writer for FUZZ_TIME seconds, seeded with the
# test models (needs clang and libclang-rt-14-dev, which setup installs).
FUZZ_TIME ?= 60
# Seconds per input: the Presburger proofs of a Loop's bounds take seconds on
# some inputs under AddressSanitizer when the machine is loaded.
FUZZ_TIMEOUT ?= 60
FUZZ_DIR = $(BUILD_DIR)/fuzz
fuzz: configure
	@ninja -C $(BUILD_DIR) -t query ttt-onnx-fuzz >/dev/null 2>&1 || { \
	  echo "fuzz: $(BUILD_DIR) was configured with a compiler without libFuzzer;"; \
	  echo "      reconfigure it with clang (make clean; make fuzz)"; exit 1; }
	ninja -C $(BUILD_DIR) -j $(JOBS) ttt-onnx-fuzz
	mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds $(FUZZ_DIR)/artifacts
	$(PYTHON) test/python/onnx_models.py $(FUZZ_DIR)/seeds > /dev/null
	cp test/fixtures/onnx/*.onnx $(FUZZ_DIR)/seeds/
	$(BUILD_DIR)/bin/ttt-onnx-fuzz -max_total_time=$(FUZZ_TIME) -timeout=$(FUZZ_TIMEOUT) \
	  -rss_limit_mb=2048 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds

# Regenerate the committed ONNX fixtures (test/fixtures/onnx) from the PyTorch reference
# models in python/ttt/models, and the research-spelling ones (test/fixtures/onnx/research,
# python/ttt/models/research.py), then check them against the NumPy oracle and torch. Needs torch,
# installed here from python/requirements-models.txt; make test does not.
# torch-mlir's linalg lowering of the reference modules (test/fixtures/linalg/), in a
# venv of its own: the torch-mlir wheel pins the torch it was built against.
linalg-fixtures:
	test -x $(BUILD_DIR)/linalgenv/bin/python || { $(PYTHON) -m venv $(BUILD_DIR)/linalgenv && \
	  $(BUILD_DIR)/linalgenv/bin/pip install -q -r python/requirements-linalg.txt; }
	$(BUILD_DIR)/linalgenv/bin/python python/scripts/make_linalg_fixtures.py
	$(MAKE) build
	TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q test/python/test_linalg_fixtures.py

fixtures:
	@$(PYTHON) -c "import torch" >/dev/null 2>&1 || \
	  $(PYTHON) -m pip install -q -r python/requirements-models.txt
	$(PYTHON) python/scripts/make_fixtures.py
	$(PYTHON) python/scripts/make_fixtures.py --research
	$(PYTHON) -m pytest -q test/python/test_fixtures.py test/python/test_research_fixtures.py

docs: configure
	ninja -C $(BUILD_DIR) mlir-doc
	@echo "generated reference pages are in $(BUILD_DIR)/docs/Dialects"

clean:
	rm -rf $(BUILD_DIR)
