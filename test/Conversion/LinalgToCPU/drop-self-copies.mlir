// ttt-drop-self-copies: a memref.copy whose source is its target goes; a
// copy between two buffers, even of equal views of one, stays.
// RUN: ttt-opt %s --ttt-drop-self-copies | FileCheck %s

// CHECK-LABEL: func.func @chunk_written_in_place
// CHECK-SAME: (%[[BUF:.+]]: memref<8x4xf32>, %[[I:.+]]: index)
// CHECK: %[[V:.+]] = memref.subview %[[BUF]][%[[I]], 0] [2, 4] [1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[V]] :
// CHECK-NOT: memref.copy
// CHECK: return
func.func @chunk_written_in_place(%buf: memref<8x4xf32>, %i: index) {
  %zero = arith.constant 0.0 : f32
  %v = memref.subview %buf[%i, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%v : memref<2x4xf32, strided<[4, 1], offset: ?>>)
  memref.copy %v, %v : memref<2x4xf32, strided<[4, 1], offset: ?>> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  return
}

// CHECK-LABEL: func.func @copies_between_views
// CHECK: %[[A:.+]] = memref.subview
// CHECK: %[[B:.+]] = memref.subview
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: memref.copy %[[A]], %{{.+}} : {{.*}} to memref<2x4xf32>
func.func @copies_between_views(%buf: memref<8x4xf32>, %out: memref<2x4xf32>, %i: index, %j: index) {
  %a = memref.subview %buf[%i, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  %b = memref.subview %buf[%j, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  memref.copy %a, %b : memref<2x4xf32, strided<[4, 1], offset: ?>> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  memref.copy %a, %out : memref<2x4xf32, strided<[4, 1], offset: ?>> to memref<2x4xf32>
  return
}
