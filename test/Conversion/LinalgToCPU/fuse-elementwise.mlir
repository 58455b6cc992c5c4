// ttt-fuse-elementwise: chains of elementwise ops become one loop nest; a
// contraction keeps its own body (it stays a GEMM), and a value with two
// users is computed once.
// RUN: ttt-opt %s --ttt-fuse-elementwise --split-input-file | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>

// exp(x) * y + y: three maps, one generic (reading y once).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[Y:.+]]: tensor<8x16xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[Y]] :
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// The sigmoid feeding a matmul stays its own op: the contraction's body is
// still acc + a * b.
// CHECK-LABEL: func.func @into_contraction
// CHECK: %[[S:.+]] = linalg.generic
// CHECK: arith.negf
// CHECK: %[[P:.+]] = linalg.generic
// CHECK-SAME: ins(%[[S]], %{{.+}} :
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[M]]
// CHECK-NEXT: linalg.yield %[[SUM]]
func.func @into_contraction(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>,
                                        affine_map<(i, k, j) -> (i, j)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%s, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}

// -----

// exp(x) has two users: it is computed once, not fused into both.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @shared(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%e : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%e : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %n, %s : tensor<8xf32>, tensor<8xf32>
}
