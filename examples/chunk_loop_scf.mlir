// A linear fast weight written as an scf.for over chunks of a run-time
// length (linalg_programs.py's `named` loop spelling): batch_matmul on chunks
// reshaped to [B*H, C, D], a partial last chunk cut by affine.min. Read by
// ttt-form-chunk-loops and ttt-raise-chunk-loops (docs/Architecture.md).
func.func @layer(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cC = arith.constant 4 : index
  %cT = tensor.dim %q, %c2 : tensor<1x2x?x4xf32>
  %buf0 = tensor.empty(%cT) : tensor<1x2x?x4xf32>
  %r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = %w0, %buf = %buf0) -> (tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>) {
  %n = affine.min affine_map<(d0)[s0] -> (4, s0 - d0)>(%i)[%cT]
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x?x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x?x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x?x4xf32>
  %c4 = tensor.collapse_shape %q1 [[0, 1], [2], [3]] : tensor<1x2x?x4xf32> into tensor<2x?x4xf32>
  %c5 = tensor.collapse_shape %w [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e6 = tensor.empty(%n) : tensor<2x?x4xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %p8 = linalg.batch_matmul ins(%c4, %c5 : tensor<2x?x4xf32>, tensor<2x4x4xf32>) outs(%z7 : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %x9 = tensor.expand_shape %p8 [[0, 1], [2], [3]] output_shape [1, 2, %n, 4] : tensor<2x?x4xf32> into tensor<1x2x?x4xf32>
  %c10 = tensor.collapse_shape %k2 [[0, 1], [2], [3]] : tensor<1x2x?x4xf32> into tensor<2x?x4xf32>
  %e11 = tensor.empty(%n) : tensor<2x4x?xf32>
  %t12 = linalg.transpose ins(%c10 : tensor<2x?x4xf32>) outs(%e11 : tensor<2x4x?xf32>) permutation = [0, 2, 1]
  %c13 = tensor.collapse_shape %v3 [[0, 1], [2], [3]] : tensor<1x2x?x4xf32> into tensor<2x?x4xf32>
  %e14 = tensor.empty() : tensor<2x4x4xf32>
  %z15 = linalg.fill ins(%zero : f32) outs(%e14 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p16 = linalg.batch_matmul ins(%t12, %c13 : tensor<2x4x?xf32>, tensor<2x?x4xf32>) outs(%z15 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x17 = tensor.expand_shape %p16 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %e18 = tensor.empty() : tensor<1x2x4x4xf32>
  %v19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %x17 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e18 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %x9 into %buf[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x?x4xf32>
  scf.yield %v19, %next : tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>
  }
  return %r#1 : tensor<1x2x?x4xf32>
}
