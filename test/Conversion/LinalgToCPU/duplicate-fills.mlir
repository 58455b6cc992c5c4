// ttt-duplicate-fills: every user of a filled empty tensor gets its own
// fill, right before it, so each init bufferizes in place.
// RUN: ttt-opt %s --ttt-duplicate-fills | FileCheck %s

// CHECK-LABEL: func.func @two_accumulators
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<8x8xf32>
// CHECK: %[[Z0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E0]] : tensor<8x8xf32>)
// CHECK: %[[M0:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : {{.*}}) outs(%[[Z0]] : tensor<8x8xf32>)
// CHECK: scf.for
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[Z1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<8x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : {{.*}}) outs(%[[Z1]] : tensor<8x8xf32>)
func.func @two_accumulators(%a: tensor<8x8xf32>, %n: index) -> tensor<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = linalg.matmul ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %m) -> tensor<8x8xf32> {
    %p = linalg.matmul ins(%x, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
    scf.yield %p : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}
