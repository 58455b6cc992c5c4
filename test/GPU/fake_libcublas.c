/* A fake cuBLAS (libcublas.so) for testing ttt_cublas_sgemm on machines
 * without a GPU, next to the fake driver (fake_libcuda.c), whose "device"
 * memory is host memory: cublasSgemm_v2 computes the column-major GEMM on
 * the host, as cuBLAS defines it (in fp32 whatever the math mode), so the
 * argument mapping of the runtime
 * (row-major views to cuBLAS's column-major call) is checked numerically.
 * With $FAKE_CUBLAS_LOG set, every call appends a line there:
 *   sgemm <N|T> <N|T> m=M n=N k=K lda=L ldb=L ldc=L beta=B math=<fp32|tf32>
 *
 *   cc -shared -fPIC -o libcublas.so fake_libcublas.c
 */

#include <stdio.h>
#include <stdlib.h>

typedef struct Handle {
  int unused;
} Handle;

static Handle theHandle;
static int mathMode;

int cublasSetMathMode(Handle *handle, int mode) {
  if (handle != &theHandle || (mode != 0 && mode != 3))
    return 7; /* CUBLAS_STATUS_INVALID_VALUE */
  mathMode = mode;
  return 0;
}

int cublasCreate_v2(Handle **handle) {
  *handle = &theHandle;
  return 0;
}

/* Column-major: X(i, j) = x[i + j * ld]; op T reads the transpose. */
static float element(const float *x, int ld, int transposed, int i, int j) {
  return transposed ? x[j + (long)i * ld] : x[i + (long)j * ld];
}

int cublasSgemm_v2(Handle *handle, int transa, int transb, int m, int n, int k,
                   const float *alpha, const float *a, int lda, const float *b,
                   int ldb, const float *beta, float *c, int ldc) {
  if (handle != &theHandle || m < 0 || n < 0 || k < 0 || lda < 1 || ldb < 1 ||
      ldc < m)
    return 7; /* CUBLAS_STATUS_INVALID_VALUE */
  const char *log = getenv("FAKE_CUBLAS_LOG");
  if (log) {
    FILE *f = fopen(log, "a");
    if (f) {
      fprintf(f,
              "sgemm %c %c m=%d n=%d k=%d lda=%d ldb=%d ldc=%d beta=%g "
              "math=%s\n",
              transa ? 'T' : 'N', transb ? 'T' : 'N', m, n, k, lda, ldb, ldc,
              (double)*beta, mathMode == 3 ? "tf32" : "fp32");
      fclose(f);
    }
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p)
        sum += element(a, lda, transa, i, p) * element(b, ldb, transb, p, j);
      float *out = &c[i + (long)j * ldc];
      *out = *alpha * sum + (*beta != 0.0f ? *beta * *out : 0.0f);
    }
  return 0;
}
