// ttt-gpu-bf16-operands: in contractions, the f32 inputs of products are
// rounded to bf16 (once each, at the top of the body); sums stay f32. On
// tensors or buffers, on any op (here also nested on functions).
// RUN: ttt-opt %s --ttt-gpu-bf16-operands | FileCheck %s
// RUN: ttt-opt %s --pass-pipeline='builtin.module(func.func(ttt-gpu-bf16-operands))' \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-DAG: %[[Y16:.+]] = arith.truncf %[[Y]] : f32 to bf16
// CHECK-DAG: %[[Y32:.+]] = arith.extf %[[Y16]] : bf16 to f32
// CHECK-DAG: %[[X16:.+]] = arith.truncf %[[X]] : f32 to bf16
// CHECK-DAG: %[[X32:.+]] = arith.extf %[[X16]] : bf16 to f32
// CHECK: %[[P:.+]] = arith.mulf %[[X32]], %[[Y32]] : f32
// A product of a product keeps that f32 operand; the input is rounded once.
// CHECK-NEXT: %[[Q:.+]] = arith.mulf %[[P]], %[[X32]] : f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[ACC]], %[[Q]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.mulf %p, %x : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// No reduction loop: not a contraction, nothing changes.
// CHECK-LABEL: func.func @scale
// CHECK-NOT: arith.truncf
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
func.func @scale(%a: memref<4xf32>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  }
  return
}

// Only f32 operands are rounded.
// CHECK-LABEL: func.func @sum_f16
// CHECK-NOT: arith.truncf
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f16
// CHECK-NOT: arith.truncf
func.func @sum_f16(%a: memref<4xf16>, %s: memref<f16>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%a : memref<4xf16>) outs(%s : memref<f16>) {
  ^bb0(%x: f16, %acc: f16):
    %p = arith.mulf %x, %x : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  }
  return
}
