# ttt — the two set-up commands of the README, and their parts.
#   make demo   installs what is missing, builds, runs ttt-opt on the bundled example
#   make test   installs what is missing, builds, runs every test suite
BUILD_DIR ?= build
BUILD_TYPE ?= Release
PYTHON ?= python3
JOBS ?= $(shell nproc)
# clang builds MLIR code faster and in less memory than g++; either works.
CXX_COMPILER ?= $(shell command -v clang++ 2>/dev/null || command -v g++)
C_COMPILER ?= $(shell command -v clang 2>/dev/null || command -v gcc)

.PHONY: all setup configure build demo test check-lit check-python docs clean

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
	@echo "== ttt-opt parses, verifies and prints the bundled LaCT-LLM layer =="
	$(BUILD_DIR)/bin/ttt-opt examples/lact_llm_layer.mlir

check-python: build
	TTT_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q test/python

check-lit: build
	ninja -C $(BUILD_DIR) check-ttt

# Python tests first so that the output ends with the lit summary.
test: build check-python check-lit

docs: configure
	ninja -C $(BUILD_DIR) mlir-doc
	@echo "generated reference pages are in $(BUILD_DIR)/docs/Dialects"

clean:
	rm -rf $(BUILD_DIR)
