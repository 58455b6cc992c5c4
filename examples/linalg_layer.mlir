// A TTT layer written in upstream MLIR dialects, as torch-mlir's
// linalg-on-tensors pipeline writes a Python loop over chunks: unrolled, each
// chunk's output o_c = q_c W and update W <- W + 0.5 k_c^T v_c are
// linalg.generic contractions on tensor.extract_slice chunks (B=1, H=2, T=8,
// chunks of 4, W a [1, 2, 4, 4] argument), the outputs inserted into a
// tensor.empty. `ttt-opt examples/linalg_layer.mlir --ttt-raise-linalg`
// raises it to one ttt.kvb_layer; `--pass-pipeline='builtin.module(
// ttt-optimize-linalg)'` rewrites it into its chunk-parallel form in linalg,
// tensor and scf (written by test/python/linalg_programs.py).
func.func @layer(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %q1 = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %e5 = tensor.empty() : tensor<1x2x4x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w0 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z4 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e8 = tensor.empty() : tensor<1x2x4x4xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v3 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z7 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e10 = tensor.empty() : tensor<1x2x4x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w0, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %q12 = tensor.extract_slice %q[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k13 = tensor.extract_slice %k[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v14 = tensor.extract_slice %v[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %e16 = tensor.empty() : tensor<1x2x4x4xf32>
  %z15 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v17 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q12, %v11 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z15 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %buf18 = tensor.empty() : tensor<1x2x8x4xf32>
  %buf19 = tensor.insert_slice %v6 into %buf18[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x8x4xf32>
  %buf20 = tensor.insert_slice %v17 into %buf19[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x8x4xf32>
  return %buf20 : tensor<1x2x8x4xf32>
}
