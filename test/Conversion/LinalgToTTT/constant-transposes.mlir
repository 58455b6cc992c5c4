// Exporters fold `w.transpose(1, 2)` of a constant weight into a second
// constant; ttt-reroll-chunks and ttt-form-single-steps first write such a
// constant as a linalg.transpose of the first, so that a chunk step reads
// one weight where the model has one. A constant of other elements stays.
// RUN: ttt-opt %s --ttt-reroll-chunks | FileCheck %s

// CHECK-LABEL: func.func @folded_transpose
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: arith.constant {{.*}} : tensor<3x2xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK: return %[[T]], %[[W]]
func.func @folded_transpose() -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %wt = arith.constant dense<[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]> : tensor<3x2xf32>
  return %wt, %w : tensor<3x2xf32>, tensor<2x3xf32>
}

// The heads' weights [H, r, c] and their transposes [H, c, r].
// CHECK-LABEL: func.func @per_head
// CHECK: %[[W:.*]] = arith.constant {{.*}} : tensor<2x2x2xf32>
// CHECK: linalg.transpose ins(%[[W]] : tensor<2x2x2xf32>) {{.*}} permutation = [0, 2, 1]
func.func @per_head() -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %w = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %wt = arith.constant dense<[[[1.0, 3.0], [2.0, 4.0]], [[5.0, 7.0], [6.0, 8.0]]]> : tensor<2x2x2xf32>
  return %w, %wt : tensor<2x2x2xf32>, tensor<2x2x2xf32>
}

// One element differs: two weights, both kept.
// CHECK-LABEL: func.func @not_a_transpose
// CHECK-COUNT-2: arith.constant dense
// CHECK-NOT: linalg.transpose
func.func @not_a_transpose() -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %v = arith.constant dense<[[1.0, 4.0], [2.0, 5.0], [3.0, 7.0]]> : tensor<3x2xf32>
  return %v, %w : tensor<3x2xf32>, tensor<2x3xf32>
}
