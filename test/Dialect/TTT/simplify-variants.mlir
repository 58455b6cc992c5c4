// ttt-simplify: the paper's model-changing variants, each on request and
// each announced by a remark.
// RUN: ttt-opt %s --ttt-simplify="freeze-inner drop-weight-norm collapse-mlp drop-token-lr drop-momentum drop-muon" --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=VARIANTS

// Every variant at once turns LaCT into plain linear attention (V6).
// VARIANTS-LABEL: func.func @lact
// VARIANTS: ttt.kvb_layer
// VARIANTS-NOT: lr(
// VARIANTS-NOT: momentum(
// VARIANTS-SAME: weights(%{{.+}} : tensor<2x8x8xf32>)
// VARIANTS-SAME: model = #ttt.model<kind = linear, trained = [0]>
// VARIANTS-SAME: update = #ttt.update<lr_scale = -1.000000e+00>
func.func @lact(%q: tensor<1x2x16x8xf32>, %w0: tensor<2x8x8xf32>, %w1: tensor<2x8x8xf32>,
    %w2: tensor<2x8x8xf32>, %lr: tensor<1x2x16x3xf32>, %m: tensor<1x2x16xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+6 {{ttt-simplify: model changed: only the output layer trains (the paper's Variant 1); the layer computes a different function and must be retrained}}
  // expected-remark @+5 {{model changed: weight normalization removed (the paper's Variant 2)}}
  // expected-remark @+4 {{model changed: the fast-weight network is one linear layer initialised with the old output layer (the paper's Variant 3)}}
  // expected-remark @+3 {{model changed: per-token learning rates removed (the paper's Variant 4)}}
  // expected-remark @+2 {{model changed: momentum removed (the paper's Variant 5)}}
  // expected-remark @+1 {{model changed: Newton-Schulz orthogonalization (Muon) removed (the paper's Variant 6)}}
  %o, %f:3 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w0, %w1, %w2 : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
      lr(%lr : tensor<1x2x16x3xf32>) momentum(%m : tensor<1x2x16xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot>
      update = #ttt.update<sign = ascent, orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [3.4445, -4.775, 2.0315]>,
                           weight_norm = output_channels>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// Variants only remark on what they actually change.
func.func @constant_operands(%q: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  %lr = arith.constant dense<0.25> : tensor<1x2x16x1xf32>
  %m = arith.constant dense<0.0> : tensor<1x2x16xf32>
  // expected-remark @+2 {{(the paper's Variant 4)}}
  // expected-remark @+1 {{(the paper's Variant 5)}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) lr(%lr : tensor<1x2x16x1xf32>) momentum(%m : tensor<1x2x16xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 16, order = update_then_apply> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
