// A LaCT-style TTT layer (the paper's Variant 3: one linear fast weight W,
// per-token learning rates, per-chunk momentum, Muon with LaCT's coefficient
// table, apply-then-update over chunks of 16 tokens) inside an ONNX graph, the
// form `ttt-opt model.onnx --ttt-raise-onnx` gives a model whose layer it
// found. q, k, v, lr and momentum are graph inputs with dynamic batch and
// sequence dimensions; the learned initial fast weight is an initializer.
//
//   build/bin/ttt-opt examples/layer_in_graph.mlir --ttt-to-linattn \
//       --linattn-to-onnx -o /tmp/layer.onnx
//
// writes the layer's chunk-parallel form as a standard opset-17 ONNX model
// (docs/Theory.md §3, §6) that any ONNX runtime can run.
onnx.graph @main(%q: tensor<?x2x?x8xf32> {onnx.name = "q"},
                 %k: tensor<?x2x?x8xf32> {onnx.name = "k"},
                 %v: tensor<?x2x?x8xf32> {onnx.name = "v"},
                 %lr: tensor<?x2x?x1xf32> {onnx.name = "lr"},
                 %momentum: tensor<?x2x?xf32> {onnx.name = "momentum"})
    -> (tensor<?x2x?x8xf32> {onnx.name = "o"}) {
  %w = onnx.initializer "w" dense<[
     [[0.012, 0.481, 0.433, -0.180, -0.105, -0.186, 0.201, -0.020],
      [0.264, -0.653, 0.554, -0.034, 0.241, -0.048, -0.134, 0.164],
      [0.292, -0.072, -0.054, 0.242, -0.308, -0.535, 0.140, -0.237],
      [-0.679, -0.288, -0.165, -0.422, -0.528, 0.013, 0.317, -0.082],
      [-0.263, 0.136, 0.254, -0.106, 0.193, 0.369, -0.073, -0.288],
      [0.123, 0.088, 0.388, -0.454, -0.234, -0.296, -0.613, 0.045],
      [0.187, -0.261, 0.490, 0.291, 0.222, 0.142, 0.338, -0.471],
      [0.217, 0.213, -0.625, 0.123, -0.089, 0.276, -0.155, -0.006]],
     [[0.121, -0.310, 0.212, -0.037, 0.174, -0.184, 0.384, 0.214],
      [-0.063, 0.223, 0.445, 0.633, -0.556, 0.312, 0.164, -0.033],
      [-0.356, 0.444, -0.446, 0.200, 0.460, -0.566, -0.107, -0.463],
      [0.086, 0.535, 0.715, -0.629, -0.203, 0.249, 0.558, 0.149],
      [-0.264, 0.105, -0.006, -0.072, -0.260, 0.137, 0.109, -0.033],
      [-0.078, -0.454, -0.172, 0.427, -0.067, -0.509, 0.472, 0.187],
      [0.745, 0.022, -0.163, -0.512, 0.468, 0.908, -0.290, -0.229],
      [0.211, -0.294, -0.096, -0.124, 0.068, 0.387, 0.008, 0.325]]]> : tensor<2x8x8xf32>
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      lr(%lr : tensor<?x2x?x1xf32>) momentum(%momentum : tensor<?x2x?xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5,
                 coeffs = [4.0848, -6.8946, 2.927, 3.9505, -6.3029, 2.6377,
                           3.7418, -5.5913, 2.3037, 2.8769, -3.1427, 1.2046,
                           2.8366, -3.0525, 1.2012]>>
      schedule = #ttt.schedule<kind = chunked, size = 16,
                               order = apply_then_update>
      -> tensor<?x2x?x8xf32>
  onnx.yield %o : tensor<?x2x?x8xf32>
}
