// Input of ttt-to-gpu*.mlir: a LaCT-LLM-shaped ttt.kvb_layer (SwiGLU, all
// weights trained, momentum, Muon, weight norm; 2 heads of dim 8, chunk 8),
// which ttt-to-linattn leaves alone, so ttt-to-gpu runs its recurrent
// reference. Made with kvb_layer_function(LACT) of test/python/ttt_mlir.py.
func.func @layer(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %w0: tensor<2x8x8xf32>, %w1: tensor<2x8x8xf32>, %w2: tensor<2x8x8xf32>, %lr: tensor<?x2x?x3xf32>, %momentum: tensor<?x2x?xf32>) -> (tensor<?x2x?x8xf32>) {
  %r = ttt.kvb_layer %q, %k, %v : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      weights(%w0, %w1, %w2 : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) lr(%lr : tensor<?x2x?x3xf32>) momentum(%momentum : tensor<?x2x?xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
      loss = #ttt.loss<kind = dot, scale = 1.0, reduction = sum>
      update = #ttt.update<sign = descent, lr_scale = 1.0, clip = none, orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [4.0848, -6.8946, 2.927, 3.9505, -6.3029, 2.6377, 3.7418, -5.5913, 2.3037, 2.8769, -3.1427, 1.2046, 2.8366, -3.0525, 1.2012], eps = 1.0e-07>, weight_norm = output_channels, weight_norm_eps = 1.0e-05>
      schedule = #ttt.schedule<kind = chunked, size = 8, order = apply_then_update, inner_steps = 1>
      -> tensor<?x2x?x8xf32>
  return %r : tensor<?x2x?x8xf32>
}

