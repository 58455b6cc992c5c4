#!/usr/bin/env bash
# GPU check (issue 15), in two halves, for a GPU machine that has no MLIR and
# no network (bench/gpu_check.py says what each half does):
#
#   bench/gpu_check.sh prepare   # here: build, then compile every program
#                                # into $BUILD_DIR/gpu_pack (a few MiB)
#   bench/gpu_check.sh run       # there: run the pack, write
#                                # bench/results/gpu_check_<date>.md
#   bench/gpu_check.sh           # both, on a machine with a GPU and the build
#
# run (and both) first ask the driver for a GPU: without one they stop at once
# with exit status 2 (nothing was checked). Exit status otherwise: 0 all
# checks passed, 1 a check, the build or the compilation failed.
# Environment: BUILD_DIR (default build), PACK (default $BUILD_DIR/gpu_pack),
# REPORT (default bench/results/gpu_check_<date>.md), JOBS (build jobs, default nproc), GPU_CHECK_BUDGET (seconds for the run
# half, default 300), CUDA_HOME (toolkit for prepare; default: found through
# ptxas on PATH or /usr/local/cuda), TTT_CUDA_DRIVER (driver library, default
# libcuda.so.1). Further arguments go to bench/gpu_check.py's half.
set -euo pipefail

START=$(date +%s)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PYTHON=${PYTHON:-python3}
PACK=${PACK:-$BUILD_DIR/gpu_pack}
MODE=both
case "${1:-}" in
  prepare|run) MODE=$1; shift ;;
esac
# The budget bounds the run half (device time is scarce); building and
# compiling here get an hour.
BUDGET=${GPU_CHECK_BUDGET:-300}
[ "$MODE" = prepare ] && BUDGET=3600
DEADLINE=$((START + BUDGET))

say() { echo "gpu_check: $*"; }
# Seconds left, at least 1 (`timeout 0` would mean no limit at all).
left() { local s=$((DEADLINE - $(date +%s))); echo $((s > 0 ? s : 1)); }

probe_gpu() {
  # 1. A GPU? Ask the driver itself: nvidia-smi may be missing or lie in
  #    containers. Any failure here means there is nothing to check.
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    say "error: $PYTHON not found"
    exit 1
  fi
  set +e
  GPU=$(timeout 60 "$PYTHON" - <<'EOF' 2>&1
import ctypes, os, sys
name = os.environ.get("TTT_CUDA_DRIVER") or "libcuda.so.1"
try:
    cuda = ctypes.CDLL(name)
except OSError as error:
    sys.exit(f"cannot load the CUDA driver ({error})")
rc = cuda.cuInit(0)
if rc:
    sys.exit(f"cuInit failed with CUDA error {rc} (100: no device, 34: stub library)")
count = ctypes.c_int(0)
rc = cuda.cuDeviceGetCount(ctypes.byref(count))
if rc or count.value == 0:
    sys.exit(f"the driver reports no CUDA device (error {rc})")
buf = ctypes.create_string_buffer(256)
cuda.cuDeviceGetName(buf, 255, 0)
print(f"{count.value} device(s), device 0: {buf.value.decode()}")
EOF
  )
  STATUS=$?
  set -e
  if [ "$STATUS" -ne 0 ]; then
    say "no NVIDIA GPU found: ${GPU:-the probe failed}"
    say "nothing to check on this machine (run it where the driver and a GPU are)"
    exit 2
  fi
  say "GPU: $GPU"
}

find_toolkit() {
  # 2. The CUDA toolkit: gpu-module-to-binary needs ptxas (and fatbinary for the
  #    default format) and links libdevice for exp, tanh, ...
  PTXAS=$(command -v ptxas 2>/dev/null || true)
  for root in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [ -z "$PTXAS" ] && [ -n "$root" ] && [ -x "$root/bin/ptxas" ]; then
      PTXAS=$root/bin/ptxas
    fi
  done
  FORMAT=fatbin
  if [ -n "$PTXAS" ]; then
    export CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$PTXAS")")}
    export PATH="$(dirname "$PTXAS"):$PATH"
    [ -x "$(dirname "$PTXAS")/fatbinary" ] || FORMAT=bin
    say "CUDA toolkit: $CUDA_HOME ($("$PTXAS" --version | tail -1))"
  else
    FORMAT=isa
    say "warning: no ptxas found; kernels go to the driver as PTX (format=isa), and"
    say "         math functions need libdevice from a CUDA toolkit (set CUDA_HOME)"
  fi
}

build_tools() {
  # 3. Build what the check runs (incremental when build/ exists).
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    say "configuring $BUILD_DIR"
    CXX=${CXX:-$(command -v clang++ || command -v g++)}
    CC=${CC:-$(command -v clang || command -v gcc)}
    timeout "$(left)" cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" \
      -DPython3_EXECUTABLE="$(command -v "$PYTHON")" >"$BUILD_DIR.configure.log" 2>&1 || {
        say "error: cmake failed (see $BUILD_DIR.configure.log)"; exit 1; }
  fi
  say "building ttt-opt, ttt-run, libttt_cuda_runtime.so ($(left) s left)"
  if ! timeout "$(left)" ninja -C "$BUILD_DIR" -j "${JOBS:-$(nproc)}" ttt-opt ttt-run ttt_cuda_runtime >"$BUILD_DIR/gpu_check_build.log" 2>&1; then
    tail -20 "$BUILD_DIR/gpu_check_build.log" >&2 || true
    say "error: the build failed or ran out of time (see $BUILD_DIR/gpu_check_build.log)"
    exit 1
  fi
}


if [ "$MODE" != prepare ]; then
  probe_gpu
fi
if [ "$MODE" != run ]; then
  find_toolkit
  build_tools
  say "compiling the programs into $PACK"
  "$PYTHON" "$ROOT/bench/gpu_check.py" prepare --out "$PACK" --build-dir "$BUILD_DIR" \
    --toolkit "${CUDA_HOME:-}" $([ "$MODE" = prepare ] && printf '%s ' "$@") || {
      say "error: compiling the programs failed"; exit 1; }
  if [ "$MODE" = prepare ]; then
    say "done in $(( $(date +%s) - START )) s: carry $PACK to the GPU machine and run"
    say "  bench/gpu_check.sh run"
    exit 0
  fi
  set --
  # The run half's budget starts now.
  DEADLINE=$(( $(date +%s) + BUDGET ))
fi

# The run half, with what time is left.
if [ ! -f "$PACK/manifest.json" ]; then
  say "error: no prepared pack at $PACK (run bench/gpu_check.sh prepare where the build is)"
  exit 1
fi
REPORT=${REPORT:-$ROOT/bench/results/gpu_check_$(date +%Y%m%d_%H%M%S).md}
mkdir -p "$(dirname "$REPORT")"
say "running $PACK ($(left) s left); report: $REPORT"
set +e
timeout "$(( $(left) + 30 ))" "$PYTHON" "$ROOT/bench/gpu_check.py" run "$PACK" \
  --budget "$(left)" --report "$REPORT" "$@"
STATUS=$?
set -e
if [ "$STATUS" -eq 124 ]; then
  echo "result: FAIL (killed at the deadline)" >>"$REPORT"
  say "error: the check ran past its budget; partial report in $REPORT"
  exit 1
fi
say "done in $(( $(date +%s) - START )) s (status $STATUS); report: $REPORT"
exit "$STATUS"
