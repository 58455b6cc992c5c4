// Input of ttt-to-gpu*.mlir: the paper's Variant 2 of a LaCT-LLM-shaped layer
// (static SwiGLU feature map, momentum, Muon; 2 heads of dim 8, chunk 8),
// rewritten to linear attention. Made with the project's tools:
//   kvb_layer_function(LACT) of test/python/ttt_mlir.py (as in test_rewrite.py)
//   | ttt-opt --ttt-simplify="freeze-inner drop-weight-norm" --ttt-to-linattn
module {
  func.func @layer(%arg0: tensor<?x2x?x8xf32>, %arg1: tensor<?x2x?x8xf32>, %arg2: tensor<?x2x?x8xf32>, %arg3: tensor<2x8x8xf32>, %arg4: tensor<2x8x8xf32>, %arg5: tensor<2x8x8xf32>, %arg6: tensor<?x2x?x3xf32>, %arg7: tensor<?x2x?xf32>) -> tensor<?x2x?x8xf32> {
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %0 = linattn.feature_map %arg0 weights(%arg3, %arg5 : tensor<2x8x8xf32>, tensor<2x8x8xf32>) kind = swiglu : tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
    %1 = linattn.feature_map %arg1 weights(%arg3, %arg5 : tensor<2x8x8xf32>, tensor<2x8x8xf32>) kind = swiglu : tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
    %dim = tensor.dim %arg6, %c0 : tensor<?x2x?x3xf32>
    %dim_0 = tensor.dim %arg6, %c2 : tensor<?x2x?x3xf32>
    %extracted_slice = tensor.extract_slice %arg6[0, 0, 0, 1] [%dim, 2, %dim_0, 1] [1, 1, 1, 1] : tensor<?x2x?x3xf32> to tensor<?x2x?xf32>
    %2 = linattn.chunk_reduce %1, %arg2 scale(%extracted_slice : tensor<?x2x?xf32>) chunk_size = 8 : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8x8xf32>
    %3 = linattn.chunk_mean %arg7 chunk_size = 8 : tensor<?x2x?xf32> -> tensor<?x2x?xf32>
    %4 = linattn.scan %2 decay(%3 : tensor<?x2x?xf32>) kind = decayed mode = inclusive : tensor<?x2x?x8x8xf32> -> tensor<?x2x?x8x8xf32>
    %5 = linattn.state_transform %4 steps = 5 coeffs = [4.084800e+00, -6.894600e+00, 2.927000e+00, 3.950500e+00, -6.302900e+00, 2.637700e+00, 3.741800e+00, -5.591300e+00, 2.303700e+00, 2.876900e+00, -3.142700e+00, 1.204600e+00, 2.836600e+00, -3.052500e+00, 1.201200e+00] : tensor<?x2x?x8x8xf32> -> tensor<?x2x?x8x8xf32>
    %6 = linattn.scan %5 initial(%arg4 : tensor<2x8x8xf32>) kind = additive mode = exclusive : tensor<?x2x?x8x8xf32> -> tensor<?x2x?x8x8xf32>
    %7 = linattn.chunk_apply %0, %6 chunk_size = 8 : tensor<?x2x?x8xf32>, tensor<?x2x?x8x8xf32> -> tensor<?x2x?x8xf32>
    return %7 : tensor<?x2x?x8xf32>
  }
}

