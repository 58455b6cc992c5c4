// ttt between two stages of another compiler: stock mlir-opt loads the
// plug-in and runs ttt-optimize-linalg on a linalg-on-tensors function (a TTT
// layer's chunk loop, unrolled, as torch-mlir writes one). The layer is
// raised, rewritten into its chunk-parallel linear-attention form and lowered
// back to upstream dialects only: no ttt or linattn op is left.
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so %s \
// RUN:   --pass-pipeline='builtin.module(ttt-optimize-linalg)' 2>&1 | FileCheck %s

// CHECK: remark: TTT layer: unrolled chunk loop (2 chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<1x2x4x4xf32>)
// CHECK-NOT: ttt.
// CHECK-NOT: linattn.
// CHECK: tensor.expand_shape %[[K]]
// CHECK: linalg.generic
// CHECK-NOT: ttt.
// CHECK-NOT: linattn.
// CHECK: return
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
