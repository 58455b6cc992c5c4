// RUN: ttt-opt %s --ttt-raise-linalg --split-input-file 2>/dev/null | FileCheck %s
// RUN: ttt-opt %s --ttt-raise-linalg --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A TTT layer written in linalg on tensors, its chunk loop unrolled: each
// chunk's output `q_c W` and update `W + 0.5 k_cᵀ v_c` are linalg.generic
// contractions on tensor.extract_slice chunks, the outputs are inserted into
// a tensor.empty. The ONNX raise reads it from the function's shadow graph;
// the layer op is written back on the function's own arguments.

// REMARK: remark: TTT layer: unrolled chunk loop (2 chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @generic_einsum(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<1x2x4x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[W0:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0, 1], [2], [3]]
// CHECK-NEXT: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} weights(%[[W0]] : tensor<2x4x4xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot> update = #ttt.update<lr_scale = 5.000000e-01> schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK-NEXT: return %[[O]]

func.func @generic_einsum(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> {
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

// -----

// The MSE layer as torch-mlir writes a 4-D matmul: chunks collapsed to
// [B*H, C, D], linalg.batch_matmul, expanded back; kᵀ by linalg.transpose;
// the outputs joined by tensor.concat. The normalization sees through the
// batch-merging reshapes (normalize-contractions.mlir).

// REMARK: remark: TTT layer: unrolled chunk loop (2 chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, affine scan over chunk states)
// CHECK-LABEL: func.func @named_batch_matmul(
// CHECK-NOT: arith.constant
// CHECK-NOT: linalg.batch_matmul
// CHECK: ttt.kvb_layer
// CHECK-SAME: loss = #ttt.loss<kind = mse> update = #ttt.update<lr_scale = 1.250000e-01>
// CHECK-NOT: tensor.concat

func.func @named_batch_matmul(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %inv_c = arith.constant 0.25 : f32
  %q1 = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %c4 = tensor.collapse_shape %q1 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %c5 = tensor.collapse_shape %w0 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e6 = tensor.empty() : tensor<2x4x4xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p8 = linalg.batch_matmul ins(%c4, %c5 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z7 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x9 = tensor.expand_shape %p8 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %c10 = tensor.collapse_shape %k2 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %c11 = tensor.collapse_shape %w0 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e12 = tensor.empty() : tensor<2x4x4xf32>
  %z13 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p14 = linalg.batch_matmul ins(%c10, %c11 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z13 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x15 = tensor.expand_shape %p14 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %e16 = tensor.empty() : tensor<1x2x4x4xf32>
  %v17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x15, %v3 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e16 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %r = arith.subf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %c18 = tensor.collapse_shape %k2 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e19 = tensor.empty() : tensor<2x4x4xf32>
  %t20 = linalg.transpose ins(%c18 : tensor<2x4x4xf32>) outs(%e19 : tensor<2x4x4xf32>) permutation = [0, 2, 1]
  %c21 = tensor.collapse_shape %v17 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e22 = tensor.empty() : tensor<2x4x4xf32>
  %z23 = linalg.fill ins(%zero : f32) outs(%e22 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p24 = linalg.batch_matmul ins(%t20, %c21 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z23 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x25 = tensor.expand_shape %p24 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %e26 = tensor.empty() : tensor<1x2x4x4xf32>
  %v27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w0, %x25 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e26 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m1 = arith.mulf %a1, %lr : f32
    %m3 = arith.mulf %m1, %inv_c : f32
    %r = arith.subf %a0, %m3 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %q28 = tensor.extract_slice %q[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k29 = tensor.extract_slice %k[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v30 = tensor.extract_slice %v[0, 0, 4, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %c31 = tensor.collapse_shape %q28 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %c32 = tensor.collapse_shape %v27 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
  %e33 = tensor.empty() : tensor<2x4x4xf32>
  %z34 = linalg.fill ins(%zero : f32) outs(%e33 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p35 = linalg.batch_matmul ins(%c31, %c32 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z34 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x36 = tensor.expand_shape %p35 [[0, 1], [2], [3]] output_shape [1, 2, 4, 4] : tensor<2x4x4xf32> into tensor<1x2x4x4xf32>
  %o37 = tensor.concat dim(2) %x9, %x36 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32>
  return %o37 : tensor<1x2x8x4xf32>
}

// -----

// The chunk loop as an scf.for that carries W and the output buffer, each
// chunk's output inserted at the chunk's offset %i: the shadow is an ONNX
// Loop whose body writes a ScatterND window at i * 4, which the raise proves
// to walk the sequence and tile the buffer.

// REMARK: remark: TTT layer: scf.for over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_for(
// CHECK-NOT: scf.for
// CHECK: %[[O:.+]] = ttt.kvb_layer
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK-NEXT: return %[[O]]
func.func @scf_for(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %cC = arith.constant 4 : index
  %cT = arith.constant 8 : index
  %buf0 = tensor.empty() : tensor<1x2x8x4xf32>
  %r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = %w0, %buf = %buf0) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>) {
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %e5 = tensor.empty() : tensor<1x2x4x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z4 : tensor<1x2x4x4xf32>) {
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
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x8x4xf32>
  scf.yield %v11, %next : tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>
  }
  return %r#1 : tensor<1x2x8x4xf32>
}

// -----

// The same loop with bounds computed from the queries' static length: the
// ops' folders make them constants (on copies; the program is not touched).

// REMARK: remark: TTT layer: scf.for over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_for_computed_bounds(
// CHECK-NOT: scf.for
// CHECK: %[[O:.+]] = ttt.kvb_layer
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK-NEXT: return %[[O]]
func.func @scf_for_computed_bounds(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cT = tensor.dim %q, %c2 : tensor<1x2x8x4xf32>
  %cC = affine.apply affine_map<()[s0] -> (s0 floordiv 2)>()[%cT]
  %buf0 = tensor.empty() : tensor<1x2x8x4xf32>
  %r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = %w0, %buf = %buf0) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>) {
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %e5 = tensor.empty() : tensor<1x2x4x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z4 : tensor<1x2x4x4xf32>) {
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
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x8x4xf32>
  scf.yield %v11, %next : tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>
  }
  return %r#1 : tensor<1x2x8x4xf32>
}

// -----

// The scf.for with a partial last chunk (T = 10, chunks of 4): the chunk's
// size is an affine.min of the counter, so its slices have a dynamic size.
// ttt-form-chunk-loops proves the windows `[i, i + min(4, 10 - i))` tile
// the sequence, the last one shorter: one kvb_layer, no loop left.

// REMARK: remark: TTT layer: scf.for over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_for_partial_last_chunk(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x10x4xf32>
// CHECK-NOT: scf.for
// CHECK-NOT: affine.min
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]]
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x10x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @scf_for_partial_last_chunk(%q: tensor<1x2x10x4xf32>, %k: tensor<1x2x10x4xf32>, %v: tensor<1x2x10x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x10x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %cC = arith.constant 4 : index
  %cT = arith.constant 10 : index
  %buf0 = tensor.empty() : tensor<1x2x10x4xf32>
  %r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = %w0, %buf = %buf0) -> (tensor<1x2x4x4xf32>, tensor<1x2x10x4xf32>) {
  %n = affine.min affine_map<(d0) -> (4, -d0 + 10)>(%i)
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x10x4xf32> to tensor<1x2x?x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x10x4xf32> to tensor<1x2x?x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x10x4xf32> to tensor<1x2x?x4xf32>
  %e4 = tensor.empty(%n) : tensor<1x2x?x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x?x4xf32>, tensor<1x2x4x4xf32>) outs(%z5 : tensor<1x2x?x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x4xf32>
  %e7 = tensor.empty() : tensor<1x2x4x4xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v3 : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) outs(%z8 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e10 = tensor.empty() : tensor<1x2x4x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x10x4xf32>
  scf.yield %v11, %next : tensor<1x2x4x4xf32>, tensor<1x2x10x4xf32>
  }
  return %r#1 : tensor<1x2x10x4xf32>
}

// -----

// The same loop as an scf.while that counts the chunk offset itself: read
// (upstream's uplift) as the scf.for above, and raised alike. The uplift's
// computation of the counter's last value goes with the loop.

// REMARK: remark: TTT layer: counted scf.while over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_while(
// CHECK-NOT: scf.
// CHECK: %[[O:.+]] = ttt.kvb_layer
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK-NEXT: return %[[O]]
func.func @scf_while(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %cC = arith.constant 4 : index
  %cT = arith.constant 8 : index
  %buf0 = tensor.empty() : tensor<1x2x8x4xf32>
  %r:3 = scf.while (%i0 = %c0, %w_ = %w0, %buf_ = %buf0) : (index, tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>) -> (index, tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>) {
    %more = arith.cmpi slt, %i0, %cT : index
    scf.condition(%more) %i0, %w_, %buf_ : index, tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>
  } do {
  ^bb0(%i: index, %w: tensor<1x2x4x4xf32>, %buf: tensor<1x2x8x4xf32>):
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
  %e5 = tensor.empty() : tensor<1x2x4x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z4 : tensor<1x2x4x4xf32>) {
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
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x8x4xf32>
  %inext = arith.addi %i, %cC : index
  scf.yield %inext, %v11, %next : index, tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>
  }
  return %r#2 : tensor<1x2x8x4xf32>
}

// -----

// An RNN cell unrolled over three steps: state carried from step to step,
// but no weight that the data moves. Nothing is found; the function stays.

// REMARK: remark: no TTT layer found
// CHECK-LABEL: func.func @rnn(
// CHECK-COUNT-3: math.tanh
// CHECK: tensor.concat
func.func @rnn(%x: tensor<1x3x4xf32>, %w: tensor<4x4xf32>, %u: tensor<4x4xf32>) -> tensor<1x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %h0 = arith.constant dense<[[[0., 0., 0., 0.]]]> : tensor<1x1x4xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0] [1, 1, 4] [1, 1, 1] : tensor<1x3x4xf32> to tensor<1x1x4xf32>
  %e2 = tensor.empty() : tensor<1x1x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %v4 = linalg.generic {indexing_maps = [affine_map<(b, i, j, r) -> (b, i, r)>, affine_map<(b, i, j, r) -> (r, j)>, affine_map<(b, i, j, r) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x1, %w : tensor<1x1x4xf32>, tensor<4x4xf32>) outs(%z3 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4xf32>
  %e5 = tensor.empty() : tensor<1x1x4xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %v7 = linalg.generic {indexing_maps = [affine_map<(b, i, j, r) -> (b, i, r)>, affine_map<(b, i, j, r) -> (r, j)>, affine_map<(b, i, j, r) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%h0, %u : tensor<1x1x4xf32>, tensor<4x4xf32>) outs(%z6 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4xf32>
  %e8 = tensor.empty() : tensor<1x1x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v4, %v7 : tensor<1x1x4xf32>, tensor<1x1x4xf32>) outs(%e8 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %s = arith.addf %a0, %a1 : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> tensor<1x1x4xf32>
  %x10 = tensor.extract_slice %x[0, 1, 0] [1, 1, 4] [1, 1, 1] : tensor<1x3x4xf32> to tensor<1x1x4xf32>
  %e11 = tensor.empty() : tensor<1x1x4xf32>
  %z12 = linalg.fill ins(%zero : f32) outs(%e11 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %v13 = linalg.generic {indexing_maps = [affine_map<(b, i, j, r) -> (b, i, r)>, affine_map<(b, i, j, r) -> (r, j)>, affine_map<(b, i, j, r) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x10, %w : tensor<1x1x4xf32>, tensor<4x4xf32>) outs(%z12 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4xf32>
  %e14 = tensor.empty() : tensor<1x1x4xf32>
  %z15 = linalg.fill ins(%zero : f32) outs(%e14 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %v16 = linalg.generic {indexing_maps = [affine_map<(b, i, j, r) -> (b, i, r)>, affine_map<(b, i, j, r) -> (r, j)>, affine_map<(b, i, j, r) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v9, %u : tensor<1x1x4xf32>, tensor<4x4xf32>) outs(%z15 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4xf32>
  %e17 = tensor.empty() : tensor<1x1x4xf32>
  %v18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v13, %v16 : tensor<1x1x4xf32>, tensor<1x1x4xf32>) outs(%e17 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %s = arith.addf %a0, %a1 : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> tensor<1x1x4xf32>
  %x19 = tensor.extract_slice %x[0, 2, 0] [1, 1, 4] [1, 1, 1] : tensor<1x3x4xf32> to tensor<1x1x4xf32>
  %e20 = tensor.empty() : tensor<1x1x4xf32>
  %z21 = linalg.fill ins(%zero : f32) outs(%e20 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %v22 = linalg.generic {indexing_maps = [affine_map<(b, i, j, r) -> (b, i, r)>, affine_map<(b, i, j, r) -> (r, j)>, affine_map<(b, i, j, r) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x19, %w : tensor<1x1x4xf32>, tensor<4x4xf32>) outs(%z21 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4xf32>
  %e23 = tensor.empty() : tensor<1x1x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e23 : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %v25 = linalg.generic {indexing_maps = [affine_map<(b, i, j, r) -> (b, i, r)>, affine_map<(b, i, j, r) -> (r, j)>, affine_map<(b, i, j, r) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v18, %u : tensor<1x1x4xf32>, tensor<4x4xf32>) outs(%z24 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4xf32>
  %e26 = tensor.empty() : tensor<1x1x4xf32>
  %v27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v22, %v25 : tensor<1x1x4xf32>, tensor<1x1x4xf32>) outs(%e26 : tensor<1x1x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %s = arith.addf %a0, %a1 : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> tensor<1x1x4xf32>
  %o28 = tensor.concat dim(1) %v9, %v18, %v27 : (tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x3x4xf32>
  return %o28 : tensor<1x3x4xf32>
}

// -----

// An scf.while whose condition reads the data (iterate while the running
// sum is below a threshold) is no counted loop: it is not uplifted, the
// remark says why, nothing is found, and the function stays as written.

// REMARK: :[[# @LINE + 9]]:8: remark: scf.while not read as a loop over chunks: its condition is not an integer comparison of a counter with a bound; ttt reads a loop whose condition region only compares a counter with a bound (i < n) and whose body adds a step to that counter
// REMARK: remark: no TTT layer found
// CHECK-LABEL: func.func @data_dependent_while(
// CHECK: scf.while
// CHECK: arith.cmpf olt
// CHECK: scf.condition
func.func @data_dependent_while(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %limit = arith.constant 10.0 : f32
  %r = scf.while (%s = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %first = tensor.extract %s[%c0] : tensor<4xf32>
    %below = arith.cmpf olt, %first, %limit : f32
    scf.condition(%below) %s : tensor<4xf32>
  } do {
  ^bb0(%s: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%s, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    } -> tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A do-while: the loop carries its condition as an i1 that the body computes
// for the next iteration. When the condition it starts with is that
// computation on its first values, the raise computes it at the start of each
// iteration instead (raise-linalg-torch-while.mlir); this one starts with
// 8 <= 4 where its body computes i + 4 < 8 (true at i = 0), so it has no
// counter that the before region compares. The remark names that; the function stays as written.

// REMARK: :[[# @LINE + 10]]:10: remark: scf.while not read as a loop over chunks: its condition is an i1 that it carries from one iteration to the next (computed at the end of its body), not a comparison of a counter with a bound, and not read as one: that takes a condition computed only from the values the body yields, and a first condition that is the same computation on the loop's first values
// REMARK: remark: no TTT layer found
// CHECK-LABEL: func.func @carried_condition_while(
// CHECK: scf.while
// CHECK: scf.condition(%{{.+}}) %{{.+}}, %{{.+}} : index, tensor<1x2x4x4xf32>
func.func @carried_condition_while(%k: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %go = arith.cmpi sle, %c8, %c4 : index
  %r:2 = scf.while (%more = %go, %i = %c0, %w = %w0) : (i1, index, tensor<1x2x4x4xf32>) -> (index, tensor<1x2x4x4xf32>) {
    scf.condition(%more) %i, %w : index, tensor<1x2x4x4xf32>
  } do {
  ^bb0(%i: index, %w: tensor<1x2x4x4xf32>):
    %kc = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(b, h, c, d, e) -> (b, h, c, d)>, affine_map<(b, h, c, d, e) -> (b, h, c, e)>, affine_map<(b, h, c, d, e) -> (b, h, d, e)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%kc, %kc : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%w : tensor<1x2x4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x2x4x4xf32>
    %i2 = arith.addi %i, %c4 : index
    %more2 = arith.cmpi slt, %i2, %c8 : index
    scf.yield %more2, %i2, %next : i1, index, tensor<1x2x4x4xf32>
  }
  return %r#1 : tensor<1x2x4x4xf32>
}

// -----

// A loop of scalars only (no tensor that could be a fast weight) is not
// worth a remark of its own.

// REMARK-NOT: scf.while not read
// REMARK: remark: no TTT layer found
// CHECK-LABEL: func.func @scalar_while(
// CHECK: scf.while
func.func @scalar_while(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<1xf32>) {
  %n = arith.constant 5.0 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %r = scf.while (%s = %zero) : (f32) -> f32 {
    %below = arith.cmpf olt, %s, %n : f32
    scf.condition(%below) %s : f32
  } do {
  ^bb0(%s: f32):
    %t = arith.addf %s, %one : f32
    scf.yield %t : f32
  }
  %t = tensor.from_elements %r : tensor<1xf32>
  return %x, %t : tensor<4xf32>, tensor<1xf32>
}

// -----

// A function of an unranked tensor is not read, and the remark says which
// argument stopped the reading.

// REMARK: remark: not read for TTT layers: argument #0 is tensor<*xf32>, not a ranked tensor of floats
// CHECK-LABEL: func.func @unranked(
// CHECK: linalg.copy
func.func @unranked(%x: tensor<*xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = tensor.cast %x : tensor<*xf32> to tensor<4xf32>
  %y = linalg.copy ins(%r : tensor<4xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A sequence length known only at run time: the loop runs to the queries'
// tensor.dim and fills a tensor.empty of that length. The layer keeps the
// dynamic length; the keys and values it reads are cut to the queries'
// length, the only tokens the loop reads of them.

// REMARK: remark: TTT layer: scf.for over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_for_run_time_length(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// CHECK-NOT: scf.for
// CHECK: %[[T:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<1x2x?x4xf32>
// CHECK: %[[KT:.+]] = tensor.extract_slice %[[K]][0, 0, 0, 0] [1, 2, %[[T]], 4] [1, 1, 1, 1]
// CHECK: %[[VT:.+]] = tensor.extract_slice %[[V]][0, 0, 0, 0] [1, 2, %[[T]], 4] [1, 1, 1, 1]
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[KT]], %[[VT]]
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @scf_for_run_time_length(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cC = arith.constant 4 : index
  %cT = tensor.dim %q, %c2 : tensor<1x2x?x4xf32>
  %buf0 = tensor.empty(%cT) : tensor<1x2x?x4xf32>
  %r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = %w0, %buf = %buf0) -> (tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>) {
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x4x4xf32>
  %v3 = tensor.extract_slice %v[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> to tensor<1x2x4x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z5 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e7 = tensor.empty() : tensor<1x2x4x4xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v3 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%z8 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e10 = tensor.empty() : tensor<1x2x4x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x?x4xf32>
  scf.yield %v11, %next : tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>
  }
  return %r#1 : tensor<1x2x?x4xf32>
}

// -----

// The same with chunks of min(4, T - i) tokens (an affine.min of the counter
// and the length), so that any length runs, a partial last chunk included: the
// chunk size is integer nodes, each chunk's output is written at the grid of
// the buffer's ranges cut to its window, and the layer is raised alike.

// REMARK: remark: TTT layer: scf.for over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_for_run_time_length_partial_chunks(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// CHECK-NOT: scf.for
// CHECK-NOT: affine.min
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]]
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @scf_for_run_time_length_partial_chunks(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x?x4xf32> {
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
  %e4 = tensor.empty(%n) : tensor<1x2x?x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<1x2x?x4xf32>, tensor<1x2x4x4xf32>) outs(%z5 : tensor<1x2x?x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x4xf32>
  %e7 = tensor.empty() : tensor<1x2x4x4xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v3 : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) outs(%z8 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e10 = tensor.empty() : tensor<1x2x4x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x?x4xf32>
  scf.yield %v11, %next : tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>
  }
  return %r#1 : tensor<1x2x?x4xf32>
}

// -----

// An scf.while over a run-time length that advances its counter by its
// chunk's length min(4, T - i), not by a constant: it passes through the same
// counters as a step of 4 (the two differ only once both reach T), so it is
// read as that counted loop, and raised alike.

// REMARK: remark: TTT layer: counted scf.while over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @scf_while_advancing_by_chunk_length(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// CHECK-NOT: scf.
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]]
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @scf_while_advancing_by_chunk_length(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cC = arith.constant 4 : index
  %cT = tensor.dim %q, %c2 : tensor<1x2x?x4xf32>
  %buf0 = tensor.empty(%cT) : tensor<1x2x?x4xf32>
  %r:3 = scf.while (%i0 = %c0, %w0_ = %w0, %buf_ = %buf0) : (index, tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>) -> (index, tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>) {
  %more = arith.cmpi slt, %i0, %cT : index
  scf.condition(%more) %i0, %w0_, %buf_ : index, tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>
  } do {
  ^bb0(%i: index, %w: tensor<1x2x4x4xf32>, %buf: tensor<1x2x?x4xf32>):
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
  %e7 = tensor.empty() : tensor<1x2x4x4xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v3 : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) outs(%z8 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %e10 = tensor.empty() : tensor<1x2x4x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e10 : tensor<1x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [1, 2, %n, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x?x4xf32>
  %inext = arith.addi %i, %n : index
  scf.yield %inext, %v11, %next : index, tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>
  }
  return %r#2 : tensor<1x2x?x4xf32>
}
