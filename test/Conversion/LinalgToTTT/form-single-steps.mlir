// A fast weight updated once and applied becomes a ttt.chunk_loop of one
// chunk, found by dataflow: a weight (argument or constant) plus what the
// data adds, applied to data. Sums that bind no keys to values stay.
// test_single_steps.py checks the numbers against the original program.
// RUN: ttt-opt %s --ttt-form-single-steps=explain --split-input-file -verify-diagnostics | FileCheck %s

// Linear attention as one step: W1 = W0 + K^T V, O = Q W1. The sum over
// tokens is taken into the body; the windows' time axis comes from the math.
// A transpose of data is taken in too: the window is the keys themselves.
// CHECK-LABEL: func.func @linear_step
// CHECK-SAME: (%[[W0:.*]]: tensor<4x4xf32>, %[[Q:.*]]: tensor<8x4xf32>, %[[K:.*]]: tensor<8x4xf32>, %[[V:.*]]: tensor<8x4xf32>)
// CHECK: %[[O:.*]], %[[W:.*]] = ttt.chunk_loop chunk(0) state(%[[W0]] : tensor<4x4xf32>)
// CHECK-SAME: windows(%[[K]], %[[V]], %[[Q]] : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) along [0, 0, 0]
// CHECK-SAME: outputs along [0]
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4x4xf32>, %[[KW:.*]]: tensor<8x4xf32>, %{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<8x4xf32>):
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[KW]] : tensor<8x4xf32>)
// CHECK: linalg.matmul ins(%[[KT]],
// CHECK: linalg.generic
// CHECK: linalg.matmul
// CHECK: ttt.chunk_yield outputs(%{{.*}} : tensor<8x4xf32>) state(%{{.*}} : tensor<4x4xf32>)
// CHECK: return %[[O]]
#id = affine_map<(i, j) -> (i, j)>
func.func @linear_step(%w0: tensor<4x4xf32>, %q: tensor<8x4xf32>,
                       %k: tensor<8x4xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %kv = linalg.matmul ins(%kt, %v : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %kv : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<8x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %o = linalg.matmul ins(%q, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f3 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// A weight shared by the batch, broadcast by its update (ViT^3's
// `w1 - lr * g1`): the loop's state is the broadcast weight, made before it.
// CHECK-LABEL: func.func @broadcast_weight
// CHECK: %[[WB:.*]] = linalg.generic {{.*}} ins(%[[W:.*]] : tensor<1x4x4xf32>) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK: ttt.chunk_loop chunk(0) state(%[[WB]] : tensor<2x4x4xf32>)
// CHECK-SAME: along [1, 1, 1]
// CHECK: ttt.chunk_yield
#b3 = affine_map<(b, i, j) -> (b, i, j)>
#w3 = affine_map<(b, i, j) -> (0, i, j)>
#kk = affine_map<(b, i, j, t) -> (b, t, i)>
#vv = affine_map<(b, i, j, t) -> (b, t, j)>
#gg = affine_map<(b, i, j, t) -> (b, i, j)>
#qa = affine_map<(b, t, j, i) -> (b, t, i)>
#wa = affine_map<(b, t, j, i) -> (b, i, j)>
#oa = affine_map<(b, t, j, i) -> (b, t, j)>
func.func @broadcast_weight(%w: tensor<1x4x4xf32>, %q: tensor<2x8x4xf32>,
    %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %g = linalg.generic {indexing_maps = [#kk, #vv, #gg],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%k, %v : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %w1 = linalg.generic {indexing_maps = [#w3, #b3, #b3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w, %g : tensor<1x4x4xf32>, tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x8x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.generic {indexing_maps = [#qa, #wa, #oa],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %w1 : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%fo : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// ViT^3 computes its gradient from the shared parameter and subtracts it
// from the broadcast: inside the step every read of the parameter reads the
// state, the broadcast dimension by the reader's own batch loop.
// CHECK-LABEL: func.func @gradient_reads_the_parameter
// CHECK: ttt.chunk_loop chunk(0) state(%{{.*}} : tensor<2x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: tensor<2x4x4xf32>, %[[K:[^:]*]]: tensor<2x8x4xf32>,
// CHECK: linalg.generic {{.*}} ins(%[[K]], %[[S]] : tensor<2x8x4xf32>, tensor<2x4x4xf32>)
// CHECK: ttt.chunk_yield
#kz = affine_map<(b, t, j, i) -> (b, t, i)>
#wz = affine_map<(b, t, j, i) -> (0, i, j)>
#oz = affine_map<(b, t, j, i) -> (b, t, j)>
#kg = affine_map<(b, i, j, t) -> (b, t, i)>
#vg = affine_map<(b, i, j, t) -> (b, t, j)>
#gg2 = affine_map<(b, i, j, t) -> (b, i, j)>
#w32 = affine_map<(b, i, j) -> (0, i, j)>
#b32 = affine_map<(b, i, j) -> (b, i, j)>
#wo = affine_map<(b, t, j, i) -> (b, i, j)>
func.func @gradient_reads_the_parameter(%k: tensor<2x8x4xf32>,
    %v: tensor<2x8x4xf32>, %q: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<1x4x4xf32>
  %ez = tensor.empty() : tensor<2x8x4xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%ez : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %z = linalg.generic {indexing_maps = [#kz, #wz, #oz],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%k, %w : tensor<2x8x4xf32>, tensor<1x4x4xf32>) outs(%fz : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  %e = tensor.empty() : tensor<2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %g = linalg.generic {indexing_maps = [#kg, #vg, #vg, #gg2],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%k, %v, %z : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %zz: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %pz = arith.mulf %p, %zz : f32
    %s = arith.addf %c, %pz : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %w1 = linalg.generic {indexing_maps = [#w32, #b32, #b32], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w, %g : tensor<1x4x4xf32>, tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x8x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.generic {indexing_maps = [#kz, #wo, #oz],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %w1 : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%fo : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// A bias added to a projection and the sum contracted with the keys (an
// attention's query): applied to data, but nothing binds keys to values.
// CHECK-LABEL: func.func @bias_stays
// CHECK-NOT: ttt.chunk_loop
#id2 = affine_map<(i, j) -> (i, j)>
func.func @bias_stays(%x: tensor<8x4xf32>, %k: tensor<8x4xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %wq = arith.constant dense<0.5> : tensor<4x4xf32>
  %bias = arith.constant dense<0.25> : tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %xw = linalg.matmul ins(%x, %wq : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-remark @+1 {{ttt-form-single-steps: a weight updated once, left as it was: no state is updated by a sum over tokens of products of the chunk's data (keys bound to values): an ordinary recurrence}}
  %qb = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %xw : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %et = tensor.empty() : tensor<4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.matmul ins(%qb, %kt : tensor<8x4xf32>, tensor<4x8xf32>) outs(%fs : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// -----

// A residual connection reads no data other than its own input: no weight.
// CHECK-LABEL: func.func @residual
// CHECK-NOT: ttt.chunk_loop
#id3 = affine_map<(i, j) -> (i, j)>
func.func @residual(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %xx = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x, %xx : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %y = linalg.matmul ins(%r, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Attention scores plus a constant mask, through an exponential, times the
// values: the mask is no weight (what reads the sum maps each score).
// CHECK-LABEL: func.func @masked_scores
// CHECK-NOT: ttt.chunk_loop
#s2 = affine_map<(i, j) -> (i, j)>
func.func @masked_scores(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<-1.0e9> : tensor<8x8xf32>
  %et = tensor.empty() : tensor<4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<8x4xf32>, tensor<4x8xf32>) outs(%fs : tensor<8x8xf32>) -> tensor<8x8xf32>
  %sm = linalg.generic {indexing_maps = [#s2, #s2, #s2], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %s : tensor<8x8xf32>, tensor<8x8xf32>) outs(%es : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.addf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [#s2, #s2], iterator_types = ["parallel", "parallel"]}
      ins(%sm : tensor<8x8xf32>) outs(%es : tensor<8x8xf32>) {
  ^bb0(%a: f32, %c: f32):
    %x = math.exp %a : f32
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %eo = tensor.empty() : tensor<8x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x4xf32>) -> tensor<8x4xf32>
  %o = linalg.matmul ins(%p, %v : tensor<8x8xf32>, tensor<8x4xf32>) outs(%fo : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// The new weight is computed through sums of its own type, each applied to
// data (Muon's Newton-Schulz iterations in fp32: X = a X + (b A + c A A) X):
// a sum that another one is computed from is a step on the way; the last
// one is the new value (here, as in LaCT's minimal layers, it replaces the
// weight: W1 = N(G) + G).
// CHECK-LABEL: func.func @iterated_new_value
// CHECK-SAME: (%[[W0:.*]]: tensor<4x4xf32>,
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(0) state(%[[W0]] : tensor<4x4xf32>)
// CHECK: ttt.chunk_yield outputs(%{{.*}} : tensor<8x4xf32>) state(%{{.*}} : tensor<4x4xf32>)
// CHECK: return %[[O]]
#id = affine_map<(i, j) -> (i, j)>
func.func @iterated_new_value(%w0: tensor<4x4xf32>, %q: tensor<8x4xf32>,
                              %k: tensor<8x4xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) permutation = [1, 0]
  %e8 = tensor.empty() : tensor<8x4xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %kw = linalg.matmul ins(%k, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f8 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %kkw = linalg.matmul ins(%kt, %kw : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %kv = linalg.matmul ins(%kt, %v : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = linalg.sub ins(%kkw, %kv : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %gg = linalg.matmul ins(%g, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gg, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %x = linalg.matmul ins(%s1, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %o = linalg.matmul ins(%q, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f8 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// Batch and heads merged as B*H around batch_matmul (torch-mlir's lowering of
// `k.transpose(-2, -1) @ (v - k @ w)` on [B, H, T, D] tensors): the sum over
// tokens is read inside the reshape that merges them, so the step binds keys
// to values.
// CHECK-LABEL: func.func @merged_heads
// CHECK-SAME: (%[[W0:.*]]: tensor<2x2x4x4xf32>,
// CHECK: ttt.chunk_loop chunk(0) state(%[[W0]] : tensor<2x2x4x4xf32>)
// CHECK: linalg.batch_matmul
// CHECK: ttt.chunk_yield
#m4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m3 = affine_map<(m, i, j) -> (m, i, j)>
func.func @merged_heads(%w0: tensor<2x2x4x4xf32>, %k: tensor<4x8x4xf32>, %kt: tensor<4x4x8xf32>,
                        %v: tensor<2x2x8x4xf32>, %q: tensor<4x8x4xf32>) -> tensor<4x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x8x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  %w0c = tensor.collapse_shape %w0 [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %pred = linalg.batch_matmul ins(%k, %w0c : tensor<4x8x4xf32>, tensor<4x4x4xf32>) outs(%f3 : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x2x8x4xf32> into tensor<4x8x4xf32>
  %r = linalg.generic {indexing_maps = [#m3, #m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vc, %pred : tensor<4x8x4xf32>, tensor<4x8x4xf32>) outs(%e3 : tensor<4x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x8x4xf32>
  %e = tensor.empty() : tensor<4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %g = linalg.batch_matmul ins(%kt, %r : tensor<4x4x8xf32>, tensor<4x8x4xf32>) outs(%f : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %ge = tensor.expand_shape %g [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>
  %e4 = tensor.empty() : tensor<2x2x4x4xf32>
  %w1 = linalg.generic {indexing_maps = [#m4, #m4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w0, %ge : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x2x4x4xf32>
  %w1c = tensor.collapse_shape %w1 [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %o = linalg.batch_matmul ins(%q, %w1c : tensor<4x8x4xf32>, tensor<4x4x4xf32>) outs(%f3 : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  return %o : tensor<4x8x4xf32>
}

// -----

// The weight the step replaces, a constant, is read by the data only
// through a view of it (its transpose, read transposed again by the
// product), itself made of constants: the state is the weight, not the view.
// CHECK-LABEL: func.func @read_through_a_view
// CHECK: %[[W0:.*]] = arith.constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK-NOT: linalg.transpose ins(%[[W0]]
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(0) state(%[[W0]] : tensor<4x4xf32>)
// CHECK: ttt.chunk_yield outputs(%{{.*}} : tensor<8x4xf32>) state(%{{.*}} : tensor<4x4xf32>)
// CHECK: return %[[O]]
#id2 = affine_map<(i, j) -> (i, j)>
func.func @read_through_a_view(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>,
                               %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %w0 = arith.constant dense<[[0.5, -0.25, 0.125, 1.0], [0.0, 0.75, -1.0, 0.25], [1.5, 0.0, 0.5, -0.5], [-0.125, 0.25, 0.0, 1.0]]> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) permutation = [1, 0]
  %ew = tensor.empty() : tensor<4x4xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<4x4xf32>) outs(%ew : tensor<4x4xf32>) permutation = [1, 0]
  %e8 = tensor.empty() : tensor<8x4xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %kw = linalg.matmul indexing_maps = [affine_map<(i, j, t) -> (i, t)>, affine_map<(i, j, t) -> (j, t)>, affine_map<(i, j, t) -> (i, j)>]
      ins(%k, %w0t : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f8 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %kkw = linalg.matmul ins(%kt, %kw : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %kv = linalg.matmul ins(%kt, %v : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = linalg.sub ins(%kkw, %kv : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %gg = linalg.matmul ins(%g, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f4 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%gg, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e4 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %o = linalg.matmul ins(%q, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f8 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}
