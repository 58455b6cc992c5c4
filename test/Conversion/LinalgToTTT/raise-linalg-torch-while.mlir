// RUN: ttt-opt %s --ttt-raise-linalg --split-input-file 2>/dev/null | FileCheck %s
// RUN: ttt-opt %s --ttt-raise-linalg --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// What torch-mlir (20261001) makes of torch's while_loop over the chunks
// (python/ttt/models/loops.py), cut down to one linear fast weight: the
// counter a tensor<i64> stepped and compared by 0-d linalg.generic ops and
// started at a sum of zeros (a start torch-mlir cannot fold), the condition
// computed at the end of the body and carried as an i1, every input carried
// along unchanged, each chunk's offset clamped to [0, T] as PyTorch's slices
// clamp, the bounds asserted. Read as the counted loop it is (0-d tensors
// carried as scalars, the condition computed at the start of each iteration,
// the clamps folded by the counter's range), the layer is raised.

// REMARK: :[[# @LINE + 34]]:{{[0-9]+}}: remark: TTT layer: counted scf.while over chunks (chunks of 4 tokens), fast weights '{{.+}}': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @torch_while(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x2x16x8xf32>, %[[K:[^:]+]]: tensor<1x2x16x8xf32>, %[[V:[^:]+]]: tensor<1x2x16x8xf32>, %[[W:[^:]+]]: tensor<2x8x8xf32>
// CHECK-NOT:     scf.while
// CHECK:         %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[V]] {{.*}}schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK-NOT:     scf.while
// CHECK:         return %[[O]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> ()>
#map2 = affine_map<() -> ()>
func.func @torch_while(%arg0: tensor<1x2x16x8xf32>, %arg1: tensor<1x2x16x8xf32>, %arg2: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  %cst_0 = arith.constant 0.000000e+00 : f32
  %c16_i64 = arith.constant 16 : i64
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %c3_i64 = arith.constant 3 : i64
  %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x8xf32>
  %cst_2 = arith.constant dense<0> : tensor<1x2x16x8xi64>
  %expanded = tensor.expand_shape %w [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %0 = tensor.empty() : tensor<i64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<i64>) -> tensor<i64>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%cst_2 : tensor<1x2x16x8xi64>) outs(%1 : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %6 = arith.addi %in, %out : i64
    linalg.yield %6 : i64
  } -> tensor<i64>
  %3 = tensor.empty() : tensor<i1>
  %4 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%2 : tensor<i64>) outs(%3 : tensor<i1>) {
  ^bb0(%in: i64, %out: i1):
    %6 = arith.cmpi slt, %in, %c4_i64 : i64
    linalg.yield %6 : i1
  } -> tensor<i1>
  %extracted = tensor.extract %4[] : tensor<i1>
  %5:6 = scf.while (%arg3 = %extracted, %arg4 = %2, %arg5 = %expanded, %arg6 = %cst_1, %arg7 = %arg0, %arg8 = %arg1, %arg9 = %arg2) : (i1, tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> (tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
    scf.condition(%arg3) %arg4, %arg5, %arg6, %arg7, %arg8, %arg9 : tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  } do {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<1x2x8x8xf32>, %arg5: tensor<1x2x16x8xf32>, %arg6: tensor<1x2x16x8xf32>, %arg7: tensor<1x2x16x8xf32>, %arg8: tensor<1x2x16x8xf32>):
    %extracted_3 = tensor.extract %arg3[] : tensor<i64>
    %6 = arith.cmpi sge, %extracted_3, %c0_i64 : i64
    cf.assert %6, "Runtime assertion failed for expression u6 >= 0 on node 'ge_11'"
    %7 = arith.cmpi sle, %extracted_3, %c3_i64 : i64
    cf.assert %7, "Runtime assertion failed for expression u6 <= 3 on node 'le_10'"
    %8 = arith.muli %extracted_3, %c4_i64 : i64
    %9 = arith.addi %8, %c16_i64 : i64
    %10 = arith.cmpi sge, %8, %c0_i64 : i64
    %11 = arith.select %10, %8, %9 : i64
    %12 = arith.maxsi %11, %c0_i64 : i64
    %13 = arith.minsi %12, %c16_i64 : i64
    %14 = arith.index_cast %13 : i64 to index
    %extracted_slice = tensor.extract_slice %arg6[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x4x8xf32>
    %extracted_slice_4 = tensor.extract_slice %arg7[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x4x8xf32>
    %extracted_slice_5 = tensor.extract_slice %arg8[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x4x8xf32>
    %collapsed = tensor.collapse_shape %extracted_slice [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
    %collapsed_6 = tensor.collapse_shape %arg4 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %15 = tensor.empty() : tensor<2x4x8xf32>
    %16 = linalg.fill ins(%cst_0 : f32) outs(%15 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %17 = linalg.batch_matmul ins(%collapsed, %collapsed_6 : tensor<2x4x8xf32>, tensor<2x8x8xf32>) outs(%16 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %expanded_7 = tensor.expand_shape %17 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32>
    %18 = tensor.empty() : tensor<1x2x8x4xf32>
    %transposed = linalg.transpose ins(%extracted_slice_4 : tensor<1x2x4x8xf32>) outs(%18 : tensor<1x2x8x4xf32>) permutation = [0, 1, 3, 2]
    %collapsed_8 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
    %collapsed_9 = tensor.collapse_shape %extracted_slice_5 [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
    %19 = tensor.empty() : tensor<2x8x8xf32>
    %20 = linalg.fill ins(%cst_0 : f32) outs(%19 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %21 = linalg.batch_matmul ins(%collapsed_8, %collapsed_9 : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%20 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %expanded_10 = tensor.expand_shape %21 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
    %22 = tensor.empty() : tensor<1x2x8x8xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg4, %expanded_10 : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) outs(%22 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %26 = arith.addf %in, %in_12 : f32
      linalg.yield %26 : f32
    } -> tensor<1x2x8x8xf32>
    %inserted_slice = tensor.insert_slice %expanded_7 into %arg5[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x4x8xf32> into tensor<1x2x16x8xf32>
    %24 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%arg3 : tensor<i64>) outs(%0 : tensor<i64>) {
    ^bb0(%in: i64, %out: i64):
      %26 = arith.addi %in, %c1_i64 : i64
      linalg.yield %26 : i64
    } -> tensor<i64>
    %25 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%24 : tensor<i64>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i64, %out: i1):
      %26 = arith.cmpi slt, %in, %c4_i64 : i64
      linalg.yield %26 : i1
    } -> tensor<i1>
    %extracted_11 = tensor.extract %25[] : tensor<i1>
    scf.yield %extracted_11, %24, %23, %inserted_slice, %arg6, %arg7, %arg8 : i1, tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  }
  return %5#2 : tensor<1x2x16x8xf32>
}

// -----

// The same do-while with a first condition that is not the body's condition
// on its first values (false: the loop never runs, while the counter's start
// 0 < 4). Computing the condition at the start of each iteration would run
// it: the loop is not read as counted, and the function stays as written.

// REMARK: :[[# @LINE + 11]]:{{[0-9]+}}: remark: scf.while not read as a loop over chunks: its condition is an i1 that it carries from one iteration to the next
// REMARK: remark: no TTT layer found
// CHECK-LABEL: func.func @first_condition_differs(
// CHECK:         scf.while
// CHECK:         scf.condition
func.func @first_condition_differs(%k: tensor<1x2x8x4xf32>, %w0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %t = tensor.from_elements %c0 : tensor<index>
  %r:2 = scf.while (%more = %false, %i = %t, %w = %w0) : (i1, tensor<index>, tensor<1x2x4x4xf32>) -> (tensor<index>, tensor<1x2x4x4xf32>) {
    scf.condition(%more) %i, %w : tensor<index>, tensor<1x2x4x4xf32>
  } do {
  ^bb0(%it: tensor<index>, %w: tensor<1x2x4x4xf32>):
    %i = tensor.extract %it[] : tensor<index>
    %kc = tensor.extract_slice %k[0, 0, %i, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x2x4x4xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(b, h, c, d, e) -> (b, h, c, d)>, affine_map<(b, h, c, d, e) -> (b, h, c, e)>, affine_map<(b, h, c, d, e) -> (b, h, d, e)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%kc, %kc : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%w : tensor<1x2x4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x2x4x4xf32>
    %i2 = arith.addi %i, %c4 : index
    %more2 = arith.cmpi slt, %i2, %c8 : index
    %t2 = tensor.from_elements %i2 : tensor<index>
    scf.yield %more2, %t2, %next : i1, tensor<index>, tensor<1x2x4x4xf32>
  }
  return %r#1 : tensor<1x2x4x4xf32>
}

// -----

// The same loop around a state that is not a fast weight (W <- tanh(W + k^T v),
// an RNN): read as a counted loop, it holds no layer, and the function is left
// exactly as torch-mlir wrote it (the 0-d counter, the carried condition, the
// clamps).

// REMARK: remark: TTT layer: {{.*}}left as it was
// CHECK-LABEL: func.func @torch_while_rnn(
// CHECK:         scf.while ({{.*}}) : (i1, tensor<i64>,
// CHECK:         arith.maxsi
// CHECK:         math.tanh
// CHECK-NOT:     ttt.kvb_layer
func.func @torch_while_rnn(%arg0: tensor<1x2x16x8xf32>, %arg1: tensor<1x2x16x8xf32>, %arg2: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  %cst_0 = arith.constant 0.000000e+00 : f32
  %c16_i64 = arith.constant 16 : i64
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %c3_i64 = arith.constant 3 : i64
  %cst_1 = arith.constant dense<0.000000e+00> : tensor<1x2x16x8xf32>
  %cst_2 = arith.constant dense<0> : tensor<1x2x16x8xi64>
  %expanded = tensor.expand_shape %w [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %0 = tensor.empty() : tensor<i64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<i64>) -> tensor<i64>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%cst_2 : tensor<1x2x16x8xi64>) outs(%1 : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %6 = arith.addi %in, %out : i64
    linalg.yield %6 : i64
  } -> tensor<i64>
  %3 = tensor.empty() : tensor<i1>
  %4 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%2 : tensor<i64>) outs(%3 : tensor<i1>) {
  ^bb0(%in: i64, %out: i1):
    %6 = arith.cmpi slt, %in, %c4_i64 : i64
    linalg.yield %6 : i1
  } -> tensor<i1>
  %extracted = tensor.extract %4[] : tensor<i1>
  %5:6 = scf.while (%arg3 = %extracted, %arg4 = %2, %arg5 = %expanded, %arg6 = %cst_1, %arg7 = %arg0, %arg8 = %arg1, %arg9 = %arg2) : (i1, tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> (tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
    scf.condition(%arg3) %arg4, %arg5, %arg6, %arg7, %arg8, %arg9 : tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  } do {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<1x2x8x8xf32>, %arg5: tensor<1x2x16x8xf32>, %arg6: tensor<1x2x16x8xf32>, %arg7: tensor<1x2x16x8xf32>, %arg8: tensor<1x2x16x8xf32>):
    %extracted_3 = tensor.extract %arg3[] : tensor<i64>
    %6 = arith.cmpi sge, %extracted_3, %c0_i64 : i64
    cf.assert %6, "Runtime assertion failed for expression u6 >= 0 on node 'ge_11'"
    %7 = arith.cmpi sle, %extracted_3, %c3_i64 : i64
    cf.assert %7, "Runtime assertion failed for expression u6 <= 3 on node 'le_10'"
    %8 = arith.muli %extracted_3, %c4_i64 : i64
    %9 = arith.addi %8, %c16_i64 : i64
    %10 = arith.cmpi sge, %8, %c0_i64 : i64
    %11 = arith.select %10, %8, %9 : i64
    %12 = arith.maxsi %11, %c0_i64 : i64
    %13 = arith.minsi %12, %c16_i64 : i64
    %14 = arith.index_cast %13 : i64 to index
    %extracted_slice = tensor.extract_slice %arg6[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x4x8xf32>
    %extracted_slice_4 = tensor.extract_slice %arg7[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x4x8xf32>
    %extracted_slice_5 = tensor.extract_slice %arg8[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x2x4x8xf32>
    %collapsed = tensor.collapse_shape %extracted_slice [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
    %collapsed_6 = tensor.collapse_shape %arg4 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %15 = tensor.empty() : tensor<2x4x8xf32>
    %16 = linalg.fill ins(%cst_0 : f32) outs(%15 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %17 = linalg.batch_matmul ins(%collapsed, %collapsed_6 : tensor<2x4x8xf32>, tensor<2x8x8xf32>) outs(%16 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %expanded_7 = tensor.expand_shape %17 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32>
    %18 = tensor.empty() : tensor<1x2x8x4xf32>
    %transposed = linalg.transpose ins(%extracted_slice_4 : tensor<1x2x4x8xf32>) outs(%18 : tensor<1x2x8x4xf32>) permutation = [0, 1, 3, 2]
    %collapsed_8 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
    %collapsed_9 = tensor.collapse_shape %extracted_slice_5 [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
    %19 = tensor.empty() : tensor<2x8x8xf32>
    %20 = linalg.fill ins(%cst_0 : f32) outs(%19 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %21 = linalg.batch_matmul ins(%collapsed_8, %collapsed_9 : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%20 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %expanded_10 = tensor.expand_shape %21 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
    %22 = tensor.empty() : tensor<1x2x8x8xf32>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg4, %expanded_10 : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) outs(%22 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %26 = arith.addf %in, %in_12 : f32
      %27 = math.tanh %26 : f32
      linalg.yield %27 : f32
    } -> tensor<1x2x8x8xf32>
    %inserted_slice = tensor.insert_slice %expanded_7 into %arg5[0, 0, %14, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x4x8xf32> into tensor<1x2x16x8xf32>
    %24 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg3 : tensor<i64>) outs(%0 : tensor<i64>) {
    ^bb0(%in: i64, %out: i64):
      %26 = arith.addi %in, %c1_i64 : i64
      linalg.yield %26 : i64
    } -> tensor<i64>
    %25 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%24 : tensor<i64>) outs(%3 : tensor<i1>) {
    ^bb0(%in: i64, %out: i1):
      %26 = arith.cmpi slt, %in, %c4_i64 : i64
      linalg.yield %26 : i1
    } -> tensor<i1>
    %extracted_11 = tensor.extract %25[] : tensor<i1>
    scf.yield %extracted_11, %24, %23, %inserted_slice, %arg6, %arg7, %arg8 : i1, tensor<i64>, tensor<1x2x8x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  }
  return %5#2 : tensor<1x2x16x8xf32>
}

