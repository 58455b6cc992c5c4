/*===- CudaRuntime.h - the ttt GPU runtime (libttt_cuda_runtime.so) ------===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*
|* The functions that programs compiled by `ttt-to-gpu` call, in plain C:
|* MLIR's `mgpu*` host ABI (what gpu-to-llvm and the gpu.binary translation
|* emit), the memref allocator (`_mlir_memref_to_llvm_alloc/free`, CUDA
|* managed memory), and a few `tttCuda*` functions for the tools that load
|* the library.
|*
|* The library is plain C++ over the CUDA *driver* API and depends on nothing
|* else: it has no link-time dependency on libcuda, but opens libcuda.so.1
|* (or $TTT_CUDA_DRIVER) with dlopen on first use, so every machine can build
|* and load it, and a machine without a GPU gets a clear message.
|*
|* Environment:
|*   TTT_CUDA_DRIVER   path of the driver library (default: libcuda.so.1)
|*   TTT_CUDA_DEVICE   device ordinal (default: 0)
|*   TTT_CUBLAS_LIBRARY  cuBLAS for ttt_cublas_sgemm (default: the usual
|*                     sonames; empty: none, the generated loops run)
|*
|* Errors: a failing CUDA call inside an mgpu* or allocator function calls
|* the error handler with one line ("cuLaunchKernel: CUDA_ERROR_... (...)");
|* the default handler prints "ttt_cuda_runtime: error: ..." to stderr and
|* aborts. Launches are synchronous as the generated code makes them
|* (stream create, launch, synchronize, destroy), so an error is reported by
|* the call that caused it or by the synchronize right after.
|*
\*===----------------------------------------------------------------------===*/

#ifndef TTT_RUNTIME_CUDARUNTIME_H
#define TTT_RUNTIME_CUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------- tool interface ---------------------------===*/

/** Loads the driver, initializes it and opens the device. Returns 0 when a
 *  device is usable; otherwise non-zero, with a one-line reason in `message`
 *  (NUL-terminated, at most `size` bytes), such as
 *  "libcuda.so.1: cannot open shared object file: No such file or directory"
 *  or "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
 *  Safe to call more than once; the result of the first call sticks. */
int tttCudaProbe(char *message, size_t size);

/** After a successful probe: "NAME (sm_XY, N MiB, driver A.B)". */
int tttCudaDescribeDevice(char *message, size_t size);

/** What a failing CUDA call reports to; it must not return (if it does,
 *  the runtime aborts). NULL restores the default handler. */
typedef void (*TTTCudaErrorHandler)(const char *message);
void tttCudaSetErrorHandler(TTTCudaErrorHandler handler);

/** Returns the buffers the allocator keeps for reuse to the driver. */
void tttCudaReleaseCachedMemory(void);

/** What the programs asked of the runtime since the last call, then starts
 *  counting again: kernel launches, cuBLAS GEMMs and GEMMs that cuBLAS could
 *  not take (run on the host over managed memory), host seconds spent
 *  waiting for them (cuStreamSynchronize and cuCtxSynchronize: the kernels'
 *  time, page migrations of managed memory included), buffers served from
 *  the cache and newly allocated, and the new bytes. */
typedef struct {
  uint64_t launches;
  uint64_t gemms;
  uint64_t hostGemms;
  double waitSeconds;
  uint64_t cachedBuffers;
  uint64_t newBuffers;
  uint64_t newBytes;
} TTTCudaCounters;
void tttCudaTakeCounters(TTTCudaCounters *counters);

/*===------------------- memref allocator (generic) ---------------------===*/

/* The names are the ones MLIR's memref-to-LLVM lowering calls. */
/* NOLINTBEGIN(readability-identifier-naming) */
/** CUDA managed memory (cuMemAllocManaged), usable by host and device,
 *  256-byte aligned; freed buffers are cached by size for reuse. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
/** Frees a buffer of the two functions above (pointers it did not allocate
 *  go to free()). Programs of ttt-to-gpu return buffers to free with it. */
void _mlir_memref_to_llvm_free(void *ptr);
/* NOLINTEND(readability-identifier-naming) */

/*===------------------------- MLIR's mgpu* ABI --------------------------===*/

/* Modules and kernels. `data` is a cubin or fatbin (mgpuModuleLoad) or
 * NUL-terminated PTX text (mgpuModuleLoadJIT, compiled by the driver). */
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);

/* Streams and events. */
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);

/* Memory (gpu.alloc / dealloc / memcpy / memset, gpu.host_register). */
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
void mgpuMemHostUnregister(void *ptr);
/* `descriptor` points at a ranked memref descriptor of rank `rank`. */
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes);
void mgpuSetDefaultDevice(int32_t device);

/*===------------------------- GEMMs (cuBLAS) ----------------------------===*/

/** Non-zero when cuBLAS is loaded and has a handle on the runtime's device:
 *  $TTT_CUBLAS_LIBRARY (empty: none), else libcublas.so.13, .so.12, .so or
 *  /usr/local/cuda/lib64/libcublas.so, opened on first use. */
int32_t ttt_cublas_available(void);

/** C (m x n) = A (m x k) * B (k x n), or C += A * B when `accumulate` is
 *  non-zero, on fp32 views given as addresses, element offsets and (row,
 *  column) strides: what ttt-contractions-to-blas{library=cublas} passes.
 *  cublasSgemm_v2 for row- or column-major views, synchronous like the
 *  launches; other strides are computed on the host (managed memory). */
void ttt_cublas_sgemm(int64_t m, int64_t n, int64_t k, int64_t a,
                      int64_t aOffset, int64_t aRowStride, int64_t aColStride,
                      int64_t b, int64_t bOffset, int64_t bRowStride,
                      int64_t bColStride, int64_t c, int64_t cOffset,
                      int64_t cRowStride, int64_t cColStride,
                      int64_t accumulate);
/** The same GEMM on TF32 tensor cores (cuBLAS's TF32 math mode). */
void ttt_cublas_sgemm_tf32(int64_t m, int64_t n, int64_t k, int64_t a,
                           int64_t aOffset, int64_t aRowStride,
                           int64_t aColStride, int64_t b, int64_t bOffset,
                           int64_t bRowStride, int64_t bColStride, int64_t c,
                           int64_t cOffset, int64_t cRowStride,
                           int64_t cColStride, int64_t accumulate);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TTT_RUNTIME_CUDARUNTIME_H */
