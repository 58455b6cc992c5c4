/* A fake CUDA driver (libcuda.so.1) for testing the host side of ttt-to-gpu
 * programs and libttt_cuda_runtime.so on machines without a GPU.
 *
 * It implements the driver functions the runtime looks up: memory comes from
 * calloc (so host and "device" share it, like managed memory), modules are
 * accepted if they look like a cubin (ELF), a fatbinary (0xBA55ED50) or PTX
 * text, and launches are checked and logged, but no kernel runs. With
 * $FAKE_CUDA_LOG set, every module load and launch appends a line there:
 *   load <kind> <bytes>
 *   launch <name> grid=X,Y,Z block=X,Y,Z
 * $FAKE_CUDA_FAIL=<function> makes that function fail with
 * CUDA_ERROR_LAUNCH_FAILED (719), to test error reporting.
 *
 *   cc -shared -fPIC -o libcuda.so.1 fake_libcuda.c
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef struct {
  char name[256];
} Function;

static int fails(const char *function) {
  const char *which = getenv("FAKE_CUDA_FAIL");
  return which && strcmp(which, function) == 0;
}

static void logLine(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
static void logLine(const char *format, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path)
    return;
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  va_list args;
  va_start(args, format);
  vfprintf(f, format, args);
  va_end(args);
  fputc('\n', f);
  fclose(f);
}

#define FAIL_IF(name)                                                          \
  if (fails(name))                                                             \
    return 719;

CUresult cuInit(unsigned flags) {
  (void)flags;
  FAIL_IF("cuInit");
  return 0;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
CUresult cuGetErrorName(CUresult e, const char **s) {
  *s = e == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult e, const char **s) {
  *s = e == 719 ? "unspecified launch failure (fake)" : "unknown error";
  return 0;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return 0;
}
CUresult cuDeviceGet(int *d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? 0 : 101;
}
CUresult cuDeviceGetName(char *name, int len, int d) {
  (void)d;
  snprintf(name, len, "Fake GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attribute, int d) {
  (void)d;
  *v = attribute == 75 ? 9 : 0;
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) {
  (void)d;
  *bytes = (size_t)1 << 30;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) {
  (void)d;
  *ctx = (void *)0x1;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) {
  (void)ctx;
  return 0;
}
CUresult cuCtxSynchronize(void) { return 0; }

static CUresult loadModule(void **module, const void *image, const char *how) {
  const unsigned char *bytes = image;
  const char *kind = "unknown";
  if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
    kind = "cubin";
  else if (bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55 &&
           bytes[3] == 0xba)
    kind = "fatbin";
  else if (strstr((const char *)image, ".version") &&
           strstr((const char *)image, ".target"))
    kind = "ptx";
  logLine("load %s %s", kind, how);
  if (strcmp(kind, "unknown") == 0)
    return 200; /* CUDA_ERROR_INVALID_IMAGE */
  *module = malloc(1);
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) {
  FAIL_IF("cuModuleLoadData");
  return loadModule(module, image, "data");
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            int *options, void **values) {
  (void)n;
  (void)options;
  (void)values;
  FAIL_IF("cuModuleLoadDataEx");
  return loadModule(module, image, "jit");
}
CUresult cuModuleUnload(void *module) {
  free(module);
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module;
  Function *f = calloc(1, sizeof(Function));
  snprintf(f->name, sizeof(f->name), "%s", name);
  *function = f; /* leaked: tests are short */
  return 0;
}
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)smem;
  (void)stream;
  (void)extra;
  FAIL_IF("cuLaunchKernel");
  (void)params;
  logLine("launch %s grid=%u,%u,%u block=%u,%u,%u",
          ((Function *)function)->name, gx, gy, gz, bx, by, bz);
  return 0;
}
CUresult cuStreamCreate(void **s, unsigned flags) {
  (void)flags;
  *s = malloc(1);
  return 0;
}
CUresult cuStreamSynchronize(void *s) {
  (void)s;
  FAIL_IF("cuStreamSynchronize");
  return 0;
}
CUresult cuStreamDestroy_v2(void *s) {
  free(s);
  return 0;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) {
  (void)s;
  (void)e;
  (void)f;
  return 0;
}
CUresult cuEventCreate(void **e, unsigned f) {
  (void)f;
  *e = malloc(1);
  return 0;
}
CUresult cuEventDestroy_v2(void *e) {
  free(e);
  return 0;
}
CUresult cuEventSynchronize(void *e) {
  (void)e;
  return 0;
}
CUresult cuEventRecord(void *e, void *s) {
  (void)e;
  (void)s;
  return 0;
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  *p = (unsigned long long)calloc(1, n ? n : 1);
  return 0;
}
CUresult cuMemAllocManaged(unsigned long long *p, size_t n, unsigned flags) {
  (void)flags;
  FAIL_IF("cuMemAllocManaged");
  *p = (unsigned long long)calloc(1, n ? n : 1);
  return 0;
}
CUresult cuMemFree_v2(unsigned long long p) {
  free((void *)p);
  return 0;
}
CUresult cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n,
                       void *st) {
  (void)st;
  memcpy((void *)d, (void *)s, n);
  return 0;
}
CUresult cuMemsetD32Async(unsigned long long d, unsigned v, size_t n,
                          void *st) {
  (void)st;
  for (size_t i = 0; i < n; ++i)
    ((unsigned *)d)[i] = v;
  return 0;
}
CUresult cuMemsetD16Async(unsigned long long d, unsigned short v, size_t n,
                          void *st) {
  (void)st;
  for (size_t i = 0; i < n; ++i)
    ((unsigned short *)d)[i] = v;
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) {
  (void)p;
  (void)n;
  (void)f;
  return 0;
}
CUresult cuMemHostUnregister(void *p) {
  (void)p;
  return 0;
}
