// The smallest TTT layer: a linear fast weight W per head (4 heads of width
// 16), trained by plain gradient descent on the dot-product loss in chunks of
// 16 tokens, apply-then-update - which is exactly block-causal linear
// attention (the paper's Variant 6; docs/Theory.md §3). Batch and sequence
// length are dynamic.
//
//   build/bin/ttt-run examples/linear_dot_layer.mlir --random-inputs=1 \
//       --shapes="2x4x100x16,2x4x100x16,2x4x100x16,*"
func.func @linear_dot(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>,
                      %v: tensor<?x4x?x16xf32>, %w: tensor<4x16x16xf32>)
    -> tensor<?x4x?x16xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
      weights(%w : tensor<4x16x16xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot, reduction = mean>
      update = #ttt.update<lr_scale = 0.5>
      schedule = #ttt.schedule<kind = chunked, size = 16,
                               order = apply_then_update>
      -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
