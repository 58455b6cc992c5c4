// torch-mlir writes numpy broadcasting of one run-time batch against another
// as a gather, `v[b_v == 1 ? 0 : i, j, t, d]` into a tensor of the keys'
// batch. The linalg raise reads it as the values themselves where the two
// batches are equal, which it asserts where the gather was; the layer is then
// raised from the loop as the static program's is.
// RUN: ttt-opt %s --ttt-raise-linalg 2>/dev/null | FileCheck %s
// RUN: ttt-opt %s --ttt-raise-linalg 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// REMARK: remark: TTT layer: scf.for over chunks (chunks of 4 tokens), fast weights 'arg3': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)

// CHECK-LABEL: func.func @values_gathered_to_the_keys_batch(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<?x2x8x4xf32>, %[[K:[^:]+]]: tensor<?x2x8x4xf32>, %[[V:[^:]+]]: tensor<?x2x8x4xf32>
// CHECK-DAG: %[[BK:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x2x8x4xf32>
// CHECK-DAG: %[[BV:.+]] = tensor.dim %[[V]], %{{.+}} : tensor<?x2x8x4xf32>
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[BV]], %[[BK]] : index
// CHECK: cf.assert %[[SAME]], "ttt: the raised TTT layer takes these two sizes as equal
// CHECK-NOT: linalg.index
// CHECK-NOT: scf.for
// CHECK: ttt.kvb_layer
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
func.func @values_gathered_to_the_keys_batch(%q: tensor<?x2x8x4xf32>, %k: tensor<?x2x8x4xf32>, %v: tensor<?x2x8x4xf32>, %w0: tensor<?x2x4x4xf32>) -> tensor<?x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cC = arith.constant 4 : index
  %cT = arith.constant 8 : index
  %b = tensor.dim %q, %c0 : tensor<?x2x8x4xf32>
  %bk = tensor.dim %k, %c0 : tensor<?x2x8x4xf32>
  %bv = tensor.dim %v, %c0 : tensor<?x2x8x4xf32>
  %ve = tensor.empty(%bk) : tensor<?x2x8x4xf32>
  %vg = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%ve : tensor<?x2x8x4xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %one = arith.cmpi eq, %bv, %c1 : index
    %s = arith.select %one, %c0, %i0 : index
    %x = tensor.extract %v[%s, %i1, %i2, %i3] : tensor<?x2x8x4xf32>
    linalg.yield %x : f32
  } -> tensor<?x2x8x4xf32>
  %buf0 = tensor.empty(%b) : tensor<?x2x8x4xf32>
  %r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = %w0, %buf = %buf0) -> (tensor<?x2x4x4xf32>, tensor<?x2x8x4xf32>) {
  %q1 = tensor.extract_slice %q[0, 0, %i, 0] [%b, 2, 4, 4] [1, 1, 1, 1] : tensor<?x2x8x4xf32> to tensor<?x2x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 0, %i, 0] [%b, 2, 4, 4] [1, 1, 1, 1] : tensor<?x2x8x4xf32> to tensor<?x2x4x4xf32>
  %v3 = tensor.extract_slice %vg[0, 0, %i, 0] [%b, 2, 4, 4] [1, 1, 1, 1] : tensor<?x2x8x4xf32> to tensor<?x2x4x4xf32>
  %e5 = tensor.empty(%b) : tensor<?x2x4x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q1, %w : tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) outs(%z4 : tensor<?x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x2x4x4xf32>
  %e8 = tensor.empty(%b) : tensor<?x2x4x4xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, r, i)>, affine_map<(b, h, i, j, r) -> (b, h, r, j)>, affine_map<(b, h, i, j, r) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k2, %v3 : tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) outs(%z7 : tensor<?x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m = arith.mulf %a0, %a1 : f32
    %s = arith.addf %a2, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x2x4x4xf32>
  %e10 = tensor.empty(%b) : tensor<?x2x4x4xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %v9 : tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) outs(%e10 : tensor<?x2x4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %a2: f32):
    %m2 = arith.mulf %a1, %lr : f32
    %r = arith.addf %a0, %m2 : f32
    linalg.yield %r : f32
  } -> tensor<?x2x4x4xf32>
  %next = tensor.insert_slice %v6 into %buf[0, 0, %i, 0] [%b, 2, 4, 4] [1, 1, 1, 1] : tensor<?x2x4x4xf32> into tensor<?x2x8x4xf32>
  scf.yield %v11, %next : tensor<?x2x4x4xf32>, tensor<?x2x8x4xf32>
  }
  return %r#1 : tensor<?x2x8x4xf32>
}
