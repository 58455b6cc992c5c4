// ttt-gpu-prepare-linalg: every copy and linalg op on the host becomes a
// linalg.generic whose parallel loops come first; a full reduction goes into
// a one-iteration scf.parallel (one device thread); ops on the device stay.
// RUN: ttt-opt %s --ttt-gpu-prepare-linalg | FileCheck %s

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SWAP:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$FIRST:.+]] = affine_map<(d0, d1) -> (d0)>

// Copies run as kernels: memref.copy -> linalg.copy -> linalg.generic.
// CHECK-LABEL: func.func @copy
// CHECK-SAME: (%[[A:.+]]: memref<?x4xf32>, %[[B:.+]]: memref<?x4xf32>)
// CHECK-NOT: memref.copy
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]] : memref<?x4xf32>) outs(%[[B]] : memref<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @copy(%a: memref<?x4xf32>, %b: memref<?x4xf32>) {
  memref.copy %a, %b : memref<?x4xf32> to memref<?x4xf32>
  return
}

// Named ops become generics; a matmul's parallel loops already come first.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>)
  return
}

// A reduction in front of the parallel loop moves behind it.
// CHECK-LABEL: func.func @colsum
// CHECK: linalg.generic {indexing_maps = [#[[$SWAP]], #[[$FIRST]]], iterator_types = ["parallel", "reduction"]}
func.func @colsum(%a: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  }
  return
}

// A full reduction has no parallel loop: one iteration of an scf.parallel.
// CHECK-LABEL: func.func @total
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.+}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: scf.reduce
func.func @total(%a: memref<?xf32>, %s: memref<f32>) {
  linalg.reduce ins(%a : memref<?xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %r = arith.addf %acc, %x : f32
      linalg.yield %r : f32
    }
  return
}

// Inside a launch (on the device already) nothing changes.
// CHECK-LABEL: func.func @on_device
// CHECK: gpu.launch
// CHECK-NEXT: memref.copy
// CHECK-NOT: linalg.
func.func @on_device(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    gpu.terminator
  }
  return
}
