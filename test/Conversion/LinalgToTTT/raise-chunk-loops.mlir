// The math of a ttt.chunk_loop read as einsum terms: a linear fast weight
// moved by a descent step of the dot or MSE loss becomes a ttt.kvb_layer,
// whatever the layout; other recurrences stay, with the reason.
// test_chunk_loop.py checks the numbers on random layouts.
// RUN: ttt-opt %s --ttt-raise-chunk-loops=explain --split-input-file -verify-diagnostics | FileCheck %s

// Feature-major tokens ([H, D, T], time last), the weight stored output x
// input, per-token rates, update then apply.
// CHECK-LABEL: func.func @feature_major
// CHECK-SAME: (%[[W0:.*]]: tensor<2x5x3xf32>, %[[Q:.*]]: tensor<2x3x12xf32>, %[[K:.*]]: tensor<2x3x12xf32>, %[[V:.*]]: tensor<2x5x12xf32>, %[[LR:.*]]: tensor<2x12xf32>)
// CHECK-NOT: ttt.chunk_loop
// CHECK-DAG: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<2x3x12xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK-DAG: %[[WT:.*]] = linalg.transpose ins(%[[W0]] : tensor<2x5x3xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: %[[O:.*]], %[[WF:.*]] = ttt.kvb_layer
// CHECK-SAME: lr(%{{.*}} : tensor<1x2x12x1xf32>)
// CHECK-SAME: model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot> update = #ttt.update<lr_scale = 2.500000e-01>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4, order = update_then_apply>
// CHECK-SAME: -> tensor<1x2x12x5xf32>, tensor<1x2x3x5xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x12x5xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x5xf32>) {{.*}} permutation = [0, 2, 1]
#tok = affine_map<(h, i, j, t) -> (h, i, t)>
#val = affine_map<(h, i, j, t) -> (h, j, t)>
#rate = affine_map<(h, i, j, t) -> (h, t)>
#wt = affine_map<(h, i, j, t) -> (h, j, i)>
#qa = affine_map<(h, t, i, j) -> (h, i, t)>
#wa = affine_map<(h, t, i, j) -> (h, j, i)>
#oa = affine_map<(h, t, i, j) -> (h, j, t)>
func.func @feature_major(%w0: tensor<2x5x3xf32>, %q: tensor<2x3x12xf32>,
    %k: tensor<2x3x12xf32>, %v: tensor<2x5x12xf32>, %lr: tensor<2x12xf32>)
    -> (tensor<2x5x12xf32>, tensor<2x5x3xf32>) {
  // expected-remark @+1 {{a linear fast weight (dot loss, per-token rates, chunks of 4, update_then_apply)}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<2x5x3xf32>)
      windows(%q, %k, %v, %lr : tensor<2x3x12xf32>, tensor<2x3x12xf32>, tensor<2x5x12xf32>, tensor<2x12xf32>)
        along [2, 2, 2, 1]
      outputs along [2] {
  ^bb0(%s: tensor<2x5x3xf32>, %qc: tensor<2x3x4xf32>, %kc: tensor<2x3x4xf32>,
       %vc: tensor<2x5x4xf32>, %lc: tensor<2x4xf32>):
    %step = arith.constant 0.25 : f32
    %zero = arith.constant 0.0 : f32
    %s1 = linalg.generic {indexing_maps = [#tok, #val, #rate, #wt],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%kc, %vc, %lc : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x4xf32>)
        outs(%s : tensor<2x5x3xf32>) {
    ^bb1(%a: f32, %b: f32, %l: f32, %acc: f32):
      %kv = arith.mulf %a, %b : f32
      %kvl = arith.mulf %kv, %l : f32
      %scaled = arith.mulf %kvl, %step : f32
      %sum = arith.addf %acc, %scaled : f32
      linalg.yield %sum : f32
    } -> tensor<2x5x3xf32>
    %e = tensor.empty() : tensor<2x5x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
    %oc = linalg.generic {indexing_maps = [#qa, #wa, #oa],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%qc, %s1 : tensor<2x3x4xf32>, tensor<2x5x3xf32>) outs(%f : tensor<2x5x4xf32>) {
    ^bb2(%x: f32, %y: f32, %z: f32):
      %p = arith.mulf %x, %y : f32
      %r = arith.addf %z, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x5x4xf32>
    ttt.chunk_yield outputs(%oc : tensor<2x5x4xf32>) state(%s1 : tensor<2x5x3xf32>)
  } -> outputs(tensor<2x5x12xf32>) state(tensor<2x5x3xf32>)
  return %o, %w : tensor<2x5x12xf32>, tensor<2x5x3xf32>
}

// -----

// An output through a non-linearity is not q W: left, with its reason.
// CHECK-LABEL: func.func @tanh_output
// CHECK: ttt.chunk_loop
// CHECK-NOT: ttt.kvb_layer
func.func @tanh_output(%w0: tensor<4x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-remark @+1 {{not a ttt.kvb_layer: its output reads its state through 'math.tanh', not by sums of products: a TTT layer with a nonlinear inner model, no linear attention}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<4x4xf32>)
      windows(%x : tensor<8x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4x4xf32>, %xc: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<4x4xf32>
    %p = linalg.matmul ins(%xc, %s : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb1(%a: f32, %b: f32):
      %th = math.tanh %a : f32
      linalg.yield %th : f32
    } -> tensor<4x4xf32>
    %s1 = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%xc, %xc : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%s : tensor<4x4xf32>) -> tensor<4x4xf32>
    ttt.chunk_yield outputs(%t : tensor<4x4xf32>) state(%s1 : tensor<4x4xf32>)
  } -> outputs(tensor<8x4xf32>) state(tensor<4x4xf32>)
  return %o : tensor<8x4xf32>
}

// -----

// A decayed state, 0.9 W + k^T v: an affine update the reader does not take
// for the plain additive one.
// CHECK-LABEL: func.func @decay
// CHECK: ttt.chunk_loop
// CHECK-NOT: ttt.kvb_layer
func.func @decay(%w0: tensor<4x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-remark @+1 {{not a ttt.kvb_layer: its update does not keep the fast weight whole (a decay, another affine map of it: not read yet)}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<4x4xf32>)
      windows(%x : tensor<8x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4x4xf32>, %xc: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %p = linalg.matmul ins(%xc, %s : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
    %d = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb1(%a: f32, %b: f32):
      %c = arith.constant 0.9 : f32
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
    } -> tensor<4x4xf32>
    %s1 = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%xc, %xc : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%d : tensor<4x4xf32>) -> tensor<4x4xf32>
    ttt.chunk_yield outputs(%p : tensor<4x4xf32>) state(%s1 : tensor<4x4xf32>)
  } -> outputs(tensor<8x4xf32>) state(tensor<4x4xf32>)
  return %o : tensor<8x4xf32>
}

// -----

// A running maximum (online softmax's) is carried state that the data
// rescales, not a sum: no fast weight.
// CHECK-LABEL: func.func @running_max
// CHECK: ttt.chunk_loop
// CHECK-NOT: ttt.kvb_layer
func.func @running_max(%m0: tensor<4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-remark @+1 {{not a ttt.kvb_layer: its state is updated through 'arith.maximumf', not by adding sums of products: no fast weight this reader takes (carried state that the data rescales, a running maximum or a normalizer, never is one)}}
  %o, %m = ttt.chunk_loop chunk(4) state(%m0 : tensor<4xf32>)
      windows(%x : tensor<8x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<4x4xf32>):
    %s1 = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t, d)>, affine_map<(t, d) -> (d)>],
        iterator_types = ["reduction", "parallel"]}
        ins(%xc : tensor<4x4xf32>) outs(%s : tensor<4xf32>) {
    ^bb1(%a: f32, %b: f32):
      %mx = arith.maximumf %a, %b : f32
      linalg.yield %mx : f32
    } -> tensor<4xf32>
    %e = tensor.empty() : tensor<4x4xf32>
    %oc = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t, d)>, affine_map<(t, d) -> (d)>, affine_map<(t, d) -> (t, d)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%xc, %s1 : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb1(%a: f32, %b: f32, %c: f32):
      %sub = arith.subf %a, %b : f32
      %ex = math.exp %sub : f32
      linalg.yield %ex : f32
    } -> tensor<4x4xf32>
    ttt.chunk_yield outputs(%oc : tensor<4x4xf32>) state(%s1 : tensor<4xf32>)
  } -> outputs(tensor<8x4xf32>) state(tensor<4xf32>)
  return %o : tensor<8x4xf32>
}

// -----

// Muon: the update k^T v divided by its Frobenius norm (plus eps), then one
// Newton-Schulz step X1 = a X0 + b (X0 X0^T) X0 + c (X0 X0^T)^2 X0, added at
// half a step. Each step is read as a polynomial of the one before.
// CHECK-LABEL: func.func @muon
// CHECK-NOT: ttt.chunk_loop
// CHECK: ttt.kvb_layer
// CHECK-SAME: loss = #ttt.loss<kind = dot>
// CHECK-SAME: update = #ttt.update<lr_scale = 5.000000e-01, orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [3.4444999694824219, -4.7750000953674316, 2.0315001010894775], eps = 1.0000000116860974E-7>>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
#q3 = affine_map<(h, t, i, j) -> (h, t, i)>
#w3 = affine_map<(h, t, i, j) -> (h, i, j)>
#o3 = affine_map<(h, t, i, j) -> (h, t, j)>
#kk = affine_map<(h, i, j, t) -> (h, t, i)>
#vv = affine_map<(h, i, j, t) -> (h, t, j)>
#uu = affine_map<(h, i, j, t) -> (h, i, j)>
#m3 = affine_map<(h, i, j) -> (h, i, j)>
#s1 = affine_map<(h, i, j) -> (h)>
#one = affine_map<(h) -> (h)>
#xa = affine_map<(h, i, l, k) -> (h, i, k)>
#xb = affine_map<(h, i, l, k) -> (h, l, k)>
#xo = affine_map<(h, i, l, k) -> (h, i, l)>
#pa = affine_map<(h, i, j, l) -> (h, i, l)>
#pb = affine_map<(h, i, j, l) -> (h, l, j)>
#po = affine_map<(h, i, j, l) -> (h, i, j)>
func.func @muon(%w0: tensor<2x3x3xf32>, %q: tensor<2x8x3xf32>,
    %k: tensor<2x8x3xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  // expected-remark @+1 {{a linear fast weight (dot loss, Muon (1 Newton-Schulz steps), chunks of 4, apply_then_update)}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<2x3x3xf32>)
      windows(%q, %k, %v : tensor<2x8x3xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>)
        along [1, 1, 1]
      outputs along [1] {
  ^bb0(%s: tensor<2x3x3xf32>, %qc: tensor<2x4x3xf32>, %kc: tensor<2x4x3xf32>,
       %vc: tensor<2x4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %eps = arith.constant 1.0e-7 : f32
    %e43 = tensor.empty() : tensor<2x4x3xf32>
    %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %oc = linalg.generic {indexing_maps = [#q3, #w3, #o3],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%qc, %s : tensor<2x4x3xf32>, tensor<2x3x3xf32>) outs(%z43 : tensor<2x4x3xf32>) {
    ^bb1(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x4x3xf32>
    %e33 = tensor.empty() : tensor<2x3x3xf32>
    %z33 = linalg.fill ins(%zero : f32) outs(%e33 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    // U = k^T v
    %u = linalg.generic {indexing_maps = [#kk, #vv, #uu],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%kc, %vc : tensor<2x4x3xf32>, tensor<2x4x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb2(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // X0 = U / (|U|_F + eps)
    %e2 = tensor.empty() : tensor<2xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
    %sq = linalg.generic {indexing_maps = [#m3, #s1],
        iterator_types = ["parallel", "reduction", "reduction"]}
        ins(%u : tensor<2x3x3xf32>) outs(%z2 : tensor<2xf32>) {
    ^bb3(%a: f32, %c: f32):
      %p = arith.mulf %a, %a : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %norm = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
        ins(%sq : tensor<2xf32>) outs(%e2 : tensor<2xf32>) {
    ^bb4(%a: f32, %c: f32):
      %r = math.sqrt %a : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %shifted = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
        ins(%norm : tensor<2xf32>) outs(%e2 : tensor<2xf32>) {
    ^bb5(%a: f32, %c: f32):
      %r = arith.addf %a, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %x0 = linalg.generic {indexing_maps = [#m3, #s1, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%u, %shifted : tensor<2x3x3xf32>, tensor<2xf32>) outs(%e33 : tensor<2x3x3xf32>) {
    ^bb6(%a: f32, %b: f32, %c: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // One step: X1 = a X0 + b (X0 X0^T) X0 + c (X0 X0^T)^2 X0
    %gram = linalg.generic {indexing_maps = [#xa, #xb, #xo],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x0, %x0 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb7(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %ax = linalg.generic {indexing_maps = [#pa, #pb, #po],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%gram, %x0 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb8(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %aax = linalg.generic {indexing_maps = [#pa, #pb, #po],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%gram, %ax : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb9(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %ca = arith.constant 3.4445 : f32
    %cb = arith.constant -4.775 : f32
    %cc = arith.constant 2.0315 : f32
    %x1 = linalg.generic {indexing_maps = [#m3, #m3, #m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x0, %ax, %aax : tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>)
        outs(%e33 : tensor<2x3x3xf32>) {
    ^bb10(%a: f32, %b: f32, %c: f32, %d: f32):
      %ta = arith.mulf %a, %ca : f32
      %tb = arith.mulf %b, %cb : f32
      %tc = arith.mulf %c, %cc : f32
      %sab = arith.addf %ta, %tb : f32
      %r = arith.addf %sab, %tc : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // W' = W + 0.5 X1
    %half = arith.constant 0.5 : f32
    %s1 = linalg.generic {indexing_maps = [#m3, #m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%s, %x1 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%e33 : tensor<2x3x3xf32>) {
    ^bb11(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %b, %half : f32
      %r = arith.addf %a, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    ttt.chunk_yield outputs(%oc : tensor<2x4x3xf32>) state(%s1 : tensor<2x3x3xf32>)
  } -> outputs(tensor<2x8x3xf32>) state(tensor<2x3x3xf32>)
  return %o : tensor<2x8x3xf32>
}

// -----

// Muon as LaCT ships it: the update cast to bf16, the steps computed in bf16
// (the constants bf16 too), the result cast back to the weights' f32: read
// with `compute = bf16`, the coefficients as the program rounded them.
// CHECK-LABEL: func.func @muon_in_bf16
// CHECK-NOT: ttt.chunk_loop
// CHECK: ttt.kvb_layer
// CHECK-SAME: orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [3.437500e+00, -4.781250e+00, 2.031250e+00], eps = 1.0011717677116394E-7, compute = bf16>
#q3 = affine_map<(h, t, i, j) -> (h, t, i)>
#w3 = affine_map<(h, t, i, j) -> (h, i, j)>
#o3 = affine_map<(h, t, i, j) -> (h, t, j)>
#kk = affine_map<(h, i, j, t) -> (h, t, i)>
#vv = affine_map<(h, i, j, t) -> (h, t, j)>
#uu = affine_map<(h, i, j, t) -> (h, i, j)>
#m3 = affine_map<(h, i, j) -> (h, i, j)>
#s1 = affine_map<(h, i, j) -> (h)>
#one = affine_map<(h) -> (h)>
#xa = affine_map<(h, i, l, k) -> (h, i, k)>
#xb = affine_map<(h, i, l, k) -> (h, l, k)>
#xo = affine_map<(h, i, l, k) -> (h, i, l)>
#pa = affine_map<(h, i, j, l) -> (h, i, l)>
#pb = affine_map<(h, i, j, l) -> (h, l, j)>
#po = affine_map<(h, i, j, l) -> (h, i, j)>
func.func @muon_in_bf16(%w0: tensor<2x3x3xf32>, %q: tensor<2x8x3xf32>,
    %k: tensor<2x8x3xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  // expected-remark @+1 {{a linear fast weight (dot loss, Muon (1 Newton-Schulz steps in bf16), chunks of 4, apply_then_update)}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<2x3x3xf32>)
      windows(%q, %k, %v : tensor<2x8x3xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>)
        along [1, 1, 1]
      outputs along [1] {
  ^bb0(%s: tensor<2x3x3xf32>, %qc: tensor<2x4x3xf32>, %kc: tensor<2x4x3xf32>,
       %vc: tensor<2x4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %eps = arith.constant 1.0e-7 : f32
    %e43 = tensor.empty() : tensor<2x4x3xf32>
    %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %oc = linalg.generic {indexing_maps = [#q3, #w3, #o3],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%qc, %s : tensor<2x4x3xf32>, tensor<2x3x3xf32>) outs(%z43 : tensor<2x4x3xf32>) {
    ^bb1(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x4x3xf32>
    %e33 = tensor.empty() : tensor<2x3x3xf32>
    %z33 = linalg.fill ins(%zero : f32) outs(%e33 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    // U = k^T v
    %u = linalg.generic {indexing_maps = [#kk, #vv, #uu],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%kc, %vc : tensor<2x4x3xf32>, tensor<2x4x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb2(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // In bf16 (as LaCT ships Muon): U cast down, the steps in bf16.
    %zb = arith.constant 0.0 : bf16
    %epsb = arith.constant 1.0e-7 : bf16
    %b33 = tensor.empty() : tensor<2x3x3xbf16>
    %zb33 = linalg.fill ins(%zb : bf16) outs(%b33 : tensor<2x3x3xbf16>) -> tensor<2x3x3xbf16>
    %b2 = tensor.empty() : tensor<2xbf16>
    %zb2 = linalg.fill ins(%zb : bf16) outs(%b2 : tensor<2xbf16>) -> tensor<2xbf16>
    %ub = linalg.generic {indexing_maps = [#m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%u : tensor<2x3x3xf32>) outs(%b33 : tensor<2x3x3xbf16>) {
    ^bb12(%a: f32, %c: bf16):
      %r = arith.truncf %a : f32 to bf16
      linalg.yield %r : bf16
    } -> tensor<2x3x3xbf16>
    // X0 = U / (|U|_F + eps)
    %sq = linalg.generic {indexing_maps = [#m3, #s1],
        iterator_types = ["parallel", "reduction", "reduction"]}
        ins(%ub : tensor<2x3x3xbf16>) outs(%zb2 : tensor<2xbf16>) {
    ^bb3(%a: bf16, %c: bf16):
      %p = arith.mulf %a, %a : bf16
      %r = arith.addf %c, %p : bf16
      linalg.yield %r : bf16
    } -> tensor<2xbf16>
    %norm = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
        ins(%sq : tensor<2xbf16>) outs(%b2 : tensor<2xbf16>) {
    ^bb4(%a: bf16, %c: bf16):
      %r = math.sqrt %a : bf16
      linalg.yield %r : bf16
    } -> tensor<2xbf16>
    %shifted = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
        ins(%norm : tensor<2xbf16>) outs(%b2 : tensor<2xbf16>) {
    ^bb5(%a: bf16, %c: bf16):
      %r = arith.addf %a, %epsb : bf16
      linalg.yield %r : bf16
    } -> tensor<2xbf16>
    %x0 = linalg.generic {indexing_maps = [#m3, #s1, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%ub, %shifted : tensor<2x3x3xbf16>, tensor<2xbf16>) outs(%b33 : tensor<2x3x3xbf16>) {
    ^bb6(%a: bf16, %b: bf16, %c: bf16):
      %r = arith.divf %a, %b : bf16
      linalg.yield %r : bf16
    } -> tensor<2x3x3xbf16>
    // One step: X1 = a X0 + b (X0 X0^T) X0 + c (X0 X0^T)^2 X0
    %gram = linalg.generic {indexing_maps = [#xa, #xb, #xo],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x0, %x0 : tensor<2x3x3xbf16>, tensor<2x3x3xbf16>) outs(%zb33 : tensor<2x3x3xbf16>) {
    ^bb7(%a: bf16, %b: bf16, %c: bf16):
      %p = arith.mulf %a, %b : bf16
      %r = arith.addf %c, %p : bf16
      linalg.yield %r : bf16
    } -> tensor<2x3x3xbf16>
    %ax = linalg.generic {indexing_maps = [#pa, #pb, #po],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%gram, %x0 : tensor<2x3x3xbf16>, tensor<2x3x3xbf16>) outs(%zb33 : tensor<2x3x3xbf16>) {
    ^bb8(%a: bf16, %b: bf16, %c: bf16):
      %p = arith.mulf %a, %b : bf16
      %r = arith.addf %c, %p : bf16
      linalg.yield %r : bf16
    } -> tensor<2x3x3xbf16>
    %aax = linalg.generic {indexing_maps = [#pa, #pb, #po],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%gram, %ax : tensor<2x3x3xbf16>, tensor<2x3x3xbf16>) outs(%zb33 : tensor<2x3x3xbf16>) {
    ^bb9(%a: bf16, %b: bf16, %c: bf16):
      %p = arith.mulf %a, %b : bf16
      %r = arith.addf %c, %p : bf16
      linalg.yield %r : bf16
    } -> tensor<2x3x3xbf16>
    %ca = arith.constant 3.4445 : bf16
    %cb = arith.constant -4.775 : bf16
    %cc = arith.constant 2.0315 : bf16
    %x1 = linalg.generic {indexing_maps = [#m3, #m3, #m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x0, %ax, %aax : tensor<2x3x3xbf16>, tensor<2x3x3xbf16>, tensor<2x3x3xbf16>)
        outs(%b33 : tensor<2x3x3xbf16>) {
    ^bb10(%a: bf16, %b: bf16, %c: bf16, %d: bf16):
      %ta = arith.mulf %a, %ca : bf16
      %tb = arith.mulf %b, %cb : bf16
      %tc = arith.mulf %c, %cc : bf16
      %sab = arith.addf %ta, %tb : bf16
      %r = arith.addf %sab, %tc : bf16
      linalg.yield %r : bf16
    } -> tensor<2x3x3xbf16>
    %x1f = linalg.generic {indexing_maps = [#m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x1 : tensor<2x3x3xbf16>) outs(%e33 : tensor<2x3x3xf32>) {
    ^bb13(%a: bf16, %c: f32):
      %r = arith.extf %a : bf16 to f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // W' = W + 0.5 X1
    %half = arith.constant 0.5 : f32
    %s1 = linalg.generic {indexing_maps = [#m3, #m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%s, %x1f : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%e33 : tensor<2x3x3xf32>) {
    ^bb11(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %b, %half : f32
      %r = arith.addf %a, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    ttt.chunk_yield outputs(%oc : tensor<2x4x3xf32>) state(%s1 : tensor<2x3x3xf32>)
  } -> outputs(tensor<2x8x3xf32>) state(tensor<2x3x3xf32>)
  return %o : tensor<2x8x3xf32>
}

// -----

// LaCT's minimal bidirectional layer writes its Muon step as `W = NS(U);
// W = W + U`: the weight becomes NS(U) + U, nothing of the old one kept.
// ttt.kvb_layer's `base = update` does that; the SwiGLU reader reads it
// (test_corpus.py), a linear fast weight's is refused by name.
// CHECK-LABEL: func.func @muon_replaces_the_weight
// CHECK: ttt.chunk_loop
// CHECK-NOT: ttt.kvb_layer
#q3 = affine_map<(h, t, i, j) -> (h, t, i)>
#w3 = affine_map<(h, t, i, j) -> (h, i, j)>
#o3 = affine_map<(h, t, i, j) -> (h, t, j)>
#kk = affine_map<(h, i, j, t) -> (h, t, i)>
#vv = affine_map<(h, i, j, t) -> (h, t, j)>
#uu = affine_map<(h, i, j, t) -> (h, i, j)>
#m3 = affine_map<(h, i, j) -> (h, i, j)>
#s1 = affine_map<(h, i, j) -> (h)>
#one = affine_map<(h) -> (h)>
#xa = affine_map<(h, i, l, k) -> (h, i, k)>
#xb = affine_map<(h, i, l, k) -> (h, l, k)>
#xo = affine_map<(h, i, l, k) -> (h, i, l)>
#pa = affine_map<(h, i, j, l) -> (h, i, l)>
#pb = affine_map<(h, i, j, l) -> (h, l, j)>
#po = affine_map<(h, i, j, l) -> (h, i, j)>
func.func @muon_replaces_the_weight(%w0: tensor<2x3x3xf32>, %q: tensor<2x8x3xf32>,
    %k: tensor<2x8x3xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  // expected-remark @+1 {{not a ttt.kvb_layer: its state 0 becomes Muon's result plus the update it orthogonalized (W' = NS(U) + U, as LaCT's minimal bidirectional layer writes its step), which keeps nothing of the old weight (ttt.kvb_layer's `base = update`): read for SwiGLU networks only}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<2x3x3xf32>)
      windows(%q, %k, %v : tensor<2x8x3xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>)
        along [1, 1, 1]
      outputs along [1] {
  ^bb0(%s: tensor<2x3x3xf32>, %qc: tensor<2x4x3xf32>, %kc: tensor<2x4x3xf32>,
       %vc: tensor<2x4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %eps = arith.constant 1.0e-7 : f32
    %e43 = tensor.empty() : tensor<2x4x3xf32>
    %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %oc = linalg.generic {indexing_maps = [#q3, #w3, #o3],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%qc, %s : tensor<2x4x3xf32>, tensor<2x3x3xf32>) outs(%z43 : tensor<2x4x3xf32>) {
    ^bb1(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x4x3xf32>
    %e33 = tensor.empty() : tensor<2x3x3xf32>
    %z33 = linalg.fill ins(%zero : f32) outs(%e33 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    // U = k^T v
    %u = linalg.generic {indexing_maps = [#kk, #vv, #uu],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%kc, %vc : tensor<2x4x3xf32>, tensor<2x4x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb2(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // X0 = U / (|U|_F + eps)
    %e2 = tensor.empty() : tensor<2xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
    %sq = linalg.generic {indexing_maps = [#m3, #s1],
        iterator_types = ["parallel", "reduction", "reduction"]}
        ins(%u : tensor<2x3x3xf32>) outs(%z2 : tensor<2xf32>) {
    ^bb3(%a: f32, %c: f32):
      %p = arith.mulf %a, %a : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %norm = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
        ins(%sq : tensor<2xf32>) outs(%e2 : tensor<2xf32>) {
    ^bb4(%a: f32, %c: f32):
      %r = math.sqrt %a : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %shifted = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
        ins(%norm : tensor<2xf32>) outs(%e2 : tensor<2xf32>) {
    ^bb5(%a: f32, %c: f32):
      %r = arith.addf %a, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    %x0 = linalg.generic {indexing_maps = [#m3, #s1, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%u, %shifted : tensor<2x3x3xf32>, tensor<2xf32>) outs(%e33 : tensor<2x3x3xf32>) {
    ^bb6(%a: f32, %b: f32, %c: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // One step: X1 = a X0 + b (X0 X0^T) X0 + c (X0 X0^T)^2 X0
    %gram = linalg.generic {indexing_maps = [#xa, #xb, #xo],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x0, %x0 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb7(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %ax = linalg.generic {indexing_maps = [#pa, #pb, #po],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%gram, %x0 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb8(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %aax = linalg.generic {indexing_maps = [#pa, #pb, #po],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%gram, %ax : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%z33 : tensor<2x3x3xf32>) {
    ^bb9(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %ca = arith.constant 3.4445 : f32
    %cb = arith.constant -4.775 : f32
    %cc = arith.constant 2.0315 : f32
    %x1 = linalg.generic {indexing_maps = [#m3, #m3, #m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x0, %ax, %aax : tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>)
        outs(%e33 : tensor<2x3x3xf32>) {
    ^bb10(%a: f32, %b: f32, %c: f32, %d: f32):
      %ta = arith.mulf %a, %ca : f32
      %tb = arith.mulf %b, %cb : f32
      %tc = arith.mulf %c, %cc : f32
      %sab = arith.addf %ta, %tb : f32
      %r = arith.addf %sab, %tc : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    // W' = NS(U) + U: the update replaces the weight.
    %s1 = linalg.generic {indexing_maps = [#m3, #m3, #m3],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x1, %u : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%e33 : tensor<2x3x3xf32>) {
    ^bb11(%a: f32, %b: f32, %c: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    ttt.chunk_yield outputs(%oc : tensor<2x4x3xf32>) state(%s1 : tensor<2x3x3xf32>)
  } -> outputs(tensor<2x8x3xf32>) state(tensor<2x3x3xf32>)
  return %o : tensor<2x8x3xf32>
}

// -----

// Two fast weights applied one after the other (an inner model of two
// layers without an activation): degree 2 in the state, no linear attention.
// CHECK-LABEL: func.func @two_layers
// CHECK: ttt.chunk_loop
// CHECK-NOT: ttt.kvb_layer
func.func @two_layers(%a0: tensor<4x4xf32>, %b0: tensor<4x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-remark @+1 {{not a ttt.kvb_layer: its output multiplies 2 values of its state (an inner model of several layers): a TTT layer, no linear attention}}
  %o, %a, %b = ttt.chunk_loop chunk(4) state(%a0, %b0 : tensor<4x4xf32>, tensor<4x4xf32>)
      windows(%x : tensor<8x4xf32>) along [0] outputs along [0] {
  ^bb0(%sa: tensor<4x4xf32>, %sb: tensor<4x4xf32>, %xc: tensor<4x4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %h = linalg.matmul ins(%xc, %sa : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
    %y = linalg.matmul ins(%h, %sb : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
    %na = linalg.matmul ins(%xc, %xc : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%sa : tensor<4x4xf32>) -> tensor<4x4xf32>
    %nb = linalg.matmul ins(%xc, %xc : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%sb : tensor<4x4xf32>) -> tensor<4x4xf32>
    ttt.chunk_yield outputs(%y : tensor<4x4xf32>) state(%na, %nb : tensor<4x4xf32>, tensor<4x4xf32>)
  } -> outputs(tensor<8x4xf32>) state(tensor<4x4xf32>, tensor<4x4xf32>)
  return %o : tensor<8x4xf32>
}

// -----

// Chunks over the keys' run-time length: the loop reads the other sequences
// (here the queries) over that length, so the layer reads them cut to it.
// CHECK-LABEL: func.func @queries_cut_to_the_loop_length
// CHECK-SAME: (%[[W0:.*]]: tensor<3x5xf32>, %[[K:.*]]: tensor<?x3xf32>, %[[V:.*]]: tensor<?x5xf32>, %[[Q:.*]]: tensor<?x3xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[K]], %{{.*}}
// CHECK: tensor.extract_slice %[[V]][0, 0] [%[[T]], 5] [1, 1]
// CHECK-NOT: tensor.dim
// CHECK: tensor.extract_slice %[[Q]][0, 0] [%[[T]], 3] [1, 1]
// CHECK: ttt.kvb_layer
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4, order = update_then_apply>
#kv = affine_map<(i, j, t) -> (t, i)>
#vv = affine_map<(i, j, t) -> (t, j)>
#sv = affine_map<(i, j, t) -> (i, j)>
func.func @queries_cut_to_the_loop_length(%w0: tensor<3x5xf32>, %k: tensor<?x3xf32>,
    %v: tensor<?x5xf32>, %q: tensor<?x3xf32>) -> tensor<?x5xf32> {
  // expected-remark @+1 {{a linear fast weight}}
  %o, %w = ttt.chunk_loop chunk(4) state(%w0 : tensor<3x5xf32>)
      windows(%k, %v, %q : tensor<?x3xf32>, tensor<?x5xf32>, tensor<?x3xf32>)
        along [0, 0, 0]
      outputs along [0] {
  ^bb0(%s: tensor<3x5xf32>, %kc: tensor<?x3xf32>, %vc: tensor<?x5xf32>,
       %qc: tensor<?x3xf32>):
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %s1 = linalg.generic {indexing_maps = [#kv, #vv, #sv],
        iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%kc, %vc : tensor<?x3xf32>, tensor<?x5xf32>) outs(%s : tensor<3x5xf32>) {
    ^bb1(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %sum = arith.addf %acc, %p : f32
      linalg.yield %sum : f32
    } -> tensor<3x5xf32>
    %n = tensor.dim %qc, %c0 : tensor<?x3xf32>
    %e = tensor.empty(%n) : tensor<?x5xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
    %oc = linalg.matmul ins(%qc, %s1 : tensor<?x3xf32>, tensor<3x5xf32>)
        outs(%f : tensor<?x5xf32>) -> tensor<?x5xf32>
    ttt.chunk_yield outputs(%oc : tensor<?x5xf32>) state(%s1 : tensor<3x5xf32>)
  } -> outputs(tensor<?x5xf32>) state(tensor<3x5xf32>)
  return %o : tensor<?x5xf32>
}
