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

// -----

// The fast-weight update W + (-1) k^T (-v) over a chunk of tokens: the
// negation of the chunk-sized v moves to the state-sized product, k^T v,
// and fuses into the update. One contraction on v itself, one map.
#kt = affine_map<(i, t, j) -> (t, i)>
#v = affine_map<(i, t, j) -> (t, j)>
#c = affine_map<(i, t, j) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @negated_chunk_operand
// CHECK-SAME: (%[[W:.+]]: tensor<4x3xf32>, %[[K:.+]]: tensor<?x4xf32>, %[[V:.+]]: tensor<?x3xf32>)
// CHECK: %[[G:.+]] = linalg.generic {{.*}} ins(%[[K]], %[[V]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[W]], %[[G]] :
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @negated_chunk_operand(%w: tensor<4x3xf32>, %k: tensor<?x4xf32>, %v: tensor<?x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %minus = arith.constant -1.0 : f32
  %t = tensor.dim %v, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%t) : tensor<?x3xf32>
  %nv = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<?x3xf32>
  %s0 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = linalg.generic {indexing_maps = [#kt, #v, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%k, %nv : tensor<?x4xf32>, tensor<?x3xf32>) outs(%z : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %u = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : tensor<4x3xf32>, tensor<4x3xf32>) outs(%s0 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %b, %minus : f32
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  return %u : tensor<4x3xf32>
}

// -----

// q (-W): the negated operand is the 4x3 state, smaller than the chunk-sized
// result, so the negation stays where it is (moving it would negate more).
#q = affine_map<(t, i, j) -> (t, i)>
#w = affine_map<(t, i, j) -> (i, j)>
#o = affine_map<(t, i, j) -> (t, j)>
#id2b = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @negated_state_operand
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4xf32>, %[[W:.+]]: tensor<4x3xf32>)
// CHECK: %[[NW:.+]] = linalg.generic {{.*}} ins(%[[W]] :
// CHECK: arith.negf
// CHECK: %[[O:.+]] = linalg.generic {{.*}} ins(%[[Q]], %[[NW]] :
// CHECK: return %[[O]]
func.func @negated_state_operand(%q: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %t = tensor.dim %q, %c0 : tensor<?x4xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %nw = linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %oe = tensor.empty(%t) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%oe : tensor<?x3xf32>) -> tensor<?x3xf32>
  %out = linalg.generic {indexing_maps = [#q, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%q, %nw : tensor<?x4xf32>, tensor<4x3xf32>) outs(%z : tensor<?x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  return %out : tensor<?x3xf32>
}

// -----

// Batched over a dynamic batch: the result's size is read from C's fill, so
// that the moved negation does not size itself by its own operand.
#bkt = affine_map<(b, i, t, j) -> (b, t, i)>
#bv = affine_map<(b, i, t, j) -> (b, t, j)>
#bc = affine_map<(b, i, t, j) -> (b, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
// CHECK-LABEL: func.func @negated_batched_operand
// CHECK-SAME: (%[[K:.+]]: tensor<?x16x4xf32>, %[[V:.+]]: tensor<?x16x3xf32>)
// CHECK: %[[G:.+]] = linalg.generic {{.*}} ins(%[[K]], %[[V]] :
// CHECK: %[[N:.+]] = linalg.generic {{.*}} ins(%[[G]] :
// CHECK: arith.negf
// CHECK: return %[[N]]
func.func @negated_batched_operand(%k: tensor<?x16x4xf32>, %v: tensor<?x16x3xf32>) -> tensor<?x4x3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %v, %c0 : tensor<?x16x3xf32>
  %e = tensor.empty(%b) : tensor<?x16x3xf32>
  %nv = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<?x16x3xf32>) outs(%e : tensor<?x16x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<?x16x3xf32>
  %s0 = tensor.empty(%b) : tensor<?x4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%s0 : tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
  %g = linalg.generic {indexing_maps = [#bkt, #bv, #bc], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%k, %nv : tensor<?x16x4xf32>, tensor<?x16x3xf32>) outs(%z : tensor<?x4x3xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4x3xf32>
  return %g : tensor<?x4x3xf32>
}
