// RUN: ttt-opt %s --ttt-raise-linalg=print-shadow 2>&1 >/dev/null | FileCheck %s
// RUN: ttt-opt %S/../../fixtures/linalg/dynamic_batch/lact_v6.mlir --ttt-raise-linalg 2>/dev/null | FileCheck %s --check-prefix=RAISE

// torch-mlir's spellings for a batch of run-time size, each input's batch its
// own `?`.

// Numpy broadcasting of one input's batch against another's: a gather at
// `size == 1 ? 0 : i` into a tensor of the other's batch. The shadow reads it
// as its source, the two batches taken as equal, which the graph records
// (by names that lead to the slice, the result's init and the gather) for
// the raise to assert.
// CHECK-LABEL: onnx.graph @broadcast_gather(
// CHECK-SAME: ttt.assumed_equal_sizes = [{a = "[[SRC:t[0-9]+]]", b = "[[INIT:t[0-9]+]]", dims = array<i64: 0, 0>, licenses = "[[READ:t[0-9]+]]"}]
// CHECK: %[[CHUNK:.+]] = onnx.node "Slice"(%arg0,
// CHECK: onnx.yield %[[CHUNK]]
// CHECK-NOT: ttt.opaque

// torch-mlir's guard of a size, `size < 0 ? 1 : size`, is integer nodes.
// CHECK-LABEL: onnx.graph @guarded_size(
// CHECK: %[[B:.+]] = onnx.node "Gather"
// CHECK: %[[NEG:.+]] = onnx.node "Less"(%[[B]], %{{.+}}) {{.*}} -> tensor<i1>
// CHECK: onnx.node "Where"(%[[NEG]], %{{.+}}, %[[B]]) {{.*}} -> tensor<i64>
// CHECK: "ConstantOfShape"
// CHECK-NOT: ttt.opaque

// Chunks written into zeros of the batch's size (a generic yielding a zero):
// every window has the whole batch, so the writes are a Concat.
// CHECK-LABEL: onnx.graph @chunks_into_zeros(
// CHECK: %[[JOIN:.+]] = onnx.node "Concat"(%{{.+}}, %{{.+}}) attrs {axis = 1 : i64} {{.*}} -> tensor<?x8x4xf32>
// CHECK: onnx.yield %[[JOIN]]
// CHECK-NOT: ttt.opaque

// Keys sliced to the queries' batch in a chunk loop: the cut is the same in
// every chunk, so it is its own Slice, made once before the Loop; each chunk
// is a window of the cut keys. The chunk goes into the loop's buffer, whose
// batch is the one it was made with: a ScatterND at the grid of the buffer's
// ranges.
// CHECK-LABEL: onnx.graph @keys_cut_to_the_queries_batch(
// CHECK: %[[SHAPE:.+]] = onnx.node "Shape"(%arg0)
// CHECK: %[[BQ:.+]] = onnx.node "Gather"(%[[SHAPE]],
// CHECK: %[[CUT:.+]] = onnx.node "Slice"(%arg1, %{{.+}}) {{.*}} -> tensor<?x8x4xf32>
// CHECK: onnx.node "Loop"
// CHECK: onnx.node "Slice"(%[[CUT]],
// CHECK: onnx.node "Range"
// CHECK: onnx.node "ScatterND"
// CHECK-NOT: ttt.opaque

// A view of a batch and a chunk length both of run-time size: the target
// copies the length from the source's Shape and infers the merged batch.
// CHECK-LABEL: onnx.graph @view_of_two_run_time_sizes(
// CHECK: %[[SHAPE:.+]] = onnx.node "Shape"(%arg0)
// CHECK: %[[LEN:.+]] = onnx.node "Gather"(%[[SHAPE]], %{{.+}})
// CHECK: %[[PIECE:.+]] = onnx.node "Unsqueeze"(%[[LEN]],
// CHECK: %[[TARGET:.+]] = onnx.node "Concat"(%{{.+}}, %[[PIECE]], %{{.+}})
// CHECK: onnx.node "Reshape"(%arg0, %[[TARGET]]) {{.*}} -> tensor<?x?x4xf32>
// CHECK-NOT: ttt.opaque

// The raise asserts the batches it takes as equal, before the layer.
// RAISE-LABEL: func.func @lact_v6(
// RAISE: %[[BQ:.+]] = tensor.dim %arg0, %c0
// RAISE: %[[EQ:.+]] = arith.cmpi eq, %[[BQ]], %{{.+}} : index
// RAISE: cf.assert %[[EQ]], "ttt: the raised TTT layer takes these two sizes as equal
// RAISE: ttt.kvb_layer %arg0, %arg1, %arg2 : tensor<?x2x64x8xf32>, tensor<?x2x64x8xf32>, tensor<?x2x64x8xf32>

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#scalar = affine_map<(d0, d1, d2) -> ()>
module {
  func.func @broadcast_gather(%x: tensor<?x8x4xf32>, %y: tensor<?x8x4xf32>) -> tensor<?x4x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %bx = tensor.dim %x, %c0 : tensor<?x8x4xf32>
    %by = tensor.dim %y, %c0 : tensor<?x8x4xf32>
    %chunk = tensor.extract_slice %x[0, 0, 0] [%bx, 4, 4] [1, 1, 1] : tensor<?x8x4xf32> to tensor<?x4x4xf32>
    %init = tensor.empty(%by) : tensor<?x4x4xf32>
    %read = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]} outs(%init : tensor<?x4x4xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %one = arith.cmpi eq, %bx, %c1 : index
      %row = arith.select %one, %c0, %i : index
      %e = tensor.extract %chunk[%row, %j, %k] : tensor<?x4x4xf32>
      linalg.yield %e : f32
    } -> tensor<?x4x4xf32>
    return %read : tensor<?x4x4xf32>
  }
  func.func @guarded_size(%x: tensor<?x8x4xf32>) -> tensor<?x8x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %b = tensor.dim %x, %c0 : tensor<?x8x4xf32>
    %negative = arith.cmpi slt, %b, %c0 : index
    %size = arith.select %negative, %c1, %b : index
    %e = tensor.empty(%size) : tensor<?x8x4xf32>
    return %e : tensor<?x8x4xf32>
  }
  func.func @chunks_into_zeros(%x: tensor<?x8x4xf32>) -> tensor<?x8x4xf32> {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<f32>
    %b = tensor.dim %x, %c0 : tensor<?x8x4xf32>
    %e = tensor.empty(%b) : tensor<?x8x4xf32>
    %zeros = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%zero : tensor<f32>) outs(%e : tensor<?x8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x8x4xf32>
    %first = tensor.extract_slice %x[0, 0, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x8x4xf32> to tensor<?x4x4xf32>
    %second = tensor.extract_slice %x[0, 4, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x8x4xf32> to tensor<?x4x4xf32>
    %w0 = tensor.insert_slice %first into %zeros[0, 0, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x4x4xf32> into tensor<?x8x4xf32>
    %w1 = tensor.insert_slice %second into %w0[0, 4, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x4x4xf32> into tensor<?x8x4xf32>
    return %w1 : tensor<?x8x4xf32>
  }
  func.func @keys_cut_to_the_queries_batch(%q: tensor<?x8x4xf32>, %k: tensor<?x8x4xf32>) -> tensor<?x8x4xf32> {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %b = tensor.dim %q, %c0 : tensor<?x8x4xf32>
    %buf0 = tensor.empty(%b) : tensor<?x8x4xf32>
    %r = scf.for %i = %c0 to %c8 step %c4 iter_args(%buf = %buf0) -> (tensor<?x8x4xf32>) {
      %chunk = tensor.extract_slice %k[0, %i, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x8x4xf32> to tensor<?x4x4xf32>
      %next = tensor.insert_slice %chunk into %buf[0, %i, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x4x4xf32> into tensor<?x8x4xf32>
      scf.yield %next : tensor<?x8x4xf32>
    }
    return %r : tensor<?x8x4xf32>
  }
  func.func @view_of_two_run_time_sizes(%x: tensor<?x2x?x4xf32>) -> tensor<?x?x4xf32> {
    %v = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<?x2x?x4xf32> into tensor<?x?x4xf32>
    return %v : tensor<?x?x4xf32>
  }
}
