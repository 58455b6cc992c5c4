// LaCT's SwiGLU fast weights read off a ttt.chunk_loop: the model from the
// output (the sigmoid the one leaf that is no sum of products), each
// weight's update proved to be the dot loss's gradient step the model
// implies, the weight norm to the initial column norms read around it.
// Written from the math by test/python/swiglu_chunk_loops.py, where
// test_swiglu_chunk_loop.py checks the numbers on random layouts.
// RUN: ttt-opt %s --ttt-raise-chunk-loops=explain --split-input-file -verify-diagnostics | FileCheck %s

// LaCT-NVS's step: one chunk, update then apply, feature-major tokens, W1
// stored output x input, a rate per weight, weight norm.
// CHECK-LABEL: func.func @lact_nvs_like
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x4xf32>, %[[K:.*]]: tensor<2x3x4xf32>, %[[V:.*]]: tensor<2x3x4xf32>, %[[L0:.*]]: tensor<2x4xf32>, %[[L1:.*]]: tensor<2x4xf32>, %[[L2:.*]]: tensor<2x4xf32>)
// CHECK-NOT: ttt.chunk_loop
// CHECK: %[[LR:.*]] = tensor.concat dim(3) {{.*}} -> tensor<1x2x4x3xf32>
// CHECK: %[[W1T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x3x2xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: ttt.kvb_layer
// CHECK-SAME: weights(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x2xf32>, tensor<2x2x3xf32>, tensor<2x3x2xf32>) lr(%[[LR]] : tensor<1x2x4x3xf32>)
// CHECK-SAME: model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot>
// CHECK-SAME: update = #ttt.update<weight_norm = output_channels
// CHECK-SAME: schedule = #ttt.schedule<kind = full_batch>
// CHECK: %[[O:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x4x3xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: return %[[O]] : tensor<2x3x4xf32>
func.func @lact_nvs_like(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>, %l0: tensor<2x4xf32>, %l1: tensor<2x4xf32>, %l2: tensor<2x4xf32>) -> tensor<2x3x4xf32> {
  %w0 = arith.constant dense<[0.0007102293893694878, 0.17248082160949707, -0.15827356278896332, -0.5141834616661072, -0.26250430941581726, -0.5725274085998535, 0.034723926335573196, 0.7737736105918884, -0.2841755747795105, -0.3582313358783722, 0.2828104496002197, 0.20604881644248962]> : tensor<12xf32>
  %w0r = tensor.expand_shape %w0 [[0, 1, 2]] output_shape [2, 3, 2] : tensor<12xf32> into tensor<2x3x2xf32>
  %w1 = arith.constant dense<[0.07453913241624832, 0.49165359139442444, -0.6579402685165405, -0.9505032300949097, -0.02068416215479374, -0.3235832154750824, -1.344367504119873, -0.16623453795909882, -0.9118408560752869, -0.8962200284004211, -1.3023033142089844, 0.19181287288665771]> : tensor<12xf32>
  %w1r = tensor.expand_shape %w1 [[0, 1, 2]] output_shape [2, 3, 2] : tensor<12xf32> into tensor<2x3x2xf32>
  %w2 = arith.constant dense<[0.09050028026103973, -0.10792463272809982, -1.4530519247055054, -0.3110145032405853, -0.02800203301012516, 0.06541897356510162, -0.8834242820739746, -0.2758309841156006, -0.5649482607841492, -0.4669823944568634, 0.612510085105896, -0.4662303626537323]> : tensor<12xf32>
  %w2r = tensor.expand_shape %w2 [[0, 1, 2]] output_shape [2, 3, 2] : tensor<12xf32> into tensor<2x3x2xf32>
  // expected-remark @below {{a SwiGLU fast-weight network (dot loss, per-token rates, weight norm, one chunk)}}
  %o, %f:3 = ttt.chunk_loop chunk(0) state(%w0r, %w1r, %w2r : tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>)
      windows(%q, %k, %v, %l0, %l1, %l2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) along [2, 2, 2, 1, 1, 1]
      outputs along [2] {
  ^bb0(%s0: tensor<2x3x2xf32>, %s1: tensor<2x3x2xf32>, %s2: tensor<2x3x2xf32>, %qc: tensor<2x3x4xf32>, %kc: tensor<2x3x4xf32>, %vc: tensor<2x3x4xf32>, %l0c: tensor<2x4xf32>, %l1c: tensor<2x4xf32>, %l2c: tensor<2x4xf32>):
    %e1 = tensor.empty() : tensor<2x2x4xf32>
    %z2 = arith.constant 0.0 : f32
    %f3 = linalg.fill ins(%z2 : f32) outs(%e1 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
    %g4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s0, %kc : tensor<2x3x2xf32>, tensor<2x3x4xf32>) outs(%f3 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e5 = tensor.empty() : tensor<2x2x4xf32>
    %z6 = arith.constant 0.0 : f32
    %f7 = linalg.fill ins(%z6 : f32) outs(%e5 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
    %g8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s2, %kc : tensor<2x3x2xf32>, tensor<2x3x4xf32>) outs(%f7 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e9 = tensor.empty() : tensor<2x2x4xf32>
    %g10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4 : tensor<2x2x4xf32>) outs(%e9 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x2x4xf32>
    %e11 = tensor.empty() : tensor<2x2x4xf32>
    %g12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4, %g10 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e11 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e13 = tensor.empty() : tensor<2x2x4xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g12, %g8 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e13 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e15 = tensor.empty() : tensor<2x2x4xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s1, %vc : tensor<2x3x2xf32>, tensor<2x3x4xf32>) outs(%f17 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e19 = tensor.empty() : tensor<2x2x4xf32>
    %g20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g10 : tensor<2x2x4xf32>) outs(%e19 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %one = arith.constant 1.0 : f32
      %r = arith.subf %one, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e21 = tensor.empty() : tensor<2x2x4xf32>
    %g22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4, %g20 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e21 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e23 = tensor.empty() : tensor<2x2x4xf32>
    %g24 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g22 : tensor<2x2x4xf32>) outs(%e23 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %one = arith.constant 1.0 : f32
      %r = arith.addf %a0, %one : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e25 = tensor.empty() : tensor<2x2x4xf32>
    %g26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g10, %g24 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e25 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e27 = tensor.empty() : tensor<2x2x4xf32>
    %g28 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g18, %g8 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e27 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e29 = tensor.empty() : tensor<2x2x4xf32>
    %g30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g28, %g26 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e29 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e31 = tensor.empty() : tensor<2x2x4xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g18, %g12 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e31 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e33 = tensor.empty() : tensor<2x3x4xf32>
    %g34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%vc, %l1c : tensor<2x3x4xf32>, tensor<2x4xf32>) outs(%e33 : tensor<2x3x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      linalg.yield %m0 : f32
    } -> tensor<2x3x4xf32>
    %e35 = tensor.empty() : tensor<2x3x2xf32>
    %z36 = arith.constant 0.0 : f32
    %f37 = linalg.fill ins(%z36 : f32) outs(%e35 : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %g38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%g34, %g14 : tensor<2x3x4xf32>, tensor<2x2x4xf32>) outs(%f37 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 1.0 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e39 = tensor.empty() : tensor<2x3x4xf32>
    %g40 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kc, %l0c : tensor<2x3x4xf32>, tensor<2x4xf32>) outs(%e39 : tensor<2x3x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      linalg.yield %m0 : f32
    } -> tensor<2x3x4xf32>
    %e41 = tensor.empty() : tensor<2x3x2xf32>
    %z42 = arith.constant 0.0 : f32
    %f43 = linalg.fill ins(%z42 : f32) outs(%e41 : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %g44 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%g30, %g40 : tensor<2x2x4xf32>, tensor<2x3x4xf32>) outs(%f43 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 1.0 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e45 = tensor.empty() : tensor<2x3x4xf32>
    %g46 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kc, %l2c : tensor<2x3x4xf32>, tensor<2x4xf32>) outs(%e45 : tensor<2x3x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      linalg.yield %m0 : f32
    } -> tensor<2x3x4xf32>
    %e47 = tensor.empty() : tensor<2x3x2xf32>
    %z48 = arith.constant 0.0 : f32
    %f49 = linalg.fill ins(%z48 : f32) outs(%e47 : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %g50 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%g32, %g46 : tensor<2x2x4xf32>, tensor<2x3x4xf32>) outs(%f49 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 1.0 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e51 = tensor.empty() : tensor<2x3x2xf32>
    %g52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s0, %g44 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%e51 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x2xf32>
    %e53 = tensor.empty() : tensor<2x2xf32>
    %z54 = arith.constant 0.0 : f32
    %f55 = linalg.fill ins(%z54 : f32) outs(%e53 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g52 : tensor<2x3x2xf32>) outs(%f55 : tensor<2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %p = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x2xf32>
    %e57 = tensor.empty() : tensor<2x2xf32>
    %g58 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g56 : tensor<2x2xf32>) outs(%e57 : tensor<2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2xf32>
    %e59 = tensor.empty() : tensor<2x2xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g58 : tensor<2x2xf32>) outs(%e59 : tensor<2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0e-05 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x2xf32>
    %e61 = tensor.empty() : tensor<2x3x2xf32>
    %g62 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g52, %g60 : tensor<2x3x2xf32>, tensor<2x2xf32>) outs(%e61 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %norms63 = arith.constant dense<[[0.3065282106399536, 0.7886202335357666], [0.4024217426776886, 0.8772180080413818]]> : tensor<2x2xf32>
    %e64 = tensor.empty() : tensor<2x3x2xf32>
    %g65 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g62, %norms63 : tensor<2x3x2xf32>, tensor<2x2xf32>) outs(%e64 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e66 = tensor.empty() : tensor<2x3x2xf32>
    %g67 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s1, %g38 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%e66 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x2xf32>
    %e68 = tensor.empty() : tensor<2x3xf32>
    %z69 = arith.constant 0.0 : f32
    %f70 = linalg.fill ins(%z69 : f32) outs(%e68 : tensor<2x3xf32>) -> tensor<2x3xf32>
    %g71 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g67 : tensor<2x3x2xf32>) outs(%f70 : tensor<2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %p = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x3xf32>
    %e72 = tensor.empty() : tensor<2x3xf32>
    %g73 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g71 : tensor<2x3xf32>) outs(%e72 : tensor<2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x3xf32>
    %e74 = tensor.empty() : tensor<2x3xf32>
    %g75 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g73 : tensor<2x3xf32>) outs(%e74 : tensor<2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0e-05 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x3xf32>
    %e76 = tensor.empty() : tensor<2x3x2xf32>
    %g77 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g67, %g75 : tensor<2x3x2xf32>, tensor<2x3xf32>) outs(%e76 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %norms78 = arith.constant dense<[[0.49727189540863037, 1.1560025215148926, 0.3242436349391937], [1.3546061515808105, 1.278539776802063, 1.3163533210754395]]> : tensor<2x3xf32>
    %e79 = tensor.empty() : tensor<2x3x2xf32>
    %g80 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g77, %norms78 : tensor<2x3x2xf32>, tensor<2x3xf32>) outs(%e79 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e81 = tensor.empty() : tensor<2x3x2xf32>
    %g82 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s2, %g50 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%e81 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x2xf32>
    %e83 = tensor.empty() : tensor<2x2xf32>
    %z84 = arith.constant 0.0 : f32
    %f85 = linalg.fill ins(%z84 : f32) outs(%e83 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %g86 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g82 : tensor<2x3x2xf32>) outs(%f85 : tensor<2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %p = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x2xf32>
    %e87 = tensor.empty() : tensor<2x2xf32>
    %g88 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g86 : tensor<2x2xf32>) outs(%e87 : tensor<2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2xf32>
    %e89 = tensor.empty() : tensor<2x2xf32>
    %g90 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g88 : tensor<2x2xf32>) outs(%e89 : tensor<2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0e-05 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x2xf32>
    %e91 = tensor.empty() : tensor<2x3x2xf32>
    %g92 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g82, %g90 : tensor<2x3x2xf32>, tensor<2x2xf32>) outs(%e91 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %norms93 = arith.constant dense<[[1.4561368227005005, 0.33564475178718567], [1.2144025564193726, 0.715210497379303]]> : tensor<2x2xf32>
    %e94 = tensor.empty() : tensor<2x3x2xf32>
    %g95 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g92, %norms93 : tensor<2x3x2xf32>, tensor<2x2xf32>) outs(%e94 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e96 = tensor.empty() : tensor<2x2x4xf32>
    %z97 = arith.constant 0.0 : f32
    %f98 = linalg.fill ins(%z97 : f32) outs(%e96 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
    %g99 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%g65, %qc : tensor<2x3x2xf32>, tensor<2x3x4xf32>) outs(%f98 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e100 = tensor.empty() : tensor<2x2x4xf32>
    %z101 = arith.constant 0.0 : f32
    %f102 = linalg.fill ins(%z101 : f32) outs(%e100 : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
    %g103 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%g95, %qc : tensor<2x3x2xf32>, tensor<2x3x4xf32>) outs(%f102 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x4xf32>
    %e104 = tensor.empty() : tensor<2x2x4xf32>
    %g105 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g99 : tensor<2x2x4xf32>) outs(%e104 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x2x4xf32>
    %e106 = tensor.empty() : tensor<2x2x4xf32>
    %g107 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g99, %g105 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e106 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e108 = tensor.empty() : tensor<2x2x4xf32>
    %g109 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g107, %g103 : tensor<2x2x4xf32>, tensor<2x2x4xf32>) outs(%e108 : tensor<2x2x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x4xf32>
    %e110 = tensor.empty() : tensor<2x3x4xf32>
    %z111 = arith.constant 0.0 : f32
    %f112 = linalg.fill ins(%z111 : f32) outs(%e110 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %g113 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%g80, %g109 : tensor<2x3x2xf32>, tensor<2x2x4xf32>) outs(%f112 : tensor<2x3x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x4xf32>
    ttt.chunk_yield outputs(%g113 : tensor<2x3x4xf32>) state(%g65, %g80, %g95 : tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>)
  } -> outputs(tensor<2x3x4xf32>) state(tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>)
  return %o : tensor<2x3x4xf32>
}

// -----

// silu'(z) written as sigma(z) alone: W0's update is no gradient of the
// network the output applies, and the loop stays.
// CHECK-LABEL: func.func @sigmoid_in_place_of_silu_grad
// CHECK: ttt.chunk_loop chunk(2)
// CHECK-NOT: ttt.kvb_layer
func.func @sigmoid_in_place_of_silu_grad(%w0: tensor<2x2x3xf32>, %w1: tensor<2x3x2xf32>, %w2: tensor<2x3x2xf32>, %q: tensor<2x4x3xf32>, %k: tensor<2x4x3xf32>, %v: tensor<2x4x3xf32>, %l0: tensor<2x4xf32>) -> tensor<2x4x3xf32> {
  // expected-remark @below {{not a ttt.kvb_layer: a SwiGLU fast-weight network (W1 (silu(W0 x) * (W2 x))): a TTT layer with a nonlinear inner model, no linear attention; no ttt.kvb_layer yet: W0's update is not the dot loss's gradient step for the SwiGLU network its output applies}}
  %o, %f:3 = ttt.chunk_loop chunk(2) state(%w0, %w1, %w2 : tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>)
      windows(%q, %k, %v, %l0 : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>) along [1, 1, 1, 1]
      outputs along [1] {
  ^bb0(%s0: tensor<2x2x3xf32>, %s1: tensor<2x3x2xf32>, %s2: tensor<2x3x2xf32>, %qc: tensor<2x2x3xf32>, %kc: tensor<2x2x3xf32>, %vc: tensor<2x2x3xf32>, %l0c: tensor<2x2xf32>):
    %e1 = tensor.empty() : tensor<2x2x2xf32>
    %z2 = arith.constant 0.0 : f32
    %f3 = linalg.fill ins(%z2 : f32) outs(%e1 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s0, %kc : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f3 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e5 = tensor.empty() : tensor<2x2x2xf32>
    %z6 = arith.constant 0.0 : f32
    %f7 = linalg.fill ins(%z6 : f32) outs(%e5 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s2, %kc : tensor<2x3x2xf32>, tensor<2x2x3xf32>) outs(%f7 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e9 = tensor.empty() : tensor<2x2x2xf32>
    %g10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4 : tensor<2x2x2xf32>) outs(%e9 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x2x2xf32>
    %e11 = tensor.empty() : tensor<2x2x2xf32>
    %g12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4, %g10 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e11 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e13 = tensor.empty() : tensor<2x2x2xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g12, %g8 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e13 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e15 = tensor.empty() : tensor<2x2x2xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s1, %vc : tensor<2x3x2xf32>, tensor<2x2x3xf32>) outs(%f17 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e19 = tensor.empty() : tensor<2x2x2xf32>
    %g20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g18, %g8 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e19 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e21 = tensor.empty() : tensor<2x2x2xf32>
    %g22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g20, %g10 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e21 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e23 = tensor.empty() : tensor<2x2x2xf32>
    %g24 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g18, %g12 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e23 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e25 = tensor.empty() : tensor<2x2x3xf32>
    %g26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%vc, %l0c : tensor<2x2x3xf32>, tensor<2x2xf32>) outs(%e25 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      linalg.yield %m0 : f32
    } -> tensor<2x2x3xf32>
    %e27 = tensor.empty() : tensor<2x3x2xf32>
    %z28 = arith.constant 0.0 : f32
    %f29 = linalg.fill ins(%z28 : f32) outs(%e27 : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %g30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%g26, %g14 : tensor<2x2x3xf32>, tensor<2x2x2xf32>) outs(%f29 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %sc = arith.constant 0.5 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e31 = tensor.empty() : tensor<2x2x3xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kc, %l0c : tensor<2x2x3xf32>, tensor<2x2xf32>) outs(%e31 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      linalg.yield %m0 : f32
    } -> tensor<2x2x3xf32>
    %e33 = tensor.empty() : tensor<2x2x3xf32>
    %z34 = arith.constant 0.0 : f32
    %f35 = linalg.fill ins(%z34 : f32) outs(%e33 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%g22, %g32 : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%f35 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %sc = arith.constant 0.5 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e37 = tensor.empty() : tensor<2x2x3xf32>
    %g38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kc, %l0c : tensor<2x2x3xf32>, tensor<2x2xf32>) outs(%e37 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      linalg.yield %m0 : f32
    } -> tensor<2x2x3xf32>
    %e39 = tensor.empty() : tensor<2x3x2xf32>
    %z40 = arith.constant 0.0 : f32
    %f41 = linalg.fill ins(%z40 : f32) outs(%e39 : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %g42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%g24, %g38 : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%f41 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %sc = arith.constant 0.5 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x3x2xf32>
    %e43 = tensor.empty() : tensor<2x2x3xf32>
    %g44 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g36, %s0 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e43 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x3xf32>
    %e45 = tensor.empty() : tensor<2x3x2xf32>
    %g46 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g30, %s1 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%e45 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x2xf32>
    %e47 = tensor.empty() : tensor<2x3x2xf32>
    %g48 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g42, %s2 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%e47 : tensor<2x3x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x2xf32>
    %e49 = tensor.empty() : tensor<2x2x2xf32>
    %z50 = arith.constant 0.0 : f32
    %f51 = linalg.fill ins(%z50 : f32) outs(%e49 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s0, %qc : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f51 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e53 = tensor.empty() : tensor<2x2x2xf32>
    %z54 = arith.constant 0.0 : f32
    %f55 = linalg.fill ins(%z54 : f32) outs(%e53 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s2, %qc : tensor<2x3x2xf32>, tensor<2x2x3xf32>) outs(%f55 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e57 = tensor.empty() : tensor<2x2x2xf32>
    %g58 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g52 : tensor<2x2x2xf32>) outs(%e57 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x2x2xf32>
    %e59 = tensor.empty() : tensor<2x2x2xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g52, %g58 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e59 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e61 = tensor.empty() : tensor<2x2x2xf32>
    %g62 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g60, %g56 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e61 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.mulf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x2xf32>
    %e63 = tensor.empty() : tensor<2x2x3xf32>
    %z64 = arith.constant 0.0 : f32
    %f65 = linalg.fill ins(%z64 : f32) outs(%e63 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g66 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%s1, %g62 : tensor<2x3x2xf32>, tensor<2x2x2xf32>) outs(%f65 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a1, %a0 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    ttt.chunk_yield outputs(%g66 : tensor<2x2x3xf32>) state(%g44, %g46, %g48 : tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>)
  } -> outputs(tensor<2x4x3xf32>) state(tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>)
  return %o : tensor<2x4x3xf32>
}
