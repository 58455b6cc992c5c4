// ttt-simplify: exact folds by default (the variants are in
// simplify-variants.mlir).
// RUN: ttt-opt %s --ttt-simplify --split-input-file | FileCheck %s --check-prefix=EXACT

// The default pipeline keeps the model: only the exact folds apply (ascent
// becomes descent with the step negated, the unused final weights go).
// EXACT-LABEL: func.func @lact
// EXACT: %[[O:.+]] = ttt.kvb_layer
// EXACT-SAME: lr(%{{.+}} : tensor<1x2x16x3xf32>) momentum(%{{.+}} : tensor<1x2x16xf32>)
// EXACT-SAME: model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
// EXACT-SAME: update = #ttt.update<lr_scale = -1.000000e+00, orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [3.444500e+00, -4.775000e+00, 2.031500e+00]>, weight_norm = output_channels>
// EXACT-SAME: -> tensor<1x2x16x8xf32>{{$}}
// EXACT: return %[[O]]
func.func @lact(%q: tensor<1x2x16x8xf32>, %w0: tensor<2x8x8xf32>, %w1: tensor<2x8x8xf32>,
    %w2: tensor<2x8x8xf32>, %lr: tensor<1x2x16x3xf32>, %m: tensor<1x2x16xf32>) -> tensor<1x2x16x8xf32> {
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

// A splat learning rate folds into lr_scale, an all-zero momentum goes, and
// a static sequence inside one update-then-apply chunk is a full-batch step.
// EXACT-LABEL: func.func @constant_operands
// EXACT: ttt.kvb_layer
// EXACT-NOT: lr(
// EXACT-NOT: momentum(
// EXACT-SAME: update = #ttt.update<lr_scale = 2.500000e-01>
// EXACT-SAME: schedule = #ttt.schedule<kind = full_batch>
func.func @constant_operands(%q: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  %lr = arith.constant dense<0.25> : tensor<1x2x16x1xf32>
  %m = arith.constant dense<0.0> : tensor<1x2x16xf32>
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) lr(%lr : tensor<1x2x16x1xf32>) momentum(%m : tensor<1x2x16xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 16, order = update_then_apply> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
