// ttt-serialize-nested-parallel: one level of parallel loops; the ones
// inside become scf.for nests.
// RUN: ttt-opt %s --ttt-serialize-nested-parallel | FileCheck %s

// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel (%[[S:.+]]) = (%c0) to (%[[N:.+]]) step (%c1) {
// CHECK-NEXT: scf.for %[[I:.+]] = %c0 to %c8 step %c1 {
// CHECK-NEXT: scf.for %[[J:.+]] = %c0 to %c4 step %c1 {
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[%[[S]], %[[I]], %[[J]]]
// CHECK-NOT: scf.parallel
// A parallel loop of its own stays parallel.
// CHECK-LABEL: func.func @outermost
// CHECK: scf.parallel
func.func @nested(%m: memref<?x8x4xf32>, %n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%s) = (%c0) to (%n) step (%c1) {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
      memref.store %v, %m[%s, %i, %j] : memref<?x8x4xf32>
    }
  }
  return
}

func.func @outermost(%m: memref<8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  return
}
