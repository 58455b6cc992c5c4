#!/usr/bin/env bash
# Installs every system and Python package ttt needs, and nothing when all are present.
# Idempotent: safe to run before every build (make demo / make test call it).
set -euo pipefail
# The ONNX C++ library is not among them: the configure step builds it from
# its PyPI source distribution (cmake/BuildONNX.cmake), with PyPI's CMake
# where the system's is older than 3.26 (below).

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libprotobuf-dev protobuf-compiler zlib1g-dev libzip-dev
  ninja-build cmake g++ make
  libomp-22-dev libopenblas0-pthread
  clang libclang-rt-14-dev clang-format-14 clang-tidy-14
  python3-dev python3-venv
)
# pytest-xdist runs the Python suite on every core (`make check-python`).
PY_PACKAGES=(onnx onnxruntime numpy pytest pytest-xdist nanobind scikit-build-core)

PYTHON=${PYTHON:-python3}

missing_apt=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing_apt+=("$p")
  fi
done
if ((${#missing_apt[@]})); then
  echo "setup: installing system packages: ${missing_apt[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"
fi

missing_py=()
for p in "${PY_PACKAGES[@]}"; do
  case "$p" in
    pytest-xdist) mod=xdist ;;
    *) mod=${p//-/_} ;;
  esac
  if ! "$PYTHON" -c "import ${mod}" >/dev/null 2>&1; then
    missing_py+=("$p")
  fi
done
# ONNX's build (cmake/BuildONNX.cmake) needs CMake 3.26; Debian 12's is 3.25.
# PyPI's cmake package has a newer one, which the configure finds through
# `import cmake` in this Python (not from sys.path's '', where this
# directory's cmake/ would be imported instead).
cmake_version() { "$1" --version 2>/dev/null | sed -n 's/^cmake version \([0-9.]*\).*/\1/p'; }
at_least() { printf '%s\n%s\n' "$2" "$1" | sort -V -C; }
if ! at_least "$(cmake_version cmake)" 3.26; then
  pypi_cmake=$("$PYTHON" -c "import sys; sys.path.remove(''); import cmake; print(cmake.CMAKE_BIN_DIR)" \
    2>/dev/null || true)
  if [ -z "$pypi_cmake" ] || ! at_least "$(cmake_version "$pypi_cmake/cmake")" 3.26; then
    # The newest 3.x: CMake 4 warns about policies in LLVM 22's CMake files.
    missing_py+=("cmake>=3.26,<4")
  fi
fi
if ((${#missing_py[@]})); then
  echo "setup: installing Python packages: ${missing_py[*]}"
  "$PYTHON" -m pip install -q "${missing_py[@]}"
fi
