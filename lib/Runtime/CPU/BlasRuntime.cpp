//===- BlasRuntime.cpp - GEMM calls of the ttt-to-cpu code ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Runtime/BlasRuntime.h"

#include "../GemmViews.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <utility>

namespace {

// CBLAS's enum values, fixed by the CBLAS standard.
enum CblasLayout { CblasRowMajor = 101 };
enum CblasTranspose { CblasNoTrans = 111, CblasTrans = 112 };
enum CblasUplo { CblasUpper = 121 };

using SgemmFn = void (*)(int layout, int transA, int transB, int m, int n,
                         int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c,
                         int ldc);
using SsyrkFn = void (*)(int layout, int uplo, int trans, int n, int k,
                         float alpha, const float *a, int lda, float beta,
                         float *c, int ldc);
using SetThreadsFn = void (*)(int);
using GetParallelFn = int (*)();
using CoreNameFn = char *(*)();
using MklSetThreadingLayerFn = int (*)(int);
using MklVersionFn = void (*)(char *, int);

// MKL_THREADING_SEQUENTIAL of mkl_service.h.
constexpr int kMklThreadingSequential = 1;

struct Blas {
  SgemmFn sgemm = nullptr;
  SsyrkFn ssyrk = nullptr; // optional
  std::string library;
  std::string kernels; // OpenBLAS's kernel set or MKL's version, when known
};

/// The OpenBLAS kernel set for this x86 CPU's vector extensions, or null.
/// An OpenBLAS older than the CPU does not know its model and falls back to
/// its oldest kernels (Debian 12's 0.3.21 runs SSE3 "Prescott" kernels on
/// 5th-generation Xeons: 5x slower GEMMs); the newest set the CPU supports
/// is what a current OpenBLAS picks for it.
const char *coreForThisCpu() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  return nullptr;
}

/// dlopen(path), with OpenBLAS told this CPU's kernel set unless the user
/// chose one (OPENBLAS_CORETYPE): OpenBLAS reads it while it loads, so it
/// is set for the load only.
void *openBlas(const std::string &path) {
  const char *core =
      std::getenv("OPENBLAS_CORETYPE") ? nullptr : coreForThisCpu();
  if (core)
    setenv("OPENBLAS_CORETYPE", core, /*overwrite=*/0);
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (core)
    unsetenv("OPENBLAS_CORETYPE");
  return handle;
}

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
    void *handle = openBlas(path);
    if (!handle)
      return false;
    // The scipy-openblas wheels prefix every symbol with "scipy_".
    std::string prefix;
    auto sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
    if (!sgemm) {
      prefix = "scipy_";
      sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "scipy_cblas_sgemm"));
    }
    auto symbol = [&](const char *name) {
      return dlsym(handle, (prefix + name).c_str());
    };
    // A sequential OpenBLAS (openblas_get_parallel() == 0) shares its
    // buffers between callers unlocked: concurrent calls corrupt results.
    auto parallel =
        reinterpret_cast<GetParallelFn>(symbol("openblas_get_parallel"));
    if (!sgemm || (parallel && parallel() == 0)) {
      dlclose(handle);
      return false;
    }
    // The compiled code runs its own threads over (batch, head, chunk);
    // BLAS threads inside them would only compete for the same cores.
    if (auto setThreads =
            reinterpret_cast<SetThreadsFn>(symbol("openblas_set_num_threads")))
      setThreads(1);
    // MKL: its sequential layer, which is safe to call from several
    // threads at once and needs no OpenMP runtime of its own. It must be
    // chosen before MKL's first call in the process; if the host program
    // called MKL before, one thread per call is asked for instead.
    if (auto setLayer = reinterpret_cast<MklSetThreadingLayerFn>(
            symbol("MKL_Set_Threading_Layer")))
      if (setLayer(kMklThreadingSequential) != kMklThreadingSequential)
        if (auto setThreads =
                reinterpret_cast<SetThreadsFn>(symbol("MKL_Set_Num_Threads")))
          setThreads(1);
    blas.sgemm = sgemm;
    blas.ssyrk = reinterpret_cast<SsyrkFn>(symbol("cblas_ssyrk"));
    blas.library = path;
    if (auto coreName =
            reinterpret_cast<CoreNameFn>(symbol("openblas_get_corename"))) {
      if (const char *name = coreName())
        blas.kernels = std::string(name) + " kernels";
    } else if (auto version = reinterpret_cast<MklVersionFn>(
                   symbol("MKL_Get_Version_String"))) {
      char text[256] = {};
      version(text, sizeof(text) - 1);
      blas.kernels = text;
    }
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

/// The smallest n for which SYRK and the copy of its triangle beat the GEMM
/// of A A^T. Measured with k = n, one thread (OpenBLAS 0.3.21 SkylakeX
/// kernels and MKL 2026.2 alike): GEMM is faster up to n = 96 (n = 64:
/// 9.6 against 12.4 us, OpenBLAS's small-matrix GEMM kernel), SYRK from
/// n = 128 on (n = 256: 327 against 419 us).
constexpr int64_t kMinSyrkOrder = 128;

/// C = A A^T (C overwritten) through SYRK, which computes one triangle in
/// about half a GEMM's work: the other is copied over. False when the call
/// is not that product, is too small for SYRK to pay, or the views do not
/// suit SYRK.
bool runAsSyrk(const Blas &blas, const ttt::runtime::GemmCall &gemm,
               bool accumulate) {
  using ttt::runtime::fitsInt;
  const ttt::runtime::Matrix &a = gemm.a, &b = gemm.b, &c = gemm.c;
  if (!blas.ssyrk || accumulate || gemm.m != gemm.n || gemm.m < kMinSyrkOrder ||
      b.data != a.data || b.rowStride != a.colStride ||
      b.colStride != a.rowStride || c.colStride != 1 || c.rowStride < gemm.n)
    return false;
  // A (n x k) row-major, or stored as its row-major transpose.
  bool transposed = false;
  int64_t lda = 0;
  if (!ttt::runtime::asBlasOperand(a, gemm.m, gemm.k, transposed, lda) ||
      !fitsInt(gemm.n) || !fitsInt(gemm.k) || !fitsInt(lda) ||
      !fitsInt(c.rowStride))
    return false;
  blas.ssyrk(CblasRowMajor, CblasUpper, transposed ? CblasTrans : CblasNoTrans,
             int(gemm.n), int(gemm.k), 1.0f, a.data, int(lda), 0.0f, c.data,
             int(c.rowStride));
  for (int64_t i = 1; i < gemm.n; ++i)
    for (int64_t j = 0; j < i; ++j)
      c.at(i, j) = c.at(j, i);
  return true;
}

/// Runs one `ttt_sgemm` call; returns the multiply-adds it computed (SYRK
/// computes one triangle of its square).
double runGemm(ttt::runtime::GemmCall &gemm, bool accumulate) {
  const Blas &blas = getBlas();
  double macs = double(gemm.m) * double(gemm.n) * double(gemm.k);
  if (gemm.k > 0 && blas.sgemm && runAsSyrk(blas, gemm, accumulate))
    return double(gemm.m) * double(gemm.m + 1) / 2 * double(gemm.k);
  if (gemm.k > 0 && blas.sgemm && gemm.prepare()) {
    blas.sgemm(CblasRowMajor, gemm.transA ? CblasTrans : CblasNoTrans,
               gemm.transB ? CblasTrans : CblasNoTrans, int(gemm.m),
               int(gemm.n), int(gemm.k), 1.0f, gemm.a.data, int(gemm.lda),
               gemm.b.data, int(gemm.ldb), accumulate ? 1.0f : 0.0f,
               gemm.c.data, int(gemm.ldc));
    return macs;
  }
  // No reduction (k = 0), or strides BLAS cannot take (broadcasts,
  // interleaved views).
  gemm.runLoops(accumulate);
  return macs;
}

// The GEMM profile (ttt-run --profile-gemm). Counters rather than a lock:
// several threads call at once, and an unprofiled call only reads the flag.
std::atomic<bool> profiling{false};
std::atomic<uint64_t> profiledCalls{0};
std::atomic<uint64_t> profiledNanoseconds{0};
std::atomic<uint64_t> profiledMultiplyAdds{0};

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
  ttt::runtime::GemmCall gemm = ttt::runtime::makeGemmCall(
      m, n, k, a, aOffset, aRowStride, aColStride, b, bOffset, bRowStride,
      bColStride, c, cOffset, cRowStride, cColStride);
  if (!profiling.load(std::memory_order_relaxed)) {
    runGemm(gemm, accumulate != 0);
    return;
  }
  auto start = std::chrono::steady_clock::now();
  double macs = runGemm(gemm, accumulate != 0);
  auto elapsed = std::chrono::steady_clock::now() - start;
  profiledCalls.fetch_add(1, std::memory_order_relaxed);
  profiledNanoseconds.fetch_add(
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed)
                   .count()),
      std::memory_order_relaxed);
  profiledMultiplyAdds.fetch_add(uint64_t(macs), std::memory_order_relaxed);
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
const char *getLoadedBlasKernels() { return getBlas().kernels.c_str(); }

void startGemmProfile() {
  profiledCalls = 0;
  profiledNanoseconds = 0;
  profiledMultiplyAdds = 0;
  profiling = true;
}

GemmProfile stopGemmProfile() {
  profiling = false;
  GemmProfile profile;
  profile.calls = profiledCalls;
  profile.seconds = double(profiledNanoseconds) * 1e-9;
  profile.flops = 2 * double(profiledMultiplyAdds);
  return profile;
}
} // namespace ttt::runtime
