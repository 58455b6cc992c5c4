// A small LaCT-style layer with the paper's Variant 2 already applied (only
// the output matrix W1 trains, no weight norm): 2 fast-weight heads of width
// 32, chunks of 64 tokens, per-token learning rates, momentum and Muon.
// `make demo` rewrites it into linear attention and runs both forms.
func.func @lact_v2(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                   %v: tensor<?x2x?x32xf32>, %w0: tensor<2x32x32xf32>,
                   %w1: tensor<2x32x32xf32>, %w2: tensor<2x32x32xf32>,
                   %lr: tensor<?x2x?x3xf32>, %m: tensor<?x2x?xf32>)
    -> tensor<?x2x?x32xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>
      weights(%w0, %w1, %w2 : tensor<2x32x32xf32>, tensor<2x32x32xf32>,
                              tensor<2x32x32xf32>)
      lr(%lr : tensor<?x2x?x3xf32>) momentum(%m : tensor<?x2x?xf32>)
      model = #ttt.model<kind = swiglu, trained = [1]>
      loss = #ttt.loss<kind = dot, scale = 0.05>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5,
                 coeffs = [4.0848, -6.8946, 2.927, 3.9505, -6.3029, 2.6377,
                           3.7418, -5.5913, 2.3037, 2.8769, -3.1427, 1.2046,
                           2.8366, -3.0525, 1.2012]>>
      schedule = #ttt.schedule<kind = chunked, size = 64,
                               order = apply_then_update>
      -> tensor<?x2x?x32xf32>
  return %o : tensor<?x2x?x32xf32>
}
