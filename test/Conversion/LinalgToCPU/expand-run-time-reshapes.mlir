// ttt-expand-run-time-reshapes: an expand whose group has two or more
// run-time sizes becomes a reinterpret cast with the sizes of output_shape and
// strides multiplied out inside each group; an expand with one run-time size
// per group is left to expand-strided-metadata.
// RUN: ttt-opt %s --ttt-expand-run-time-reshapes --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @batch_and_heads
// CHECK-SAME: (%[[A:.+]]: memref<?x8xf32>, %[[B:.+]]: index, %[[H:.+]]: index)
// CHECK: %[[BASE:.+]], %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[S0:.+]] = arith.muli %{{.+}}, %[[H]] : index
// CHECK: %[[V:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[H]], 8], strides: [%[[S0]], 8, 1]
// CHECK-NOT: memref.expand_shape
// CHECK: return %[[V]]
func.func @batch_and_heads(%a: memref<?x8xf32>, %b: index, %h: index) -> memref<?x?x8xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %h, 8] : memref<?x8xf32> into memref<?x?x8xf32>
  return %e : memref<?x?x8xf32>
}

// -----

// The source's own strides and offset carry over: a view of run-time offset
// and row stride, its rows split into H rows of D.
// CHECK-LABEL: func.func @strided_source
// CHECK-SAME: (%[[A:.+]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[B:.+]]: index, %[[H:.+]]: index, %[[D:.+]]: index)
// CHECK: %[[BASE:.+]], %[[OFF:.+]], %{{.+}}:2, %[[STR:.+]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK-NOT: arith.muli
// CHECK: %[[V:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [%[[B]], %[[H]], %[[D]]], strides: [%[[STR]]#0, %[[D]], 1]
// CHECK: return %[[V]]
func.func @strided_source(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: index, %h: index, %d: index) -> memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [%b, %h, %d] : memref<?x?xf32, strided<[?, 1], offset: ?>> into memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
  return %e : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>
}

// -----

// CHECK-LABEL: func.func @one_run_time_size_per_group
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_run_time_size_per_group(%a: memref<?x8xf32>, %b: index) -> memref<?x4x8xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, 4, 8] : memref<?x8xf32> into memref<?x4x8xf32>
  return %e : memref<?x4x8xf32>
}
