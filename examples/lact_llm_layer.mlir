// The TTT branch of a LaCT-LLM layer (760M config: 4 fast-weight heads of
// width 384, chunk 2048): SwiGLU fast weights, all three matrices trained,
// per-token learning rates (one per matrix), per-chunk momentum, Muon with the
// 5-step coefficient table and row weight normalization, apply-then-update.
// Batch and sequence length are dynamic.
func.func @lact_llm_ttt(%q: tensor<?x4x?x384xf32>, %k: tensor<?x4x?x384xf32>,
                        %v: tensor<?x4x?x384xf32>, %lr: tensor<?x4x?x3xf32>,
                        %m: tensor<?x4x?xf32>, %w0: tensor<4x384x384xf32>,
                        %w1: tensor<4x384x384xf32>, %w2: tensor<4x384x384xf32>)
    -> tensor<?x4x?x384xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<?x4x?x384xf32>, tensor<?x4x?x384xf32>, tensor<?x4x?x384xf32>
      weights(%w0, %w1, %w2 : tensor<4x384x384xf32>, tensor<4x384x384xf32>,
                              tensor<4x384x384xf32>)
      lr(%lr : tensor<?x4x?x3xf32>) momentum(%m : tensor<?x4x?xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5,
                 coeffs = [4.0848, -6.8946, 2.927, 3.9505, -6.3029, 2.6377,
                           3.7418, -5.5913, 2.3037, 2.8769, -3.1427, 1.2046,
                           2.8366, -3.0525, 1.2012]>,
               weight_norm = output_channels>
      schedule = #ttt.schedule<kind = chunked, size = 2048,
                               order = apply_then_update>
      -> tensor<?x4x?x384xf32>
  return %o : tensor<?x4x?x384xf32>
}
