// ttt-contractions-to-blas with threads=N: a GEMM that no parallel loop
// encloses (a layer of one stream) and that has fewer batch points than
// threads is cut into blocks of its longer side, one call per block, as a
// parallel loop that OpenMP shares out. (--canonicalize folds the decision
// for static sizes.)
// RUN: ttt-opt %s --ttt-contractions-to-blas=threads=4 --canonicalize \
// RUN:   --split-input-file | FileCheck %s
// Without threads (the default, and ttt-to-cpu without OpenMP) nothing is cut.
// RUN: ttt-opt %s --ttt-contractions-to-blas --split-input-file \
// RUN:   | FileCheck %s --check-prefix=ONE
// ONE-NOT: arith.minsi
// ONE-NOT: arith.ceildivsi
// ONE: call @ttt_sgemm
// ONE-NOT: arith.minsi
// ONE-NOT: arith.ceildivsi

// 256 rows over 4 threads: 4 blocks of 64 rows; block r reads A and writes
// C from row 64 r (offsets r * 64 * 128 and r * 64 * 64 elements).
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[A:.+]]: memref<256x128xf32>, %[[B:.+]]: memref<128x64xf32>, %[[C:.+]]: memref<256x64xf32>)
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C8192:.+]] = arith.constant 8192 : index
// CHECK-DAG: %[[C4096:.+]] = arith.constant 4096 : index
// CHECK: scf.if
// CHECK: scf.parallel (%[[R:.+]]) = (%{{.+}}) to (%[[C4]])
// CHECK: %[[FIRST:.+]] = arith.muli %[[R]], %[[C64]] : index
// CHECK: %[[LEFT:.+]] = arith.subi %[[C256]], %[[FIRST]] : index
// CHECK: %[[ROWS:.+]] = arith.minsi %[[LEFT]], %[[C64]] : index
// CHECK: %[[AOFF:.+]] = arith.muli %[[R]], %[[C8192]] : index
// CHECK: %[[COFF:.+]] = arith.muli %[[R]], %[[C4096]] : index
// CHECK: call @ttt_sgemm(%[[ROWS]], %[[C64]], %{{.+}}, %{{.+}}, %[[AOFF]], {{.*}}, %{{.+}}, %[[COFF]],
// CHECK: } else {
// CHECK: linalg.generic
func.func @rows(%a: memref<256x128xf32>, %b: memref<128x64xf32>, %c: memref<256x64xf32>) {
  linalg.matmul ins(%a, %b : memref<256x128xf32>, memref<128x64xf32>) outs(%c : memref<256x64xf32>)
  return
}

// -----

// More columns than rows: 4 blocks of 64 columns; B's and C's column
// offsets advance (their columns have stride 1).
// CHECK-LABEL: func.func @columns
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: scf.parallel (%[[R:.+]]) = (%{{.+}}) to (%[[C4]])
// CHECK: %[[FIRST:.+]] = arith.muli %[[R]], %[[C64]] : index
// CHECK: %[[LEFT:.+]] = arith.subi %[[C256]], %[[FIRST]] : index
// CHECK: %[[COLS:.+]] = arith.minsi %[[LEFT]], %[[C64]] : index
// CHECK: call @ttt_sgemm(%[[C64]], %[[COLS]], %[[C256]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[FIRST]], {{.*}}, %[[FIRST]],
func.func @columns(%a: memref<64x256xf32>, %b: memref<256x256xf32>, %c: memref<64x256xf32>) {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x256xf32>) outs(%c : memref<64x256xf32>)
  return
}

// -----

// Rows known only at run time (a chunk's tokens): the blocks are counted at
// run time, min(4, rows / 64), and the GEMM is cut only when that is two or
// more and it has 2^21 multiply-adds; otherwise it is one call.
// CHECK-LABEL: func.func @run_time_rows
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[WORK:.+]] = arith.constant 2097152 : index
// CHECK: scf.if
// CHECK: %[[ROWS:.+]] = memref.dim
// CHECK: %[[BYLEN:.+]] = arith.divsi %[[ROWS]], %[[C64]] : index
// CHECK: %[[BLOCKS:.+]] = arith.minsi %[[BYLEN]], %[[C4]] : index
// CHECK: %[[MACS:.+]] = arith.muli %[[ROWS]], %{{.+}} : index
// CHECK: %[[ENOUGH:.+]] = arith.cmpi sge, %[[MACS]], %[[WORK]] : index
// CHECK: %[[SEVERAL:.+]] = arith.cmpi sgt, %[[BLOCKS]], %{{.+}} : index
// CHECK: %[[CUT:.+]] = arith.andi %[[ENOUGH]], %[[SEVERAL]] : i1
// CHECK: scf.if %[[CUT]] {
// CHECK: %[[SIZE:.+]] = arith.ceildivsi %[[ROWS]], %[[BLOCKS]] : index
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[BLOCKS]])
// CHECK: call @ttt_sgemm(
// CHECK: } else {
// CHECK-NOT: scf.parallel
// CHECK: call @ttt_sgemm(%[[ROWS]],
func.func @run_time_rows(%a: memref<?x128xf32>, %b: memref<128x128xf32>, %c: memref<?x128xf32>) {
  linalg.matmul ins(%a, %b : memref<?x128xf32>, memref<128x128xf32>) outs(%c : memref<?x128xf32>)
  return
}

// -----

// Too little work for a parallel region to pay: one call.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: call @ttt_sgemm
// CHECK-NOT: call @ttt_sgemm
// CHECK: return
func.func @small(%a: memref<128x64xf32>, %b: memref<64x64xf32>, %c: memref<128x64xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x64xf32>) outs(%c : memref<128x64xf32>)
  return
}

// -----

// Inside a parallel loop (the streams of a layer), the calls already share
// the cores: nothing is cut.
// CHECK-LABEL: func.func @in_parallel_loop
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK-NOT: arith.minsi
// CHECK: call @ttt_sgemm
func.func @in_parallel_loop(%a: memref<2x256x128xf32>, %b: memref<128x128xf32>, %c: memref<2x256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%s) = (%c0) to (%c2) step (%c1) {
    %as = memref.subview %a[%s, 0, 0] [1, 256, 128] [1, 1, 1] : memref<2x256x128xf32> to memref<256x128xf32, strided<[128, 1], offset: ?>>
    %cs = memref.subview %c[%s, 0, 0] [1, 256, 128] [1, 1, 1] : memref<2x256x128xf32> to memref<256x128xf32, strided<[128, 1], offset: ?>>
    linalg.matmul ins(%as, %b : memref<256x128xf32, strided<[128, 1], offset: ?>>, memref<128x128xf32>) outs(%cs : memref<256x128xf32, strided<[128, 1], offset: ?>>)
    scf.reduce
  }
  return
}

// -----

// A batch of 4 points already gives 4 threads a call each: nothing is cut.
// CHECK-LABEL: func.func @batch_fills_threads
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step
// CHECK-NOT: arith.minsi
// CHECK: call @ttt_sgemm
func.func @batch_fills_threads(%a: memref<4x256x128xf32>, %b: memref<4x128x128xf32>, %c: memref<4x256x128xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x256x128xf32>, memref<4x128x128xf32>) outs(%c : memref<4x256x128xf32>)
  return
}
