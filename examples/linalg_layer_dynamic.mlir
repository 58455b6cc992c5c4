// A TTT layer over a sequence whose length is known only at run time, written
// in upstream MLIR dialects: an scf.for over the chunks to tensor.dim of the
// queries, each chunk min(4, T - i) tokens long (an affine.min, so that any
// length runs), carrying W and the output buffer (a tensor.empty of the
// queries' length). Each chunk's output is o_c = q_c W, W's step the MSE one,
// W <- W - 0.5/4 k_c^T (k_c W - v_c). `ttt-opt
// examples/linalg_layer_dynamic.mlir --ttt-raise-linalg` raises it to one
// ttt.kvb_layer of dynamic length; `--pass-pipeline='builtin.module(
// ttt-optimize-linalg)'` rewrites it into its chunk-parallel form in linalg,
// tensor and scf (written by test/python/linalg_programs.py).
func.func @layer(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %inv_c = arith.constant 0.25 : f32
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
  %e4 = tensor.empty(%n) : tensor<1x2x?x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x?x4xf32>, tensor<1x2x4x4xf32>) outs(%z5 : tensor<1x2x?x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x4xf32>
  %e7 = tensor.empty(%n) : tensor<1x2x?x4xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %w : tensor<1x2x?x4xf32>, tensor<1x2x4x4xf32>) outs(%z8 : tensor<1x2x?x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x4xf32>
  %e10 = tensor.empty(%n) : tensor<1x2x?x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v9, %v3 : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) outs(%e10 : tensor<1x2x?x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %r = arith.subf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x?x4xf32>
  %e12 = tensor.empty() : tensor<1x2x4x4xf32>
  %z13 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v14 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v11 : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) outs(%z13 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e15 = tensor.empty() : tensor<1x2x4x4xf32>
  %v16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v14 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e15 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m1 = arith.mulf %a1, %lr : f32
    %m3 = arith.mulf %m1, %inv_c : f32
    %r = arith.subf %a0, %m3 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x?x4xf32>
  scf.yield %v16, %next : tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>
  }
  return %r#1 : tensor<1x2x?x4xf32>
}

