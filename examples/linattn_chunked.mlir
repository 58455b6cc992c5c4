// The chunk-parallel linear-attention form of a LaCT-style layer with a static
// SwiGLU kernel (the paper's Variant 2), written as linattn ops: what
// `ttt-opt examples/lact_v2_small.mlir --ttt-to-linattn` produces, with the
// learning-rate column of W1 passed in directly. 2 heads of width 32, chunks
// of 64 tokens; batch and sequence length are dynamic (docs/Theory.md §3, §6).
//
//   build/bin/ttt-opt examples/linattn_chunked.mlir --linattn-to-linalg
func.func @lact_v2_linattn(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>,
                           %v: tensor<?x2x?x32xf32>, %w0: tensor<2x32x32xf32>,
                           %w1: tensor<2x32x32xf32>, %w2: tensor<2x32x32xf32>,
                           %eta: tensor<?x2x?xf32>, %m: tensor<?x2x?xf32>)
    -> tensor<?x2x?x32xf32> {
  // q^ = phi(q), k^ = phi(k) with the frozen gate and up matrices.
  %qf = linattn.feature_map %q weights(%w0, %w2 : tensor<2x32x32xf32>, tensor<2x32x32xf32>)
      kind = swiglu : tensor<?x2x?x32xf32> -> tensor<?x2x?x32xf32>
  %kf = linattn.feature_map %k weights(%w0, %w2 : tensor<2x32x32xf32>, tensor<2x32x32xf32>)
      kind = swiglu : tensor<?x2x?x32xf32> -> tensor<?x2x?x32xf32>
  // G_c = 0.05 * sum over chunk c of eta_t k^_t^T v_t (0.05: the loss scale).
  %g = linattn.chunk_reduce %kf, %v scale(%eta : tensor<?x2x?xf32>) chunk_size = 64
      factor = 5.000000e-02
      : tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x2x?x32x32xf32>
  // Momentum: U_c = mu_c U_{c-1} + G_c, mu_c the chunk mean of m.
  %mu = linattn.chunk_mean %m chunk_size = 64 : tensor<?x2x?xf32> -> tensor<?x2x?xf32>
  %u = linattn.scan %g decay(%mu : tensor<?x2x?xf32>) kind = decayed mode = inclusive
      : tensor<?x2x?x32x32xf32> -> tensor<?x2x?x32x32xf32>
  // Muon on every chunk update at once, with LaCT's 5-step coefficient table.
  %d = linattn.state_transform %u steps = 5
      coeffs = [4.0848, -6.8946, 2.927, 3.9505, -6.3029, 2.6377, 3.7418, -5.5913,
                2.3037, 2.8769, -3.1427, 1.2046, 2.8366, -3.0525, 1.2012]
      : tensor<?x2x?x32x32xf32> -> tensor<?x2x?x32x32xf32>
  // S_c = W1 + sum_{j<c} D_j: apply-then-update reads the exclusive prefix sum.
  %s = linattn.scan %d initial(%w1 : tensor<2x32x32xf32>) kind = additive mode = exclusive
      : tensor<?x2x?x32x32xf32> -> tensor<?x2x?x32x32xf32>
  // O_c = Q^_c S_c.
  %o = linattn.chunk_apply %qf, %s chunk_size = 64
      : tensor<?x2x?x32xf32>, tensor<?x2x?x32x32xf32> -> tensor<?x2x?x32xf32>
  return %o : tensor<?x2x?x32xf32>
}
