#!/usr/bin/env bash
# GPU check (issue 5). On a machine with an NVIDIA GPU and its driver:
#   1. finds the GPU (cuInit + cuDeviceGetCount through libcuda.so.1) and the
#      CUDA toolkit (ptxas, fatbinary, libdevice);
#   2. builds ttt-opt, ttt-run and libttt_cuda_runtime.so (cmake + ninja);
#   3. runs bench/gpu_check.py: the parallel (linattn) form on the GPU against
#      the recurrent reference on the CPU (fp32 relative error <= 1e-5, bf16
#      <= 3e-2) and recurrent vs parallel timings on the GPU at the LaCT-LLM
#      layer shape (B=1, 4 heads of dim 384, T=32768, chunk 2048), Variants 2
#      and 5;
#   4. writes bench/results/gpu_check_<date>.txt.
# Everything runs within GPU_CHECK_BUDGET seconds (default 470, under 8
# minutes); steps that do not fit are reported as skipped.
#
# Exit status: 0 all checks passed, 1 a check or the build failed,
# 2 no NVIDIA GPU or driver here (nothing was checked).
#
#   bench/gpu_check.sh                      # everything
#   bench/gpu_check.sh --variants V2 --repeat 5
# Environment: BUILD_DIR (default build), JOBS (build jobs, default nproc),
# GPU_CHECK_BUDGET (seconds),
# CUDA_HOME (toolkit; default: found through ptxas on PATH or /usr/local/cuda),
# TTT_CUDA_DRIVER (driver library, default libcuda.so.1).
set -euo pipefail

START=$(date +%s)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUDGET=${GPU_CHECK_BUDGET:-470}
DEADLINE=$((START + BUDGET))
PYTHON=${PYTHON:-python3}

say() { echo "gpu_check: $*"; }
# Seconds left, at least 1 (`timeout 0` would mean no limit at all).
left() { local s=$((DEADLINE - $(date +%s))); echo $((s > 0 ? s : 1)); }

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

# 4. The check itself, with what time is left.
mkdir -p "$ROOT/bench/results"
REPORT="$ROOT/bench/results/gpu_check_$(date +%Y%m%d_%H%M%S).txt"
say "checking ($(left) s left); report: $REPORT"
set +e
timeout "$(( $(left) + 5 ))" "$PYTHON" "$ROOT/bench/gpu_check.py" --build-dir "$BUILD_DIR" \
  --deadline "$DEADLINE" --format "$FORMAT" --toolkit "${CUDA_HOME:-}" --report "$REPORT" "$@"
STATUS=$?
set -e
if [ "$STATUS" -eq 124 ]; then
  echo "result: FAIL (killed at the deadline)" >>"$REPORT"
  say "error: the check ran past its budget; partial report in $REPORT"
  exit 1
fi
say "done in $(( $(date +%s) - START )) s (status $STATUS); report: $REPORT"
exit "$STATUS"
