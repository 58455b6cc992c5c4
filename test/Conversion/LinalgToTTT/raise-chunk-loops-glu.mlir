// ViT^3's GLU fast weights, `(x Wa) * silu(x Wg)`, read off a ttt.chunk_loop:
// the model from the output (the sigmoid the one leaf that is no sum of
// products), each weight's gradient proved to be the dot loss's for that
// model inside the clipping `G / (|G| + 1)` per output column, which the
// update subtracts. test_corpus.py runs the raised ViT^3 exports against
// PyTorch.
// RUN: ttt-opt %s --ttt-raise-chunk-loops=explain --split-input-file -verify-diagnostics | FileCheck %s

// One step over all tokens, heads first, weights input x output; the
// values scaled by -1/2 before the gradient (ViT^3's `e = -v / N * scale`):
// descent on the dot loss with scale 1/2.
// CHECK-LABEL: func.func @vit3_glu
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<2x8x4xf32>, %[[V:.*]]: tensor<2x8x4xf32>, %[[WA:.*]]: tensor<2x4x4xf32>, %[[WG:.*]]: tensor<2x4x4xf32>)
// CHECK-NOT: ttt.chunk_loop
// CHECK: %[[O:.*]] = ttt.kvb_layer
// CHECK-SAME: model = #ttt.model<kind = glu, trained = [0, 1]> loss = #ttt.loss<kind = dot, scale = 5.000000e-01>
// CHECK-SAME: update = #ttt.update<clip = output_channels>
// CHECK-SAME: schedule = #ttt.schedule<kind = full_batch>
// CHECK: return
func.func @vit3_glu(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>, %wa: tensor<2x4x4xf32>, %wg: tensor<2x4x4xf32>) -> tensor<2x8x4xf32> {
  // expected-remark @below {{a GLU fast-weight network (dot loss, gradients clipped per output column, one chunk)}}
  %o, %f:2 = ttt.chunk_loop chunk(0) state(%wa, %wg : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
      windows(%q, %k, %v : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) along [1, 1, 1]
      outputs along [1] {
  ^bb0(%sa: tensor<2x4x4xf32>, %sg: tensor<2x4x4xf32>, %qc: tensor<2x8x4xf32>, %kc: tensor<2x8x4xf32>, %vc: tensor<2x8x4xf32>):
    %e0 = tensor.empty() : tensor<2x8x4xf32>
    %z1 = arith.constant 0.0 : f32
    %f2 = linalg.fill ins(%z1 : f32) outs(%e0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g3 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %sa : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f2 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e4 = tensor.empty() : tensor<2x8x4xf32>
    %z5 = arith.constant 0.0 : f32
    %f6 = linalg.fill ins(%z5 : f32) outs(%e4 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g7 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %sg : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f6 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e8 = tensor.empty() : tensor<2x8x4xf32>
    %g9 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g7 : tensor<2x8x4xf32>) outs(%e8 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x8x4xf32>
    %e10 = tensor.empty() : tensor<2x8x4xf32>
    %g11 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g7, %g9 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e10 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e12 = tensor.empty() : tensor<2x8x4xf32>
    %g13 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%vc : tensor<2x8x4xf32>) outs(%e12 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %c = arith.constant -0.5 : f32
      %r = arith.mulf %a0, %c : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e14 = tensor.empty() : tensor<2x8x4xf32>
    %g15 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g13, %g11 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e14 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e16 = tensor.empty() : tensor<2x4x4xf32>
    %z17 = arith.constant 0.0 : f32
    %f18 = linalg.fill ins(%z17 : f32) outs(%e16 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %g19 = linalg.generic {indexing_maps = [affine_map<(h, i, j, t) -> (h, t, i)>, affine_map<(h, i, j, t) -> (h, t, j)>, affine_map<(h, i, j, t) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %g15 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f18 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e20 = tensor.empty() : tensor<2x8x4xf32>
    %g21 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g13, %g3 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e20 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e22 = tensor.empty() : tensor<2x8x4xf32>
    %g23 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g9, %g7 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e22 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %one = arith.constant 1.0 : f32
      %u = arith.subf %one, %a0 : f32
      %w = arith.mulf %a1, %u : f32
      %p = arith.addf %w, %one : f32
      %r = arith.mulf %a0, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e24 = tensor.empty() : tensor<2x8x4xf32>
    %g25 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g21, %g23 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e24 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e26 = tensor.empty() : tensor<2x4x4xf32>
    %z27 = arith.constant 0.0 : f32
    %f28 = linalg.fill ins(%z27 : f32) outs(%e26 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %g29 = linalg.generic {indexing_maps = [affine_map<(h, i, j, t) -> (h, t, i)>, affine_map<(h, i, j, t) -> (h, t, j)>, affine_map<(h, i, j, t) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %g25 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f28 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e30 = tensor.empty() : tensor<2x4xf32>
    %z31 = arith.constant 0.0 : f32
    %f32 = linalg.fill ins(%z31 : f32) outs(%e30 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %g33 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g19 : tensor<2x4x4xf32>) outs(%f32 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %m = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e34 = tensor.empty() : tensor<2x4xf32>
    %g35 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g33 : tensor<2x4xf32>) outs(%e34 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e36 = tensor.empty() : tensor<2x4xf32>
    %g37 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g35 : tensor<2x4xf32>) outs(%e36 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e38 = tensor.empty() : tensor<2x4x4xf32>
    %g39 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g19, %g37 : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%e38 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e40 = tensor.empty() : tensor<2x4x4xf32>
    %g41 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sa, %g39 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e40 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e42 = tensor.empty() : tensor<2x4xf32>
    %z43 = arith.constant 0.0 : f32
    %f44 = linalg.fill ins(%z43 : f32) outs(%e42 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %g45 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g29 : tensor<2x4x4xf32>) outs(%f44 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %m = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e46 = tensor.empty() : tensor<2x4xf32>
    %g47 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g45 : tensor<2x4xf32>) outs(%e46 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e48 = tensor.empty() : tensor<2x4xf32>
    %g49 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g47 : tensor<2x4xf32>) outs(%e48 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e50 = tensor.empty() : tensor<2x4x4xf32>
    %g51 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g29, %g49 : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%e50 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e52 = tensor.empty() : tensor<2x4x4xf32>
    %g53 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sg, %g51 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e52 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e54 = tensor.empty() : tensor<2x8x4xf32>
    %z55 = arith.constant 0.0 : f32
    %f56 = linalg.fill ins(%z55 : f32) outs(%e54 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g57 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qc, %g41 : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f56 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e58 = tensor.empty() : tensor<2x8x4xf32>
    %z59 = arith.constant 0.0 : f32
    %f60 = linalg.fill ins(%z59 : f32) outs(%e58 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g61 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qc, %g53 : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f60 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e62 = tensor.empty() : tensor<2x8x4xf32>
    %g63 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g61 : tensor<2x8x4xf32>) outs(%e62 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x8x4xf32>
    %e64 = tensor.empty() : tensor<2x8x4xf32>
    %g65 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g61, %g63 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e64 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e66 = tensor.empty() : tensor<2x8x4xf32>
    %g67 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g57, %g65 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e66 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    ttt.chunk_yield outputs(%g67 : tensor<2x8x4xf32>) state(%g41, %g53 : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
  } -> outputs(tensor<2x8x4xf32>) state(tensor<2x4x4xf32>, tensor<2x4x4xf32>)
  return %o : tensor<2x8x4xf32>
}

// -----

// Divided by its column norms plus 1e-06: not the clipping the layer op
// knows (nor a weight norm: the norms are the gradient's).
// CHECK-LABEL: func.func @vit3_glu_other_clip
// CHECK: ttt.chunk_loop
func.func @vit3_glu_other_clip(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>, %wa: tensor<2x4x4xf32>, %wg: tensor<2x4x4xf32>) -> tensor<2x8x4xf32> {
  // expected-remark @below {{not a ttt.kvb_layer: a GLU fast-weight network ((x Wa) * silu(x Wg)): a TTT layer with a nonlinear inner model, no linear attention; no ttt.kvb_layer yet: its gradient is divided by its column norms plus 0.000001, not plus 1 (the clipping ttt.kvb_layer knows)}}
  %o, %f:2 = ttt.chunk_loop chunk(0) state(%wa, %wg : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
      windows(%q, %k, %v : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) along [1, 1, 1]
      outputs along [1] {
  ^bb0(%sa: tensor<2x4x4xf32>, %sg: tensor<2x4x4xf32>, %qc: tensor<2x8x4xf32>, %kc: tensor<2x8x4xf32>, %vc: tensor<2x8x4xf32>):
    %e0 = tensor.empty() : tensor<2x8x4xf32>
    %z1 = arith.constant 0.0 : f32
    %f2 = linalg.fill ins(%z1 : f32) outs(%e0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g3 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %sa : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f2 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e4 = tensor.empty() : tensor<2x8x4xf32>
    %z5 = arith.constant 0.0 : f32
    %f6 = linalg.fill ins(%z5 : f32) outs(%e4 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g7 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %sg : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f6 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e8 = tensor.empty() : tensor<2x8x4xf32>
    %g9 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g7 : tensor<2x8x4xf32>) outs(%e8 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x8x4xf32>
    %e10 = tensor.empty() : tensor<2x8x4xf32>
    %g11 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g7, %g9 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e10 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e12 = tensor.empty() : tensor<2x8x4xf32>
    %g13 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%vc : tensor<2x8x4xf32>) outs(%e12 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %c = arith.constant -0.5 : f32
      %r = arith.mulf %a0, %c : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e14 = tensor.empty() : tensor<2x8x4xf32>
    %g15 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g13, %g11 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e14 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e16 = tensor.empty() : tensor<2x4x4xf32>
    %z17 = arith.constant 0.0 : f32
    %f18 = linalg.fill ins(%z17 : f32) outs(%e16 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %g19 = linalg.generic {indexing_maps = [affine_map<(h, i, j, t) -> (h, t, i)>, affine_map<(h, i, j, t) -> (h, t, j)>, affine_map<(h, i, j, t) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %g15 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f18 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e20 = tensor.empty() : tensor<2x8x4xf32>
    %g21 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g13, %g3 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e20 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e22 = tensor.empty() : tensor<2x8x4xf32>
    %g23 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g9, %g7 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e22 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %one = arith.constant 1.0 : f32
      %u = arith.subf %one, %a0 : f32
      %w = arith.mulf %a1, %u : f32
      %p = arith.addf %w, %one : f32
      %r = arith.mulf %a0, %p : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e24 = tensor.empty() : tensor<2x8x4xf32>
    %g25 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g21, %g23 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e24 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e26 = tensor.empty() : tensor<2x4x4xf32>
    %z27 = arith.constant 0.0 : f32
    %f28 = linalg.fill ins(%z27 : f32) outs(%e26 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %g29 = linalg.generic {indexing_maps = [affine_map<(h, i, j, t) -> (h, t, i)>, affine_map<(h, i, j, t) -> (h, t, j)>, affine_map<(h, i, j, t) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kc, %g25 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f28 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e30 = tensor.empty() : tensor<2x4xf32>
    %z31 = arith.constant 0.0 : f32
    %f32 = linalg.fill ins(%z31 : f32) outs(%e30 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %g33 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g19 : tensor<2x4x4xf32>) outs(%f32 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %m = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e34 = tensor.empty() : tensor<2x4xf32>
    %g35 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g33 : tensor<2x4xf32>) outs(%e34 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e36 = tensor.empty() : tensor<2x4xf32>
    %g37 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g35 : tensor<2x4xf32>) outs(%e36 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0e-06 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e38 = tensor.empty() : tensor<2x4x4xf32>
    %g39 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g19, %g37 : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%e38 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e40 = tensor.empty() : tensor<2x4x4xf32>
    %g41 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sa, %g39 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e40 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e42 = tensor.empty() : tensor<2x4xf32>
    %z43 = arith.constant 0.0 : f32
    %f44 = linalg.fill ins(%z43 : f32) outs(%e42 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %g45 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g29 : tensor<2x4x4xf32>) outs(%f44 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %m = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e46 = tensor.empty() : tensor<2x4xf32>
    %g47 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g45 : tensor<2x4xf32>) outs(%e46 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e48 = tensor.empty() : tensor<2x4xf32>
    %g49 = linalg.generic {indexing_maps = [affine_map<(h, j) -> (h, j)>, affine_map<(h, j) -> (h, j)>], iterator_types = ["parallel", "parallel"]} ins(%g47 : tensor<2x4xf32>) outs(%e48 : tensor<2x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0e-06 : f32
      %r = arith.addf %a0, %eps : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e50 = tensor.empty() : tensor<2x4x4xf32>
    %g51 = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g29, %g49 : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%e50 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e52 = tensor.empty() : tensor<2x4x4xf32>
    %g53 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sg, %g51 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e52 : tensor<2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x4xf32>
    %e54 = tensor.empty() : tensor<2x8x4xf32>
    %z55 = arith.constant 0.0 : f32
    %f56 = linalg.fill ins(%z55 : f32) outs(%e54 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g57 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qc, %g41 : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f56 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e58 = tensor.empty() : tensor<2x8x4xf32>
    %z59 = arith.constant 0.0 : f32
    %f60 = linalg.fill ins(%z59 : f32) outs(%e58 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %g61 = linalg.generic {indexing_maps = [affine_map<(h, t, j, i) -> (h, t, i)>, affine_map<(h, t, j, i) -> (h, i, j)>, affine_map<(h, t, j, i) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qc, %g53 : tensor<2x8x4xf32>, tensor<2x4x4xf32>) outs(%f60 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %e62 = tensor.empty() : tensor<2x8x4xf32>
    %g63 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g61 : tensor<2x8x4xf32>) outs(%e62 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.negf %a0 : f32
      %x = math.exp %n : f32
      %one = arith.constant 1.0 : f32
      %d = arith.addf %x, %one : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<2x8x4xf32>
    %e64 = tensor.empty() : tensor<2x8x4xf32>
    %g65 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g61, %g63 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e64 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e66 = tensor.empty() : tensor<2x8x4xf32>
    %g67 = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g57, %g65 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e66 : tensor<2x8x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    ttt.chunk_yield outputs(%g67 : tensor<2x8x4xf32>) state(%g41, %g53 : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
  } -> outputs(tensor<2x8x4xf32>) state(tensor<2x4x4xf32>, tensor<2x4x4xf32>)
  return %o : tensor<2x8x4xf32>
}
