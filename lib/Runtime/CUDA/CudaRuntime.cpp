//===- CudaRuntime.cpp - mgpu* over the CUDA driver API ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// See include/ttt/Runtime/CudaRuntime.h. The driver API is declared here (the
// few types and functions used, with the ABI of cuda.h: versioned entry
// points such as cuMemAlloc_v2 are looked up by their real names), so the
// library builds without the CUDA toolkit and loads without a driver.
//
//===----------------------------------------------------------------------===//

#include "ttt/Runtime/CudaRuntime.h"

#include "../GemmViews.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// The driver API subset
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUjit_option = int;

// The driver API's own names for the values it defines.
// NOLINTBEGIN(readability-identifier-naming)
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 0x1;
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr CUjit_option CU_JIT_OPTIMIZATION_LEVEL = 7;
// NOLINTEND(readability-identifier-naming)

// X(name looked up, member, return, parameters)
#define TTT_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X("cuInit", Init, (unsigned))                                                \
  X("cuDriverGetVersion", DriverGetVersion, (int *))                           \
  X("cuGetErrorName", GetErrorName, (CUresult, const char **))                 \
  X("cuGetErrorString", GetErrorString, (CUresult, const char **))             \
  X("cuDeviceGetCount", DeviceGetCount, (int *))                               \
  X("cuDeviceGet", DeviceGet, (CUdevice *, int))                               \
  X("cuDeviceGetName", DeviceGetName, (char *, int, CUdevice))                 \
  X("cuDeviceGetAttribute", DeviceGetAttribute, (int *, int, CUdevice))        \
  X("cuDeviceTotalMem_v2", DeviceTotalMem, (size_t *, CUdevice))               \
  X("cuDevicePrimaryCtxRetain", DevicePrimaryCtxRetain,                        \
    (CUcontext *, CUdevice))                                                   \
  X("cuCtxSetCurrent", CtxSetCurrent, (CUcontext))                             \
  X("cuCtxSynchronize", CtxSynchronize, ())                                    \
  X("cuModuleLoadData", ModuleLoadData, (CUmodule *, const void *))            \
  X("cuModuleLoadDataEx", ModuleLoadDataEx,                                    \
    (CUmodule *, const void *, unsigned, CUjit_option *, void **))             \
  X("cuModuleUnload", ModuleUnload, (CUmodule))                                \
  X("cuModuleGetFunction", ModuleGetFunction,                                  \
    (CUfunction *, CUmodule, const char *))                                    \
  X("cuLaunchKernel", LaunchKernel,                                            \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X("cuStreamCreate", StreamCreate, (CUstream *, unsigned))                    \
  X("cuStreamSynchronize", StreamSynchronize, (CUstream))                      \
  X("cuStreamDestroy_v2", StreamDestroy, (CUstream))                           \
  X("cuStreamWaitEvent", StreamWaitEvent, (CUstream, CUevent, unsigned))       \
  X("cuEventCreate", EventCreate, (CUevent *, unsigned))                       \
  X("cuEventDestroy_v2", EventDestroy, (CUevent))                              \
  X("cuEventSynchronize", EventSynchronize, (CUevent))                         \
  X("cuEventRecord", EventRecord, (CUevent, CUstream))                         \
  X("cuMemAlloc_v2", MemAlloc, (CUdeviceptr *, size_t))                        \
  X("cuMemAllocManaged", MemAllocManaged, (CUdeviceptr *, size_t, unsigned))   \
  X("cuMemFree_v2", MemFree, (CUdeviceptr))                                    \
  X("cuMemcpyAsync", MemcpyAsync,                                              \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X("cuMemsetD32Async", MemsetD32Async,                                        \
    (CUdeviceptr, unsigned, size_t, CUstream))                                 \
  X("cuMemsetD16Async", MemsetD16Async,                                        \
    (CUdeviceptr, unsigned short, size_t, CUstream))                           \
  X("cuMemHostRegister_v2", MemHostRegister, (void *, size_t, unsigned))       \
  X("cuMemHostUnregister", MemHostUnregister, (void *))

struct DriverApi {
// `params` is a parenthesized parameter list, so it cannot be parenthesized.
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define TTT_DECLARE(name, member, params) CUresult(*member) params = nullptr;
  TTT_CUDA_DRIVER_FUNCTIONS(TTT_DECLARE)
#undef TTT_DECLARE
};

/// Names of the errors a machine without a working GPU typically gets, for
/// when the driver cannot name them itself (a stub library, say).
const char *getKnownErrorName(CUresult result) {
  switch (result) {
  case 1:
    return "CUDA_ERROR_INVALID_VALUE";
  case 2:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case 34:
    return "CUDA_ERROR_STUB_LIBRARY";
  case 35:
    return "CUDA_ERROR_INSUFFICIENT_DRIVER";
  case 46:
    return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  case 101:
    return "CUDA_ERROR_INVALID_DEVICE";
  case 209:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case 218:
    return "CUDA_ERROR_INVALID_PTX";
  case 222:
    return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case 304:
    return "CUDA_ERROR_OPERATING_SYSTEM";
  case 700:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case 719:
    return "CUDA_ERROR_LAUNCH_FAILED";
  case 803:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case 804:
    return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  default:
    return nullptr;
  }
}

/// Descriptions of the errors of a machine without a usable GPU, for when
/// the driver cannot describe them.
const char *getKnownErrorText(CUresult result) {
  switch (result) {
  case 34:
    return "the library is CUDA's link-time stub, not a driver";
  case 35:
    return "the installed CUDA driver is older than the CUDA runtime";
  case 100:
    return "no CUDA-capable device is detected";
  default:
    return nullptr;
  }
}

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  return buffer;
}

void copyMessage(const std::string &text, char *out, size_t size) {
  if (!out || !size)
    return;
  size_t n = text.size() < size - 1 ? text.size() : size - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

std::mutex handlerMutex;
TTTCudaErrorHandler errorHandler = nullptr;

/// mgpuSetDefaultDevice's choice, read when the runtime starts.
int requestedDevice = -1;
bool started = false;

[[noreturn]] void fail(const std::string &message) {
  TTTCudaErrorHandler handler;
  {
    std::lock_guard<std::mutex> lock(handlerMutex);
    handler = errorHandler;
  }
  if (handler)
    handler(message.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "ttt_cuda_runtime: error: %s\n", message.c_str());
  std::abort();
}

//===----------------------------------------------------------------------===//
// The runtime: driver, device, context, caches
//===----------------------------------------------------------------------===//

class Runtime {
public:
  static Runtime &get() {
    static Runtime *runtime = new Runtime(); // never destroyed: atexit order
    return *runtime;
  }

  int getDeviceOrdinal() const { return ordinal; }

  /// Empty when the device is usable, else why not.
  const std::string &getError() const { return error; }

  /// The driver, with the device's context current on this thread; reports
  /// through fail() when there is no usable device.
  const DriverApi &use() {
    if (!error.empty())
      fail("no CUDA driver/GPU found (" + error + ")");
    thread_local CUcontext current = nullptr;
    if (current != context) {
      check(api.CtxSetCurrent(context), "cuCtxSetCurrent");
      current = context;
    }
    return api;
  }

  /// "cuFoo: CUDA_ERROR_BAR (description)".
  std::string describe(CUresult result, const char *what) const {
    const char *name = nullptr, *text = nullptr;
    if (api.GetErrorName && api.GetErrorName(result, &name) != CUDA_SUCCESS)
      name = nullptr;
    if (api.GetErrorString && api.GetErrorString(result, &text) != CUDA_SUCCESS)
      text = nullptr;
    if (!name)
      name = getKnownErrorName(result);
    if (!text)
      text = getKnownErrorText(result);
    std::string out = std::string(what) + ": ";
    out += name ? name : format("CUDA error %d", result);
    if (text)
      out += std::string(" (") + text + ")";
    return out;
  }

  void check(CUresult result, const char *what) const {
    if (result != CUDA_SUCCESS)
      fail(describe(result, what));
  }

  std::string describeDevice() {
    char name[256] = {0};
    int major = 0, minor = 0, version = 0;
    size_t bytes = 0;
    api.DeviceGetName(name, sizeof(name) - 1, device);
    api.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           device);
    api.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           device);
    api.DeviceTotalMem(&bytes, device);
    api.DriverGetVersion(&version);
    return format("%s (sm_%d%d, %zu MiB, driver %d.%d)", name, major, minor,
                  bytes >> 20, version / 1000, (version % 1000) / 10);
  }

  // Streams: the generated code creates and destroys one per launch; keep
  // them for reuse.
  CUstream takeStream() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!streams.empty()) {
        CUstream stream = streams.back();
        streams.pop_back();
        return stream;
      }
    }
    CUstream stream = nullptr;
    check(use().StreamCreate(&stream, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate");
    return stream;
  }
  void returnStream(CUstream stream) {
    std::lock_guard<std::mutex> lock(mutex);
    streams.push_back(stream);
  }

  // Managed memory, cached by rounded size. Kernels run synchronously, so a
  // buffer is free for reuse as soon as the program frees it.
  void *allocate(size_t size, size_t alignment) {
    if (alignment < 256)
      alignment = 256;
    // Room to align the start ourselves: the driver aligns to 256 bytes,
    // but callers may ask for more (and other drivers may align less).
    size_t rounded = (size + 255) / 256 * 256 + alignment;
    CUdeviceptr base = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = cache.find(rounded);
      if (it != cache.end() && !it->second.empty()) {
        base = it->second.back();
        it->second.pop_back();
        cachedBytes -= rounded;
        ++counters.cachedBuffers;
      }
    }
    if (!base) {
      const DriverApi &driver = use();
      CUresult result =
          driver.MemAllocManaged(&base, rounded, CU_MEM_ATTACH_GLOBAL);
      if (result != CUDA_SUCCESS) {
        releaseCache();
        result = driver.MemAllocManaged(&base, rounded, CU_MEM_ATTACH_GLOBAL);
      }
      if (result != CUDA_SUCCESS)
        fail(describe(result, "cuMemAllocManaged") +
             format(" allocating %zu bytes", size));
      count([&](TTTCudaCounters &c) {
        ++c.newBuffers;
        c.newBytes += rounded;
      });
    }
    CUdeviceptr aligned = (base + alignment - 1) / alignment * alignment;
    std::lock_guard<std::mutex> lock(mutex);
    live[reinterpret_cast<void *>(aligned)] = {base, rounded};
    return reinterpret_cast<void *>(aligned);
  }

  /// False if `ptr` is not one of ours.
  bool release(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(ptr);
    if (it == live.end())
      return false;
    cache[it->second.size].push_back(it->second.base);
    cachedBytes += it->second.size;
    live.erase(it);
    return true;
  }

  void releaseCache() {
    std::map<size_t, std::vector<CUdeviceptr>> buffers;
    {
      std::lock_guard<std::mutex> lock(mutex);
      buffers.swap(cache);
      cachedBytes = 0;
    }
    if (!error.empty())
      return;
    const DriverApi &driver = use();
    for (auto &[size, list] : buffers)
      for (CUdeviceptr base : list)
        check(driver.MemFree(base), "cuMemFree");
  }

private:
  Runtime() {
    started = true;
    error = initialize();
  }

  std::string initialize() {
    const char *path = std::getenv("TTT_CUDA_DRIVER");
    std::string name = path && *path ? path : "libcuda.so.1";
    dlerror();
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      std::string reason = why ? why : "cannot be loaded";
      // dlerror() usually starts with the file name already.
      if (reason.rfind(name + ": ", 0) == 0)
        reason = reason.substr(name.size() + 2);
      return name + ": " + reason;
    }
#define TTT_LOOKUP(symbol, member, params)                                     \
  api.member = reinterpret_cast<decltype(api.member)>(dlsym(handle, symbol));  \
  if (!api.member)                                                             \
    return name + ": has no " symbol " (a CUDA driver that is too old?)";
    TTT_CUDA_DRIVER_FUNCTIONS(TTT_LOOKUP)
#undef TTT_LOOKUP

    if (CUresult result = api.Init(0))
      return describe(result, "cuInit");
    int count = 0;
    if (CUresult result = api.DeviceGetCount(&count))
      return describe(result, "cuDeviceGetCount");
    if (count == 0)
      return "the driver reports no CUDA device";
    ordinal = 0;
    if (const char *text = std::getenv("TTT_CUDA_DEVICE"))
      ordinal = std::atoi(text);
    if (requestedDevice >= 0)
      ordinal = requestedDevice;
    if (ordinal < 0 || ordinal >= count)
      return format("device %d was asked for, but there %s %d", ordinal,
                    count == 1 ? "is" : "are", count);
    if (CUresult result = api.DeviceGet(&device, ordinal))
      return describe(result, "cuDeviceGet");
    if (CUresult result = api.DevicePrimaryCtxRetain(&context, device))
      return describe(result, "cuDevicePrimaryCtxRetain");
    return "";
  }

  struct Allocation {
    CUdeviceptr base;
    size_t size;
  };

  void *handle = nullptr;
  DriverApi api;
  std::string error;
  int ordinal = -1;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::mutex mutex;
  std::vector<CUstream> streams;
  std::map<size_t, std::vector<CUdeviceptr>> cache;
  std::unordered_map<void *, Allocation> live;
  size_t cachedBytes = 0;

public:
  template <typename Update> void count(Update update) {
    std::lock_guard<std::mutex> lock(mutex);
    update(counters);
  }

  /// `result` of a call that waits for the device, timed into the counters.
  template <typename Call> CUresult timedWait(Call call) {
    auto start = std::chrono::steady_clock::now();
    CUresult result = call();
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    count([&](TTTCudaCounters &c) { c.waitSeconds += waited.count(); });
    return result;
  }

  TTTCudaCounters takeCounters() {
    std::lock_guard<std::mutex> lock(mutex);
    TTTCudaCounters taken = counters;
    counters = {};
    return taken;
  }

private:
  TTTCudaCounters counters = {}; // guarded by `mutex`
};

CUdeviceptr toDevice(void *ptr) { return reinterpret_cast<CUdeviceptr>(ptr); }

/// A memref descriptor of any rank: {allocated, aligned, offset, sizes[rank],
/// strides[rank]}.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

} // namespace

//===----------------------------------------------------------------------===//
// Tool interface
//===----------------------------------------------------------------------===//

extern "C" int tttCudaProbe(char *message, size_t size) {
  const std::string &error = Runtime::get().getError();
  copyMessage(error, message, size);
  return error.empty() ? 0 : 1;
}

extern "C" int tttCudaDescribeDevice(char *message, size_t size) {
  Runtime &runtime = Runtime::get();
  if (!runtime.getError().empty()) {
    copyMessage(runtime.getError(), message, size);
    return 1;
  }
  runtime.use();
  copyMessage(runtime.describeDevice(), message, size);
  return 0;
}

extern "C" void tttCudaSetErrorHandler(TTTCudaErrorHandler handler) {
  std::lock_guard<std::mutex> lock(handlerMutex);
  errorHandler = handler;
}

extern "C" void tttCudaReleaseCachedMemory(void) {
  Runtime::get().releaseCache();
}

extern "C" void tttCudaTakeCounters(TTTCudaCounters *counters) {
  *counters = Runtime::get().takeCounters();
}

//===----------------------------------------------------------------------===//
// Allocator
//===----------------------------------------------------------------------===//

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return Runtime::get().allocate(size, 256);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return Runtime::get().allocate(size, alignment);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  if (ptr && !Runtime::get().release(ptr))
    std::free(ptr);
}

//===----------------------------------------------------------------------===//
// mgpu*: modules and kernels
//===----------------------------------------------------------------------===//

extern "C" void *mgpuModuleLoad(void *data, size_t /*size*/) {
  Runtime &runtime = Runtime::get();
  CUmodule module = nullptr;
  runtime.check(runtime.use().ModuleLoadData(&module, data),
                "cuModuleLoadData");
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  Runtime &runtime = Runtime::get();
  const DriverApi &driver = runtime.use();
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log) - 1)),
                    reinterpret_cast<void *>(intptr_t(optLevel))};
  CUmodule module = nullptr;
  CUresult result = driver.ModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS) {
    std::string message = runtime.describe(result, "cuModuleLoadDataEx (PTX)");
    for (char &c : log)
      if (c == '\n')
        c = ' ';
    if (log[0])
      message += std::string(": ") + log;
    fail(message);
  }
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  Runtime &runtime = Runtime::get();
  if (!runtime.getError().empty())
    return; // at exit, after a failure
  CUresult result = runtime.use().ModuleUnload(static_cast<CUmodule>(module));
  // A program's destructor runs at exit, possibly after the driver has shut
  // down, which frees every module anyway.
  if (result != CUDA_ERROR_DEINITIALIZED)
    runtime.check(result, "cuModuleUnload");
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  Runtime &runtime = Runtime::get();
  CUfunction function = nullptr;
  CUresult result = runtime.use().ModuleGetFunction(
      &function, static_cast<CUmodule>(module), name);
  if (result != CUDA_SUCCESS)
    fail(runtime.describe(result, "cuModuleGetFunction") + " for kernel '" +
         name + "'");
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  Runtime &runtime = Runtime::get();
  const DriverApi &driver = runtime.use();
  if (gridX < 1 || gridY < 1 || gridZ < 1 || blockX < 1 || blockY < 1 ||
      blockZ < 1 || gridX > 0x7fffffff || gridY > 65535 || gridZ > 65535 ||
      blockX * blockY * blockZ > 1024)
    fail(format("cuLaunchKernel: launch dimensions out of range: grid "
                "(%lld, %lld, %lld), block (%lld, %lld, %lld)",
                (long long)gridX, (long long)gridY, (long long)gridZ,
                (long long)blockX, (long long)blockY, (long long)blockZ));
  runtime.count([](TTTCudaCounters &c) { ++c.launches; });
  runtime.check(driver.LaunchKernel(static_cast<CUfunction>(function), gridX,
                                    gridY, gridZ, blockX, blockY, blockZ, smem,
                                    static_cast<CUstream>(stream), params,
                                    extra),
                "cuLaunchKernel");
}

//===----------------------------------------------------------------------===//
// mgpu*: streams and events
//===----------------------------------------------------------------------===//

extern "C" void *mgpuStreamCreate(void) { return Runtime::get().takeStream(); }

extern "C" void mgpuStreamDestroy(void *stream) {
  Runtime::get().returnStream(static_cast<CUstream>(stream));
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  Runtime &runtime = Runtime::get();
  const DriverApi &driver = runtime.use();
  runtime.check(runtime.timedWait([&] {
    return driver.StreamSynchronize(static_cast<CUstream>(stream));
  }),
                "cuStreamSynchronize (a kernel failed)");
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().StreamWaitEvent(static_cast<CUstream>(stream),
                                              static_cast<CUevent>(event), 0),
                "cuStreamWaitEvent");
}

extern "C" void *mgpuEventCreate(void) {
  Runtime &runtime = Runtime::get();
  CUevent event = nullptr;
  runtime.check(runtime.use().EventCreate(&event, CU_EVENT_DISABLE_TIMING),
                "cuEventCreate");
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().EventDestroy(static_cast<CUevent>(event)),
                "cuEventDestroy");
}

extern "C" void mgpuEventSynchronize(void *event) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().EventSynchronize(static_cast<CUevent>(event)),
                "cuEventSynchronize");
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().EventRecord(static_cast<CUevent>(event),
                                          static_cast<CUstream>(stream)),
                "cuEventRecord");
}

//===----------------------------------------------------------------------===//
// mgpu*: memory
//===----------------------------------------------------------------------===//

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool isHostShared) {
  Runtime &runtime = Runtime::get();
  const DriverApi &driver = runtime.use();
  CUdeviceptr ptr = 0;
  if (sizeBytes == 0)
    sizeBytes = 1;
  if (isHostShared)
    runtime.check(driver.MemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL),
                  "cuMemAllocManaged");
  else
    runtime.check(driver.MemAlloc(&ptr, sizeBytes), "cuMemAlloc");
  return reinterpret_cast<void *>(ptr);
}

extern "C" void mgpuMemFree(void *ptr, void * /*stream*/) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().MemFree(toDevice(ptr)), "cuMemFree");
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().MemcpyAsync(toDevice(dst), toDevice(src),
                                          sizeBytes,
                                          static_cast<CUstream>(stream)),
                "cuMemcpyAsync");
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().MemsetD32Async(toDevice(dst), value, count,
                                             static_cast<CUstream>(stream)),
                "cuMemsetD32Async");
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().MemsetD16Async(toDevice(dst), value, count,
                                             static_cast<CUstream>(stream)),
                "cuMemsetD16Async");
}

extern "C" void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().MemHostRegister(ptr, sizeBytes, 0),
                "cuMemHostRegister");
}

extern "C" void mgpuMemHostUnregister(void *ptr) {
  Runtime &runtime = Runtime::get();
  runtime.check(runtime.use().MemHostUnregister(ptr), "cuMemHostUnregister");
}

extern "C" void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  auto *memref = static_cast<Descriptor *>(descriptor);
  const int64_t *sizes = memref->sizesAndStrides;
  const int64_t *strides = sizes + rank;
  // Only dense buffers: the registered range is the whole of it.
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      fail("mgpuMemHostRegisterMemRef: only dense memrefs can be registered");
    expected *= sizes[d];
  }
  char *ptr = memref->aligned + memref->offset * elementSizeBytes;
  mgpuMemHostRegister(ptr, uint64_t(expected) * elementSizeBytes);
}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t /*rank*/, void *descriptor,
                                            int64_t elementSizeBytes) {
  auto *memref = static_cast<Descriptor *>(descriptor);
  mgpuMemHostUnregister(memref->aligned + memref->offset * elementSizeBytes);
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  // The runtime opens one device per process, when first used.
  if (!started) {
    requestedDevice = device;
    return;
  }
  Runtime &runtime = Runtime::get();
  if (runtime.getError().empty() && runtime.getDeviceOrdinal() != device)
    fail(format("mgpuSetDefaultDevice(%d): the runtime already uses device "
                "%d",
                device, runtime.getDeviceOrdinal()));
}

//===----------------------------------------------------------------------===//
// GEMMs through cuBLAS (ttt-contractions-to-blas{library=cublas})
//===----------------------------------------------------------------------===//

namespace {

// cuBLAS's ABI, declared here like the driver's: the library is opened on
// first use ($TTT_CUBLAS_LIBRARY, else the usual sonames), never linked.
using CublasHandle = struct cublasContext *;
using CublasCreateFn = int (*)(CublasHandle *);
using CublasSgemmFn = int (*)(CublasHandle, int transa, int transb, int m,
                              int n, int k, const float *alpha, const float *a,
                              int lda, const float *b, int ldb,
                              const float *beta, float *c, int ldc);
using CublasSetMathModeFn = int (*)(CublasHandle, int mode);
constexpr int kCublasOpN = 0, kCublasOpT = 1;
constexpr int kCublasDefaultMath = 0, kCublasTF32TensorOpMath = 3;

struct Cublas {
  CublasHandle handle = nullptr;
  CublasSgemmFn sgemm = nullptr;
  CublasSetMathModeFn setMathMode = nullptr;
};

Cublas loadCublas() {
  Cublas cublas;
  if (!Runtime::get().getError().empty())
    return cublas;
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("TTT_CUBLAS_LIBRARY")) {
    if (!*env)
      return cublas;
    candidates.push_back(env);
  } else {
    for (const char *name :
         {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
          "/usr/local/cuda/lib64/libcublas.so"})
      candidates.push_back(name);
  }
  for (const std::string &path : candidates) {
    void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library)
      continue;
    auto create =
        reinterpret_cast<CublasCreateFn>(dlsym(library, "cublasCreate_v2"));
    auto sgemm =
        reinterpret_cast<CublasSgemmFn>(dlsym(library, "cublasSgemm_v2"));
    // cuBLAS works in the current context: the runtime's (primary) one.
    Runtime::get().use();
    auto setMathMode = reinterpret_cast<CublasSetMathModeFn>(
        dlsym(library, "cublasSetMathMode"));
    if (create && sgemm && setMathMode && create(&cublas.handle) == 0) {
      cublas.sgemm = sgemm;
      cublas.setMathMode = setMathMode;
      return cublas;
    }
    dlclose(library);
  }
  return cublas;
}

const Cublas &getCublas() {
  static const Cublas cublas = loadCublas();
  return cublas;
}

} // namespace

extern "C" int32_t ttt_cublas_available() {
  return getCublas().sgemm != nullptr;
}

namespace {
void cublasGemm(int64_t m, int64_t n, int64_t k, int64_t a, int64_t aOffset,
                int64_t aRowStride, int64_t aColStride, int64_t b,
                int64_t bOffset, int64_t bRowStride, int64_t bColStride,
                int64_t c, int64_t cOffset, int64_t cRowStride,
                int64_t cColStride, int64_t accumulate, bool tf32) {
  if (m <= 0 || n <= 0)
    return;
  ttt::runtime::GemmCall gemm = ttt::runtime::makeGemmCall(
      m, n, k, a, aOffset, aRowStride, aColStride, b, bOffset, bRowStride,
      bColStride, c, cOffset, cRowStride, cColStride);
  const Cublas &cublas = getCublas();
  Runtime &runtime = Runtime::get();
  const DriverApi &driver = runtime.use();
  if (k > 0 && cublas.sgemm && gemm.prepare()) {
    int status = cublas.setMathMode(
        cublas.handle, tf32 ? kCublasTF32TensorOpMath : kCublasDefaultMath);
    // Row-major C = A B is column-major C^T = B^T A^T: the same memory.
    float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    if (status == 0)
      status = cublas.sgemm(
          cublas.handle, gemm.transB ? kCublasOpT : kCublasOpN,
          gemm.transA ? kCublasOpT : kCublasOpN, int(gemm.n), int(gemm.m),
          int(gemm.k), &alpha, gemm.b.data, int(gemm.ldb), gemm.a.data,
          int(gemm.lda), &beta, gemm.c.data, int(gemm.ldc));
    if (status != 0)
      fail(format("cublasSgemm_v2: status %d (m=%lld n=%lld k=%lld)", status,
                  static_cast<long long>(gemm.m),
                  static_cast<long long>(gemm.n),
                  static_cast<long long>(gemm.k)));
    // Launches are synchronous in this runtime; so is a GEMM.
    runtime.count([](TTTCudaCounters &c) { ++c.gemms; });
    runtime.check(runtime.timedWait([&] { return driver.CtxSynchronize(); }),
                  "cuCtxSynchronize");
    return;
  }
  // No reduction, or views cuBLAS cannot take: the buffers are managed
  // memory, which the host reads and writes once the device is idle.
  runtime.count([](TTTCudaCounters &c) { ++c.hostGemms; });
  runtime.check(driver.CtxSynchronize(), "cuCtxSynchronize");
  gemm.runLoops(accumulate != 0);
}
} // namespace

extern "C" void ttt_cublas_sgemm(int64_t m, int64_t n, int64_t k, int64_t a,
                                 int64_t aOffset, int64_t aRowStride,
                                 int64_t aColStride, int64_t b, int64_t bOffset,
                                 int64_t bRowStride, int64_t bColStride,
                                 int64_t c, int64_t cOffset, int64_t cRowStride,
                                 int64_t cColStride, int64_t accumulate) {
  cublasGemm(m, n, k, a, aOffset, aRowStride, aColStride, b, bOffset,
             bRowStride, bColStride, c, cOffset, cRowStride, cColStride,
             accumulate, /*tf32=*/false);
}

extern "C" void ttt_cublas_sgemm_tf32(
    int64_t m, int64_t n, int64_t k, int64_t a, int64_t aOffset,
    int64_t aRowStride, int64_t aColStride, int64_t b, int64_t bOffset,
    int64_t bRowStride, int64_t bColStride, int64_t c, int64_t cOffset,
    int64_t cRowStride, int64_t cColStride, int64_t accumulate) {
  cublasGemm(m, n, k, a, aOffset, aRowStride, aColStride, b, bOffset,
             bRowStride, bColStride, c, cOffset, cRowStride, cColStride,
             accumulate, /*tf32=*/true);
}
