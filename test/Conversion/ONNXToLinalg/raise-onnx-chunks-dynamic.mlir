// A graph with a run-time batch: its nodes have no static types, so the
// canonical route reads few of them; it reads a copy whose batch is fixed,
// finds the layer there (its weight broadcast to the batch by an Expand to a
// shape read at run time) and records it on the graph, which stays as it
// is: what the layer computes at one batch size is no rewrite for all.
// RUN: ttt-opt %s --ttt-raise-onnx-chunks | FileCheck %s

// CHECK-LABEL: onnx.graph @dynamic_batch(
// CHECK-SAME: tensor<?x6x4xf32>
// CHECK-SAME: ttt.found_by_chunk_route = ["unrolled chunk loop (3 chunks of 2 tokens), fast weights 'w': left as it was: linear attention where its run-time sizes are fixed, but the canonical route rewrites layers of static shape only (found with the run-time sizes fixed: q[0] = 2, k[0] = 2, v[0] = 2)"]
// CHECK-NOT: ttt.kvb_layer
// CHECK: onnx.node "Concat"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @dynamic_batch(%q: tensor<?x6x4xf32> {onnx.name = "q"}, %k: tensor<?x6x4xf32> {onnx.name = "k"}, %v: tensor<?x6x4xf32> {onnx.name = "v"}) -> (tensor<?x6x4xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<[[[0.5, -0.25, 0.125, 1.0], [0.0, 0.75, -1.0, 0.25], [1.5, 0.0, 0.5, -0.5], [-0.125, 0.25, 0.0, 1.0]]]> : tensor<1x4x4xf32>
    %sq = onnx.node "Shape"(%q) attrs {end = 1 : i64, start = 0 : i64} {outputs = ["sq"]} : (tensor<?x6x4xf32>) -> tensor<1xi64>
    %c44 = onnx.node "Constant"() attrs {value = dense<4> : tensor<2xi64>} {outputs = ["c44"]} : () -> tensor<2xi64>
    %shp = onnx.node "Concat"(%sq, %c44) attrs {axis = 0 : i64} {outputs = ["shp"]} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
    %wb = onnx.node "Expand"(%w, %shp) {outputs = ["wb"]} : (tensor<1x4x4xf32>, tensor<3xi64>) -> tensor<?x4x4xf32>
    %ax = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %c0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c0"]} : () -> tensor<1xi64>
    %c1 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c1"]} : () -> tensor<1xi64>
    %c2 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c2"]} : () -> tensor<1xi64>
    %c3 = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>} {outputs = ["c3"]} : () -> tensor<1xi64>
    %q0 = onnx.node "Slice"(%q, %c0, %c1, %ax) {outputs = ["q0"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %k0 = onnx.node "Slice"(%k, %c0, %c1, %ax) {outputs = ["k0"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %v0 = onnx.node "Slice"(%v, %c0, %c1, %ax) {outputs = ["v0"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %o0 = onnx.node "MatMul"(%q0, %wb) {outputs = ["o0"]} : (tensor<?x2x4xf32>, tensor<?x4x4xf32>) -> tensor<?x2x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt0"]} : (tensor<?x2x4xf32>) -> tensor<?x4x2xf32>
    %g0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["g0"]} : (tensor<?x4x2xf32>, tensor<?x2x4xf32>) -> tensor<?x4x4xf32>
    %w1 = onnx.node "Add"(%wb, %g0) {outputs = ["w1"]} : (tensor<?x4x4xf32>, tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
    %q1 = onnx.node "Slice"(%q, %c1, %c2, %ax) {outputs = ["q1"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %k1 = onnx.node "Slice"(%k, %c1, %c2, %ax) {outputs = ["k1"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %v1 = onnx.node "Slice"(%v, %c1, %c2, %ax) {outputs = ["v1"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %o1 = onnx.node "MatMul"(%q1, %w1) {outputs = ["o1"]} : (tensor<?x2x4xf32>, tensor<?x4x4xf32>) -> tensor<?x2x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt1"]} : (tensor<?x2x4xf32>) -> tensor<?x4x2xf32>
    %g1 = onnx.node "MatMul"(%kt1, %v1) {outputs = ["g1"]} : (tensor<?x4x2xf32>, tensor<?x2x4xf32>) -> tensor<?x4x4xf32>
    %w2 = onnx.node "Add"(%w1, %g1) {outputs = ["w2"]} : (tensor<?x4x4xf32>, tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
    %q2 = onnx.node "Slice"(%q, %c2, %c3, %ax) {outputs = ["q2"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %k2 = onnx.node "Slice"(%k, %c2, %c3, %ax) {outputs = ["k2"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %v2 = onnx.node "Slice"(%v, %c2, %c3, %ax) {outputs = ["v2"]} : (tensor<?x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x4xf32>
    %o2 = onnx.node "MatMul"(%q2, %w2) {outputs = ["o2"]} : (tensor<?x2x4xf32>, tensor<?x4x4xf32>) -> tensor<?x2x4xf32>
    %o = onnx.node "Concat"(%o0, %o1, %o2) attrs {axis = 1 : i64} {outputs = ["o"]} : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x6x4xf32>
    onnx.yield %o : tensor<?x6x4xf32>
  }
}
