// ttt-gpu-launch-to-loops: a gpu.launch runs on the host as sequential loops
// over blocks (z, y, x) and then threads (z, y, x); ids and sizes become the
// loops' induction variables and bounds. Barriers and asynchronous launches
// are rejected.
// RUN: ttt-opt %s --split-input-file --verify-diagnostics --ttt-gpu-launch-to-loops \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @launch
// CHECK-SAME: (%[[A:.+]]: memref<?x32xf32>, %[[N:.+]]: index, %[[V:.+]]: f32)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NOT: gpu.
// CHECK: scf.for %{{.+}} = %[[ZERO]] to %[[C1]] step %[[ONE]] {
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %[[C1]] step %[[ONE]] {
// CHECK-NEXT: scf.for %[[BX:.+]] = %[[ZERO]] to %[[N]] step %[[ONE]] {
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %[[C1]] step %[[ONE]] {
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %[[C1]] step %[[ONE]] {
// CHECK-NEXT: scf.for %[[TX:.+]] = %[[ZERO]] to %[[C32]] step %[[ONE]] {
// CHECK-NEXT: %[[I:.+]] = arith.addi %[[BX]], %[[N]] : index
// CHECK-NEXT: %[[J:.+]] = arith.addi %[[TX]], %[[C32]] : index
// CHECK-NEXT: memref.store %[[V]], %[[A]][%[[I]], %[[J]]]
// CHECK-NOT: gpu.
func.func @launch(%a: memref<?x32xf32>, %n: index, %v: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.addi %bx, %gx : index
    %j = arith.addi %tx, %sx : index
    memref.store %v, %a[%i, %j] : memref<?x32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @barrier(%a: memref<32xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{ttt-gpu-launch-to-loops: barriers need threads}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %v, %a[%tx] : memref<32xf32>
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

func.func @async(%a: memref<32xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{ttt-gpu-launch-to-loops: only synchronous single-block launches without attributions}}
  %t = gpu.launch async blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %v, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
