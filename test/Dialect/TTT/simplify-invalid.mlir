// ttt-simplify refuses a variant it cannot apply before it changes anything:
// the error is the only diagnostic (no "model changed" remark) and the layer
// is left as it was.
// RUN: ttt-opt %s --ttt-simplify="collapse-mlp" --split-input-file -verify-diagnostics

// The old final weights of a collapsed network have no new counterpart.
func.func @collapse_reads_final_weights(%q: tensor<1x2x16x8xf32>, %w0: tensor<2x8x8xf32>,
    %w1: tensor<2x8x8xf32>, %w2: tensor<2x8x8xf32>, %lr: tensor<1x2x16x3xf32>)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{ttt-simplify: collapse-mlp changes the weights, so their final values cannot replace the old ones}}
  %o, %f:3 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w0, %w1, %w2 : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
      lr(%lr : tensor<1x2x16x3xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
  return %o, %f#1 : tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// The output weight must map the input width to the output width.
func.func @collapse_needs_square_output(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x4xf32>,
    %w0: tensor<2x8x6xf32>, %w1: tensor<2x6x4xf32>) -> tensor<1x2x16x4xf32> {
  // expected-error @+1 {{ttt-simplify: collapse-mlp needs the output weight to map the input width (8) to the output width, but it has 6 rows}}
  %o = ttt.kvb_layer %q, %q, %v : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x4xf32>
      weights(%w0, %w1 : tensor<2x8x6xf32>, tensor<2x6x4xf32>)
      model = #ttt.model<kind = mlp, trained = [0, 1]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<1x2x16x4xf32>
  return %o : tensor<1x2x16x4xf32>
}
