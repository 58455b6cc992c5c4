//===- GemmViews.h - strided matrices as BLAS operands ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the GEMM entry points of both runtimes (ttt_sgemm over a CBLAS,
// ttt_cublas_sgemm over cuBLAS) share: the strided views the generated code
// passes, their description as BLAS operands, and the loops that compute
// what a BLAS library cannot take. Header-only: each runtime library stands
// alone.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_RUNTIME_GEMMVIEWS_H
#define TTT_LIB_RUNTIME_GEMMVIEWS_H

#include <algorithm>
#include <cstdint>
#include <utility>

namespace ttt::runtime {

/// A strided rows x cols view of fp32 memory.
struct Matrix {
  float *data;
  int64_t rowStride, colStride;
  float &at(int64_t i, int64_t j) const {
    return data[i * rowStride + j * colStride];
  }
  Matrix transposed() const { return Matrix{data, colStride, rowStride}; }
};

/// A rows x cols matrix in row-major BLAS terms: whether it is transposed
/// and its leading dimension; false when neither of its strides is 1 (or
/// the other stride is too small for BLAS).
inline bool asBlasOperand(const Matrix &x, int64_t rows, int64_t cols,
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

inline bool fitsInt(int64_t value) { return value >= 0 && value <= 0x7fffffff; }

/// C (m x n) = A (m x k) * B (k x n), or C += A * B, as one row-major BLAS
/// call can take it: C itself row-major (a column-major C is computed as
/// C^T = B^T A^T), A and B row- or column-major, sizes within int.
struct GemmCall {
  int64_t m, n, k;
  Matrix a, b, c;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;

  /// False when a library cannot take these views (then runLoops).
  bool prepare() {
    bool cRowMajor = n == 1 ? true : c.colStride == 1;
    if (!cRowMajor && (m == 1 || c.rowStride == 1)) {
      std::swap(m, n);
      Matrix at = a.transposed();
      a = b.transposed();
      b = at;
      c = c.transposed();
    }
    bool cTransposed = false;
    return asBlasOperand(c, m, n, cTransposed, ldc) && !cTransposed &&
           asBlasOperand(a, m, k, transA, lda) &&
           asBlasOperand(b, k, n, transB, ldb) && fitsInt(m) && fitsInt(n) &&
           fitsInt(k) && fitsInt(lda) && fitsInt(ldb) && fitsInt(ldc);
  }

  /// The same sum in the generated loops' (i, k, j) order.
  void runLoops(bool accumulate) const {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          c.at(i, j) = 0.0f;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        float x = a.at(i, p);
        for (int64_t j = 0; j < n; ++j)
          c.at(i, j) += x * b.at(p, j);
      }
  }
};

/// The views of ttt_sgemm's and ttt_cublas_sgemm's arguments (addresses,
/// element offsets and strides, as the generated code passes them).
inline GemmCall makeGemmCall(int64_t m, int64_t n, int64_t k, int64_t a,
                             int64_t aOffset, int64_t aRowStride,
                             int64_t aColStride, int64_t b, int64_t bOffset,
                             int64_t bRowStride, int64_t bColStride, int64_t c,
                             int64_t cOffset, int64_t cRowStride,
                             int64_t cColStride) {
  return GemmCall{
      m,
      n,
      k,
      Matrix{reinterpret_cast<float *>(a) + aOffset, aRowStride, aColStride},
      Matrix{reinterpret_cast<float *>(b) + bOffset, bRowStride, bColStride},
      Matrix{reinterpret_cast<float *>(c) + cOffset, cRowStride, cColStride}};
}

} // namespace ttt::runtime

#endif // TTT_LIB_RUNTIME_GEMMVIEWS_H
