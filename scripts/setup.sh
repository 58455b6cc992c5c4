#!/usr/bin/env bash
# Installs every system and Python package ttt needs, and nothing when all are present.
# Idempotent: safe to run before every build (make demo / make test call it).
set -euo pipefail
# The ONNX C++ library is not among them: the configure step builds it from
# its PyPI source distribution (cmake/BuildONNX.cmake).

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libprotobuf-dev protobuf-compiler zlib1g-dev libzip-dev
  ninja-build cmake g++ make
  libomp-22-dev libopenblas0-pthread
  clang libclang-rt-14-dev clang-format-14 clang-tidy-14
)
PY_PACKAGES=(onnx onnxruntime numpy pytest nanobind scikit-build-core)

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
  mod=${p//-/_}
  if ! "$PYTHON" -c "import ${mod}" >/dev/null 2>&1; then
    missing_py+=("$p")
  fi
done
if ((${#missing_py[@]})); then
  echo "setup: installing Python packages: ${missing_py[*]}"
  "$PYTHON" -m pip install -q "${missing_py[@]}"
fi
