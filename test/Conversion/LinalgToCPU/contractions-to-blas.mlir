// ttt-contractions-to-blas: every fp32 C += A * B on buffers becomes a GEMM
// call per point of its batch loops, guarded by the run-time check for a
// BLAS library; the original op stays as the fallback.
// RUN: ttt-opt %s --ttt-contractions-to-blas --split-input-file | FileCheck %s
// RUN: ttt-opt %s --ttt-contractions-to-blas=library=cublas --split-input-file \
// RUN:   | FileCheck %s --check-prefix=CUBLAS
// RUN: not ttt-opt %s --ttt-contractions-to-blas=library=mkl --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADLIB
// BADLIB: error: ttt-contractions-to-blas: unknown library 'mkl' (expected 'blas', 'cublas' or 'cublas-tf32')

#mk = affine_map<(i, k, j) -> (i, k)>
#kn = affine_map<(i, k, j) -> (k, j)>
#mn = affine_map<(i, k, j) -> (i, j)>

// A plain matmul: one call with the row and column strides of each view,
// adding to C (accumulate = 1).
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: memref<64x32xf32>, %[[B:.+]]: memref<32x16xf32>, %[[C:.+]]: memref<64x16xf32>)
// CHECK: %[[ACC1:.+]] = arith.constant 1 : index
// CHECK: %[[FLAG:.+]] = call @ttt_blas_available() : () -> i32
// CHECK: %[[HAVE:.+]] = arith.cmpi ne, %[[FLAG]], %{{.+}} : i32
// CHECK: scf.if %[[HAVE]] {
// CHECK-DAG: %[[M:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[N:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[K:.+]] = arith.constant 32 : index
// CHECK: %{{.+}}, %[[AOFF:.+]], %{{.+}}:2, %[[ASTR:.+]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[APTR:.+]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[BPTR:.+]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[CPTR:.+]] = memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: call @ttt_sgemm(%[[M]], %[[N]], %[[K]], %[[APTR]], %[[AOFF]], %[[ASTR]]#0, %[[ASTR]]#1, %[[BPTR]], {{.*}}, %[[CPTR]], %{{.+}}, %{{.+}}, %{{.+}}, %[[ACC1]])
// CHECK: } else {
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<64x32xf32>, memref<32x16xf32>) outs(%[[C]] : memref<64x16xf32>)
// CHECK: }
// CHECK: func.func private @ttt_blas_available() -> i32
// CHECK: func.func private @ttt_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x16xf32>, %c: memref<64x16xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x16xf32>) outs(%c : memref<64x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A transposed operand (B read as (j, k)) is passed with its strides
// swapped: the runtime sees a column-major B and calls BLAS with a transpose.
// CHECK-LABEL: func.func @transposed_b
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<16x32xf32>
// CHECK: %{{.+}}, %[[BOFF:.+]], %{{.+}}:2, %[[BSTR:.+]]:2 = memref.extract_strided_metadata %[[B]]
// CHECK: %[[BPTR:.+]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: call @ttt_sgemm({{.*}}, %[[BPTR]], %[[BOFF]], %[[BSTR]]#1, %[[BSTR]]#0,
func.func @transposed_b(%a: memref<64x32xf32>, %b: memref<16x32xf32>, %c: memref<64x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (j, k)>,
                                   affine_map<(i, k, j) -> (i, j)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x32xf32>, memref<16x32xf32>) outs(%c : memref<64x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %y, %x : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batched over (b, h) with a per-head weight shared by every sample (read
// without b): one call per (b, h), in an scf.parallel over both; the offsets
// advance by the strides of the batch dimensions each view has.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[X:.+]]: memref<?x4x?x8xf32>, %[[W:.+]]: memref<4x8x16xf32>, %[[Y:.+]]: memref<?x4x?x16xf32>)
// CHECK: scf.if
// CHECK: %[[B:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[T:.+]] = memref.dim %[[X]], %c2
// CHECK: scf.parallel (%[[BI:.+]], %[[HI:.+]]) = (%{{.+}}, %{{.+}}) to (%[[B]], %c4) step
// CHECK: %{{.+}}, %[[XOFF:.+]], %{{.+}}:4, %[[XSTR:.+]]:4 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[XB:.+]] = arith.muli %[[BI]], %[[XSTR]]#0
// CHECK: %[[XO1:.+]] = arith.addi %[[XOFF]], %[[XB]]
// CHECK: %[[XH:.+]] = arith.muli %[[HI]], %[[XSTR]]#1
// CHECK: %[[XO2:.+]] = arith.addi %[[XO1]], %[[XH]]
// CHECK: %{{.+}}, %[[WOFF:.+]], %{{.+}}:3, %[[WSTR:.+]]:3 = memref.extract_strided_metadata %[[W]]
// CHECK: %[[WH:.+]] = arith.muli %[[HI]], %[[WSTR]]#0
// CHECK: %[[WO:.+]] = arith.addi %[[WOFF]], %[[WH]]
// CHECK: call @ttt_sgemm(%[[T]], %c16, %c8, %{{.+}}, %[[XO2]], %[[XSTR]]#2, %[[XSTR]]#3, %{{.+}}, %[[WO]], %[[WSTR]]#1, %[[WSTR]]#2,
// CHECK: } else {
// CHECK: linalg.generic
// With cuBLAS (ttt-to-gpu's contractions=cublas) the host calls one GEMM
// after the other on device buffers: the batch loops are scf.for loops.
// CUBLAS-LABEL: func.func @batched
// CUBLAS: %[[OK:.+]] = call @ttt_cublas_available() : () -> i32
// CUBLAS: scf.if
// CUBLAS: scf.for %[[BI:.+]] = %{{.+}} to %{{.+}} step
// CUBLAS-NEXT: scf.for %[[HI:.+]] = %{{.+}} to %{{.+}} step
// CUBLAS-NOT: scf.parallel
// CUBLAS: call @ttt_cublas_sgemm(
// CUBLAS: } else {
// CUBLAS: linalg.generic
// CUBLAS: func.func private @ttt_cublas_available() -> i32
// CUBLAS: func.func private @ttt_cublas_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func @batched(%x: memref<?x4x?x8xf32>, %w: memref<4x8x16xf32>, %y: memref<?x4x?x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, t, k, j) -> (b, h, t, k)>,
                                   affine_map<(b, h, t, k, j) -> (h, k, j)>,
                                   affine_map<(b, h, t, k, j) -> (b, h, t, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<?x4x?x8xf32>, memref<4x8x16xf32>) outs(%y : memref<?x4x?x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not GEMMs: a body that is not acc + a * b, two reduction loops, f64, and
// tensors (before bufferization). They stay as they are.
// CHECK-LABEL: func.func @not_gemms
// CHECK-NOT: ttt_sgemm
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: ttt_sgemm
func.func @not_gemms(%a: memref<8x8xf32>, %c: memref<8x8xf32>, %s: memref<f32>,
                     %a64: memref<8x8xf64>, %c64: memref<8x8xf64>,
                     %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>,
                                   affine_map<(i, k, j) -> (i, j)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %m = arith.maximumf %acc, %p : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>,
                                   affine_map<(i, k, j) -> (i, j)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a64, %a64 : memref<8x8xf64>, memref<8x8xf64>) outs(%c64 : memref<8x8xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  }
  %r = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>,
                                        affine_map<(i, k, j) -> (i, j)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%t, %t : tensor<8x8xf32>, tensor<8x8xf32>) outs(%t : tensor<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %acc, %p : f32
    linalg.yield %q : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A named matmul whose C is zero-filled just before: the fill moves to the
// fallback branch and the GEMM overwrites C (accumulate = 0).
// CHECK-LABEL: func.func @named_overwrite
// CHECK-SAME: %[[C:[a-z0-9]+]]: memref<8x4xf32>
// CHECK: %[[ACC0:.+]] = arith.constant 0 : index
// CHECK: scf.if
// CHECK-NOT: linalg.fill
// CHECK: call @ttt_sgemm({{.*}}, %[[ACC0]])
// CHECK: } else {
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[C]] : memref<8x4xf32>)
// CHECK-NEXT: linalg.generic
func.func @named_overwrite(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}
