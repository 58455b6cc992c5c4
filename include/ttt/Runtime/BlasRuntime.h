//===- BlasRuntime.h - GEMM calls of the ttt-to-cpu code --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-linalg-to-blas` rewrites each fp32 contraction into a call of
// `ttt_sgemm`, guarded by `ttt_blas_available`: the code runs its own loops
// when no BLAS library can be loaded. Both functions take plain integers
// (pointers as addresses, offsets and strides in elements), so the calling
// convention does not depend on MLIR's memref descriptors.
//
// The library is loaded on first use: $TTT_BLAS_LIBRARY when set (an empty
// value disables BLAS), else Debian's threaded OpenBLAS (pthread, then
// OpenMP build), limited to one thread: the compiled code parallelizes over
// (batch, head, chunk) itself and calls it from several threads at once,
// which the threaded builds lock for and the serial build does not.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_RUNTIME_BLASRUNTIME_H
#define TTT_RUNTIME_BLASRUNTIME_H

#include <cstdint>

extern "C" {
/// 1 when a BLAS library with `cblas_sgemm` is loaded, else 0.
int32_t ttt_blas_available();

/// C += A * B (C = A * B when `accumulate` is 0) for A: m x k, B: k x n,
/// C: m x n. Each matrix is given by the address of its buffer's first
/// element, the offset of its (0, 0) element and its row and column strides,
/// all in elements; any strides work (BLAS is called when each matrix is
/// row- or column-major, else a loop runs).
void ttt_sgemm(int64_t m, int64_t n, int64_t k, int64_t a, int64_t aOffset,
               int64_t aRowStride, int64_t aColStride, int64_t b,
               int64_t bOffset, int64_t bRowStride, int64_t bColStride,
               int64_t c, int64_t cOffset, int64_t cRowStride,
               int64_t cColStride, int64_t accumulate);
}

namespace ttt::runtime {
/// The name and address of each function above, for a JIT's symbol table.
struct RuntimeSymbol {
  const char *name;
  void *address;
};
/// The runtime functions the ttt-to-cpu code may call.
const RuntimeSymbol *getCPURuntimeSymbols(unsigned &count);
/// The BLAS library loaded (empty when none), for diagnostics.
const char *getLoadedBlasLibrary();
/// Which kernels the loaded BLAS runs, for diagnostics: "<core> kernels" of
/// an OpenBLAS that names its kernel set, MKL's version string, else empty.
const char *getLoadedBlasKernels();

/// What the `ttt_sgemm` calls between `startGemmProfile` and
/// `stopGemmProfile` did: how many there were, their time summed over the
/// threads that made them, and the FLOPs they computed (2 per multiply-add;
/// a Gram product run as SYRK counts the one triangle it computes).
struct GemmProfile {
  uint64_t calls = 0;
  double seconds = 0;
  double flops = 0;
};
/// Resets the counters and starts counting. Not reentrant: one profile at a
/// time per process.
void startGemmProfile();
GemmProfile stopGemmProfile();
} // namespace ttt::runtime

#endif // TTT_RUNTIME_BLASRUNTIME_H
