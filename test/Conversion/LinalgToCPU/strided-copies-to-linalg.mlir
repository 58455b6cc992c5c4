// ttt-strided-copies-to-linalg: a memref.copy that LLVM lowering would turn
// into an element-by-element `memrefCopy` call (a strided view, a view of a
// run-time size) becomes linalg.copy; one that lowers to a memcpy stays.
// RUN: ttt-opt %s --ttt-strided-copies-to-linalg | FileCheck %s
// The whole pipeline: no `memrefCopy` call is left for such a copy.
// RUN: ttt-opt %s --ttt-strided-copies-to-linalg --convert-linalg-to-loops \
// RUN:   --finalize-memref-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @state_into_its_slot
// CHECK-SAME: (%[[STATE:.+]]: memref<1x4x8x8xf32>, %[[STATES:.+]]: memref<1x4x16x8x8xf32>, %[[C:.+]]: index)
// CHECK: %[[SLOT:.+]] = memref.subview %[[STATES]][0, 0, %[[C]], 0, 0]
// CHECK-NEXT: linalg.copy ins(%[[STATE]] : memref<1x4x8x8xf32>) outs(%[[SLOT]] : memref<1x4x8x8xf32, strided<[4096, 1024, 8, 1], offset: ?>>)
// CHECK-NOT: memref.copy
// LLVM-LABEL: func.func @state_into_its_slot
// LLVM-NOT: memrefCopy
// LLVM: return
func.func @state_into_its_slot(%state: memref<1x4x8x8xf32>, %states: memref<1x4x16x8x8xf32>, %c: index) {
  %slot = memref.subview %states[0, 0, %c, 0, 0] [1, 4, 1, 8, 8] [1, 1, 1, 1, 1] : memref<1x4x16x8x8xf32> to memref<1x4x8x8xf32, strided<[4096, 1024, 8, 1], offset: ?>>
  memref.copy %state, %slot : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[4096, 1024, 8, 1], offset: ?>>
  return
}

// A window of a run-time number of rows: contiguous, but only a static shape
// lowers to a memcpy.
// CHECK-LABEL: func.func @window_of_run_time_size
// CHECK-SAME: (%[[BUF:.+]]: memref<64x8xf32>, %[[OUT:.+]]: memref<?x8xf32>, %[[I:.+]]: index, %[[N:.+]]: index)
// CHECK: %[[W:.+]] = memref.subview %[[BUF]][%[[I]], 0] [%[[N]], 8] [1, 1]
// CHECK-NEXT: linalg.copy ins(%[[W]] : memref<?x8xf32, strided<[8, 1], offset: ?>>) outs(%[[OUT]] : memref<?x8xf32>)
func.func @window_of_run_time_size(%buf: memref<64x8xf32>, %out: memref<?x8xf32>, %i: index, %n: index) {
  %w = memref.subview %buf[%i, 0] [%n, 8] [1, 1] : memref<64x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
  memref.copy %w, %out : memref<?x8xf32, strided<[8, 1], offset: ?>> to memref<?x8xf32>
  return
}

// Contiguous buffers of a static shape (an offset is fine) and identity
// layouts of any shape lower to a memcpy: kept.
// CHECK-LABEL: func.func @memcpy_copies_stay
// CHECK-COUNT-2: memref.copy
// CHECK-NOT: linalg.copy
// LLVM-LABEL: func.func @memcpy_copies_stay
// LLVM-NOT: memrefCopy
// LLVM: return
func.func @memcpy_copies_stay(%buf: memref<64x8xf32>, %tile: memref<4x8xf32>, %a: memref<?x8xf32>, %b: memref<?x8xf32>, %i: index) {
  %rows = memref.subview %buf[%i, 0] [4, 8] [1, 1] : memref<64x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  memref.copy %rows, %tile : memref<4x8xf32, strided<[8, 1], offset: ?>> to memref<4x8xf32>
  memref.copy %a, %b : memref<?x8xf32> to memref<?x8xf32>
  return
}

// Unranked buffers have no linalg.copy: kept.
// CHECK-LABEL: func.func @unranked_stays
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
func.func @unranked_stays(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}
