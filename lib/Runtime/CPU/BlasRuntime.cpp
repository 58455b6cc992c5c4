//===- BlasRuntime.cpp - GEMM calls of the ttt-to-cpu code ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Runtime/BlasRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <utility>

namespace {

// CBLAS's enum values, fixed by the CBLAS standard.
enum CblasLayout { CblasRowMajor = 101 };
enum CblasTranspose { CblasNoTrans = 111, CblasTrans = 112 };

using SgemmFn = void (*)(int layout, int transA, int transB, int m, int n,
                         int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c,
                         int ldc);
using SetThreadsFn = void (*)(int);
using GetParallelFn = int (*)();

struct Blas {
  SgemmFn sgemm = nullptr;
  std::string library;
};

Blas loadBlas() {
  Blas blas;
  std::string chosen;
  if (const char *env = std::getenv("TTT_BLAS_LIBRARY")) {
    if (!*env)
      return blas;
    chosen = env;
  }
  // Debian's threaded OpenBLAS builds, then whatever the loader finds under
  // the usual name. Several of our threads call sgemm at once: the threaded
  // builds lock their buffers for that (pthread first, whose locks do not
  // depend on the OpenMP runtime); the serial build does not, and is
  // refused below wherever it comes from.
  const char *candidates[] = {
      "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
      "/usr/lib/aarch64-linux-gnu/openblas-pthread/libopenblas.so.0",
      "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
      "/usr/lib/aarch64-linux-gnu/openblas-openmp/libopenblas.so.0",
      "libopenblas.so.0"};
  auto tryLoad = [&](const std::string &path) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return false;
    auto sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
    // A sequential OpenBLAS (openblas_get_parallel() == 0) shares its
    // buffers between callers unlocked: concurrent calls corrupt results.
    auto parallel =
        reinterpret_cast<GetParallelFn>(dlsym(handle, "openblas_get_parallel"));
    if (!sgemm || (parallel && parallel() == 0)) {
      dlclose(handle);
      return false;
    }
    // The compiled code runs its own threads over (batch, head, chunk);
    // BLAS threads inside them would only compete for the same cores.
    if (auto setThreads = reinterpret_cast<SetThreadsFn>(
            dlsym(handle, "openblas_set_num_threads")))
      setThreads(1);
    blas.sgemm = sgemm;
    blas.library = path;
    return true;
  };
  if (!chosen.empty()) {
    tryLoad(chosen);
    return blas;
  }
  for (const char *path : candidates)
    if (tryLoad(path))
      break;
  return blas;
}

const Blas &getBlas() {
  static const Blas blas = loadBlas();
  return blas;
}

struct Matrix {
  float *data;
  int64_t rowStride, colStride;
  float &at(int64_t i, int64_t j) const {
    return data[i * rowStride + j * colStride];
  }
};

/// The CBLAS description of a rows x cols matrix in row-major CBLAS terms:
/// whether it is transposed and its leading dimension; false when neither
/// of its strides is 1 (or the other stride is too small for BLAS).
bool asBlasOperand(const Matrix &x, int64_t rows, int64_t cols,
                   bool &transposed, int64_t &ld) {
  // A stride over a dimension of size 1 is never used: any value is fine.
  int64_t rowStride = rows == 1 ? std::max<int64_t>(cols, 1) : x.rowStride;
  int64_t colStride = cols == 1 ? 1 : x.colStride;
  if (colStride == 1 && rowStride >= std::max<int64_t>(cols, 1)) {
    transposed = false;
    ld = rowStride;
    return true;
  }
  colStride = cols == 1 ? std::max<int64_t>(rows, 1) : x.colStride;
  rowStride = rows == 1 ? 1 : x.rowStride;
  if (rowStride == 1 && colStride >= std::max<int64_t>(rows, 1)) {
    transposed = true;
    ld = colStride;
    return true;
  }
  return false;
}

void setZero(const Matrix &x, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      x.at(i, j) = 0.0f;
}

bool fitsInt(int64_t value) { return value >= 0 && value <= 0x7fffffff; }

} // namespace

extern "C" int32_t ttt_blas_available() { return getBlas().sgemm != nullptr; }

extern "C" void ttt_sgemm(int64_t m, int64_t n, int64_t k, int64_t a,
                          int64_t aOffset, int64_t aRowStride,
                          int64_t aColStride, int64_t b, int64_t bOffset,
                          int64_t bRowStride, int64_t bColStride, int64_t c,
                          int64_t cOffset, int64_t cRowStride,
                          int64_t cColStride, int64_t accumulate) {
  if (m <= 0 || n <= 0)
    return;
  Matrix ma{reinterpret_cast<float *>(a) + aOffset, aRowStride, aColStride};
  Matrix mb{reinterpret_cast<float *>(b) + bOffset, bRowStride, bColStride};
  Matrix mc{reinterpret_cast<float *>(c) + cOffset, cRowStride, cColStride};
  if (k <= 0) {
    if (!accumulate)
      setZero(mc, m, n);
    return;
  }
  // A column-major C is the row-major C^T = B^T A^T.
  bool cRowMajor = n == 1 ? true : cColStride == 1;
  if (!cRowMajor && (m == 1 || cRowStride == 1)) {
    std::swap(m, n);
    Matrix at{ma.data, ma.colStride, ma.rowStride};
    Matrix bt{mb.data, mb.colStride, mb.rowStride};
    ma = bt;
    mb = at;
    mc = Matrix{mc.data, mc.colStride, mc.rowStride};
  }
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  bool cTransposed = false;
  if (asBlasOperand(mc, m, n, cTransposed, ldc) && !cTransposed) {
    const Blas &blas = getBlas();
    if (blas.sgemm && asBlasOperand(ma, m, k, transA, lda) &&
        asBlasOperand(mb, k, n, transB, ldb) && fitsInt(m) && fitsInt(n) &&
        fitsInt(k) && fitsInt(lda) && fitsInt(ldb) && fitsInt(ldc)) {
      blas.sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                 transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
                 1.0f, ma.data, int(lda), mb.data, int(ldb),
                 accumulate ? 1.0f : 0.0f, mc.data, int(ldc));
      return;
    }
  }
  // Strides BLAS cannot take (broadcasts, interleaved views): the same sum
  // in the generated loops' (i, k, j) order.
  if (!accumulate)
    setZero(mc, m, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      float x = ma.at(i, p);
      for (int64_t j = 0; j < n; ++j)
        mc.at(i, j) += x * mb.at(p, j);
    }
}

namespace ttt::runtime {
const RuntimeSymbol *getCPURuntimeSymbols(unsigned &count) {
  static const RuntimeSymbol symbols[] = {
      {"ttt_blas_available", reinterpret_cast<void *>(&ttt_blas_available)},
      {"ttt_sgemm", reinterpret_cast<void *>(&ttt_sgemm)}};
  count = sizeof(symbols) / sizeof(symbols[0]);
  return symbols;
}

const char *getLoadedBlasLibrary() { return getBlas().library.c_str(); }
} // namespace ttt::runtime
