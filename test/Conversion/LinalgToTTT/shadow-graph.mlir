// RUN: ttt-opt %s --ttt-raise-linalg=print-shadow 2>&1 >/dev/null | FileCheck %s

// How the raise reads torch-mlir's spellings in its shadow ONNX graph: a unit
// dim read at index 0 is a broadcast (dropped, then laid on the loop dims); a
// sum that keeps its reduced dim at index 0 is ReduceSum with keepdims; a
// select of `col <= row` on linalg.index values is a causal Trilu; a select of
// `a < b` is Max; an element read at a constant index is a Slice; torch-mlir's
// division guard (cf.assert) computes nothing; a dense_resource constant is
// its elements.

// CHECK-LABEL: onnx.graph @spellings(
// CHECK: "Mul"(%arg0, %arg1) {{.*}} : (tensor<2x8x4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
// CHECK: "ReduceSum"(%{{.+}}, %{{.+}}) attrs {keepdims = 1 : i64} {{.*}} -> tensor<2x8x1xf32>
// CHECK: "Trilu"(%arg2, %{{.+}}) attrs {upper = 0 : i64} {{.*}} : (tensor<2x8x8xf32>, tensor<i64>) -> tensor<2x8x8xf32>
// CHECK: "Max"(%arg0, %{{.+}}) {{.*}} -> tensor<2x8x4xf32>
// CHECK: "Slice"(%arg0, {{.*}} -> tensor<2x1x4xf32>
// CHECK: "Div"(%{{.+}}, %arg3) {{.*}} -> tensor<f32>
// CHECK: "Constant"() attrs {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NOT: ttt.opaque

// torch-mlir's tril: an arange (a payload yielding its index: a constant),
// col - row, a comparison with 0 (a boolean tensor) and a select of it.
// CHECK-LABEL: onnx.graph @mask(
// CHECK: "Constant"() attrs {value = dense<[0, 1, 2, 3]> : tensor<4xi64>}
// CHECK: "Sub"({{.*}}) -> tensor<4x4xi64>
// CHECK: "LessOrEqual"({{.*}}) -> tensor<4x4xi1>
// CHECK: "Where"({{.*}}, %arg0, {{.*}}) -> tensor<4x4xf32>
// CHECK-NOT: ttt.opaque

// CHECK-LABEL: onnx.graph @integer_power(
// CHECK: %[[THREE:.+]] = onnx.node "Constant"() attrs {value = dense<3> : tensor<i64>}
// CHECK: "Pow"(%arg0, %[[THREE]]) {{.*}} : (tensor<2x4xf32>, tensor<i64>) -> tensor<2x4xf32>
// CHECK-NOT: ttt.opaque

// torch-mlir's `x.norm(dim=(-2, -1))`: a sum whose payload squares |x| before
// it adds, then ^0.5: the payload over the whole iteration space, then
// ReduceSum.
// CHECK-LABEL: onnx.graph @norm(
// CHECK: %[[ABS:.+]] = onnx.node "Abs"(%arg0) {{.*}} -> tensor<2x8x4xf32>
// CHECK: %[[SQUARE:.+]] = onnx.node "Pow"(%[[ABS]], %{{.+}}) {{.*}} -> tensor<2x8x4xf32>
// CHECK: %[[SUM:.+]] = onnx.node "ReduceSum"(%[[SQUARE]], %{{.+}}) attrs {keepdims = 1 : i64} {{.*}} -> tensor<2x1x1xf32>
// CHECK: "Pow"(%[[SUM]], %{{.+}}) {{.*}} -> tensor<2x1x1xf32>
// CHECK-NOT: ttt.opaque

// A window written at a constant offset into a tensor that is not fresh (the
// chunk a loop leaves to the code after it): a ScatterND at constant indices.
// CHECK-LABEL: onnx.graph @write_at_constant_offset(
// CHECK: %[[AT:.+]] = onnx.node "Add"
// CHECK: "ScatterND"(%arg0, %[[AT]], %arg1) {{.*}} -> tensor<2x8x4xf32>
// CHECK-NOT: ttt.opaque

// A loop to a run-time length: tensor.dim of the dynamic dim is the Gather of
// a Shape a scripted export reads; the buffer, a tensor.empty of that length,
// zeros of its shape; the trip count ceil(T / 3) integer nodes.
// CHECK-LABEL: onnx.graph @run_time_length(
// CHECK: %[[SHAPE:.+]] = onnx.node "Shape"(%arg0)
// CHECK: %[[T:.+]] = onnx.node "Gather"(%[[SHAPE]], %{{.+}}) attrs {axis = 0 : i64}
// CHECK: %[[DIMS:.+]] = onnx.node "Concat"
// CHECK: %[[ZEROS:.+]] = onnx.node "ConstantOfShape"(%[[DIMS]]) {{.*}} -> tensor<2x?x4xf32>
// CHECK: %[[UP:.+]] = onnx.node "Add"(%[[T]], %{{.+}})
// CHECK: %[[TRIPS:.+]] = onnx.node "Div"(%[[UP]], %{{.+}})
// CHECK: onnx.node "Loop"(%[[TRIPS]], %{{.+}}, %[[ZEROS]])
// CHECK: "ScatterND"
// CHECK-NOT: ttt.opaque

// With chunks of min(3, T - i) rows: the affine.min is a Min of integer nodes,
// the chunk a Slice to the window's end, and its write a ScatterND at the grid
// of the buffer's Range of each leading axis, the chunk's axis cut to the
// window (what a scripted `out[:, s:e] = chunk` builds).
// CHECK-LABEL: onnx.graph @run_time_length_partial(
// CHECK: "Loop"
// CHECK: %[[N:.+]] = onnx.node "Min"
// CHECK: "Slice"(%arg0, {{.*}} -> tensor<2x?x4xf32>
// CHECK: "Range"
// CHECK: %[[ROWS:.+]] = onnx.node "Range"
// CHECK: "Slice"(%[[ROWS]], {{.*}} -> tensor<?xi64>
// CHECK: %[[GRID:.+]] = onnx.node "Concat"({{.*}}) attrs {axis = -1 : i64} {{.*}} -> tensor<2x?x2xi64>
// CHECK: "ScatterND"(%{{.+}}, %[[GRID]], %{{.+}}) {{.*}} -> tensor<2x?x4xf32>
// CHECK-NOT: ttt.opaque

// A window of run-time size from 0 is the whole dim only when its size is the
// dim's own tensor.dim: the first min(3, T) rows are a Slice.
// CHECK-LABEL: onnx.graph @whole_or_window(
// CHECK: %[[HEAD:.+]] = onnx.node "Slice"(%arg0,
// CHECK: onnx.yield %[[HEAD]], %arg0 :

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#none = affine_map<(d0, d1) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bcast = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#lastRow = affine_map<(d0, d1, d2) -> (d1)>
module {
  func.func @spellings(%x: tensor<2x8x4xf32>, %lr: tensor<2x8x1xf32>, %s: tensor<2x8x8xf32>, %c: tensor<f32>) -> (tensor<2x8x4xf32>, tensor<2x8x1xf32>, tensor<2x8x8xf32>, tensor<2x8x4xf32>, tensor<2x1x4xf32>, tensor<f32>, tensor<2xf32>) {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %e4 = tensor.empty() : tensor<2x8x4xf32>
    %scaled = linalg.generic {indexing_maps = [#id3, #bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %lr : tensor<2x8x4xf32>, tensor<2x8x1xf32>) outs(%e4 : tensor<2x8x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<2x8x4xf32>
    %e1 = tensor.empty() : tensor<2x8x1xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %sum = linalg.generic {indexing_maps = [#id3, #bcast], iterator_types = ["parallel", "parallel", "reduction"]} ins(%scaled : tensor<2x8x4xf32>) outs(%f1 : tensor<2x8x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.addf %a, %o : f32
      linalg.yield %t : f32
    } -> tensor<2x8x1xf32>
    %e8 = tensor.empty() : tensor<2x8x8xf32>
    %tril = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%e8 : tensor<2x8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 1 : index
      %ii = arith.index_cast %i : index to i64
      %j = linalg.index 2 : index
      %jj = arith.index_cast %j : index to i64
      %keep = arith.cmpi sle, %jj, %ii : i64
      %r = arith.select %keep, %a, %zero : f32
      linalg.yield %r : f32
    } -> tensor<2x8x8xf32>
    %clamped = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x8x4xf32>) outs(%e4 : tensor<2x8x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %lt = arith.cmpf ult, %a, %zero : f32
      %r = arith.select %lt, %zero, %a : f32
      linalg.yield %r : f32
    } -> tensor<2x8x4xf32>
    %c7 = arith.constant 7 : index
    %eRow = tensor.empty() : tensor<2x1x4xf32>
    %row = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%eRow : tensor<2x1x4xf32>) {
    ^bb0(%o: f32):
      %b = linalg.index 0 : index
      %d = linalg.index 2 : index
      %r = tensor.extract %x[%b, %c7, %d] : tensor<2x8x4xf32>
      linalg.yield %r : f32
    } -> tensor<2x1x4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %inv = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%c : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %nz = arith.cmpf one, %a, %zero : f32
      cf.assert %nz, "unimplemented: tensor with zero element"
      %r = arith.divf %one, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %blob = arith.constant dense_resource<two_floats> : tensor<2xf32>
    return %scaled, %sum, %tril, %clamped, %row, %inv, %blob : tensor<2x8x4xf32>, tensor<2x8x1xf32>, tensor<2x8x8xf32>, tensor<2x8x4xf32>, tensor<2x1x4xf32>, tensor<f32>, tensor<2xf32>
  }
  func.func @mask(%s: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %zero = arith.constant dense<0.0> : tensor<f32>
    %c0 = arith.constant 0 : i64
    %e = tensor.empty() : tensor<4xi64>
    %iota = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e : tensor<4xi64>) {
    ^bb0(%o: i64):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      linalg.yield %ii : i64
    } -> tensor<4xi64>
    %cols = tensor.expand_shape %iota [[0, 1]] output_shape [1, 4] : tensor<4xi64> into tensor<1x4xi64>
    %rows = tensor.expand_shape %iota [[0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
    %e2 = tensor.empty() : tensor<4x4xi64>
    %diff = linalg.generic {indexing_maps = [#col, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%cols, %rows : tensor<1x4xi64>, tensor<4x1xi64>) outs(%e2 : tensor<4x4xi64>) {
    ^bb0(%a: i64, %b: i64, %o: i64):
      %d = arith.subi %a, %b : i64
      linalg.yield %d : i64
    } -> tensor<4x4xi64>
    %eb = tensor.empty() : tensor<4x4xi1>
    %keep = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%diff : tensor<4x4xi64>) outs(%eb : tensor<4x4xi1>) {
    ^bb0(%a: i64, %o: i1):
      %k = arith.cmpi sle, %a, %c0 : i64
      linalg.yield %k : i1
    } -> tensor<4x4xi1>
    %ef = tensor.empty() : tensor<4x4xf32>
    %masked = linalg.generic {indexing_maps = [#id2, #id2, #none, #id2], iterator_types = ["parallel", "parallel"]} ins(%keep, %s, %zero : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>) outs(%ef : tensor<4x4xf32>) {
    ^bb0(%m: i1, %x: f32, %z: f32, %o: f32):
      %r = arith.select %m, %x, %z : f32
      linalg.yield %r : f32
    } -> tensor<4x4xf32>
    return %masked : tensor<4x4xf32>
  }

  // torch-mlir's gelu(approximate="tanh") cubes with math.fpowi by a
  // captured integer: a Pow by that integer.
  func.func @integer_power(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %three = arith.constant 3 : i64
    %e = tensor.empty() : tensor<2x4xf32>
    %cube = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %p = math.fpowi %a, %three : f32, i64
      linalg.yield %p : f32
    } -> tensor<2x4xf32>
    return %cube : tensor<2x4xf32>
  }
  func.func @norm(%x: tensor<2x8x4xf32>) -> tensor<2x1x1xf32> {
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %half = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<2x1x1xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
    %sum = linalg.generic {indexing_maps = [#id3, affine_map<(b, i, j) -> (b, 0, 0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<2x8x4xf32>) outs(%f : tensor<2x1x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = math.absf %a : f32
      %p = math.powf %m, %two : f32
      %t = arith.addf %p, %o : f32
      linalg.yield %t : f32
    } -> tensor<2x1x1xf32>
    %root = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<2x1x1xf32>) outs(%e : tensor<2x1x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.powf %a, %half : f32
      linalg.yield %r : f32
    } -> tensor<2x1x1xf32>
    return %root : tensor<2x1x1xf32>
  }
  func.func @write_at_constant_offset(%buf: tensor<2x8x4xf32>, %chunk: tensor<2x2x4xf32>) -> tensor<2x8x4xf32> {
    %r = tensor.insert_slice %chunk into %buf[0, 6, 0] [2, 2, 4] [1, 1, 1] : tensor<2x2x4xf32> into tensor<2x8x4xf32>
    return %r : tensor<2x8x4xf32>
  }
  func.func @run_time_length(%x: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %t = tensor.dim %x, %c1 : tensor<2x?x4xf32>
    %buf0 = tensor.empty(%t) : tensor<2x?x4xf32>
    %r = scf.for %i = %c0 to %t step %c3 iter_args(%buf = %buf0) -> (tensor<2x?x4xf32>) {
      %chunk = tensor.extract_slice %x[0, %i, 0] [2, 3, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<2x3x4xf32>
      %next = tensor.insert_slice %chunk into %buf[0, %i, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<2x?x4xf32>
      scf.yield %next : tensor<2x?x4xf32>
    }
    return %r : tensor<2x?x4xf32>
  }
  func.func @run_time_length_partial(%x: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %t = tensor.dim %x, %c1 : tensor<2x?x4xf32>
    %buf0 = tensor.empty(%t) : tensor<2x?x4xf32>
    %r = scf.for %i = %c0 to %t step %c3 iter_args(%buf = %buf0) -> (tensor<2x?x4xf32>) {
      %n = affine.min affine_map<(d0)[s0] -> (3, s0 - d0)>(%i)[%t]
      %chunk = tensor.extract_slice %x[0, %i, 0] [2, %n, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<2x?x4xf32>
      %next = tensor.insert_slice %chunk into %buf[0, %i, 0] [2, %n, 4] [1, 1, 1] : tensor<2x?x4xf32> into tensor<2x?x4xf32>
      scf.yield %next : tensor<2x?x4xf32>
    }
    return %r : tensor<2x?x4xf32>
  }
  func.func @whole_or_window(%x: tensor<2x?x4xf32>) -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>) {
    %c1 = arith.constant 1 : index
    %t = tensor.dim %x, %c1 : tensor<2x?x4xf32>
    %n = affine.min affine_map<()[s0] -> (3, s0)>()[%t]
    %head = tensor.extract_slice %x[0, 0, 0] [2, %n, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<2x?x4xf32>
    %all = tensor.extract_slice %x[0, 0, 0] [2, %t, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<2x?x4xf32>
    return %head, %all : tensor<2x?x4xf32>, tensor<2x?x4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      two_floats: "0x040000000000803F00000040"
    }
  }
#-}
