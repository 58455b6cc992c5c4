// The ONNX front end of the canonical route: the graph read as linalg, its
// unrolled chunk steps rerolled and raised, only what changed written back.
// RUN: ttt-opt %s --split-input-file --ttt-raise-onnx-chunks=explain -verify-diagnostics | FileCheck %s

// Three chunks of two tokens of a linear fast weight (dot loss), the last
// update dead, as a tracer unrolls it. The steps become one ttt.kvb_layer on
// the whole sequences whose output takes the Concat's place, marked as
// rewritten and named as the Concat's output was; the chunk steps' nodes go.
// CHECK-LABEL: onnx.graph @unrolled_dot(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x6x4xf32> {{.*}}, %[[K:[^:]+]]: tensor<1x6x4xf32> {{.*}}, %[[V:[^:]+]]: tensor<1x6x4xf32>
// CHECK: %[[W:.+]] = onnx.initializer "w"
// CHECK: %[[Q2D:.+]] = onnx.node "Reshape"(%[[Q]], %{{.+}}) : (tensor<1x6x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
// CHECK: %[[Q4D:.+]] = onnx.node "Reshape"(%[[Q2D]], %{{.+}}) : (tensor<6x4xf32>, tensor<4xi64>) -> tensor<1x1x6x4xf32>
// CHECK: %[[W2D:.+]] = onnx.node "Reshape"(%[[W]], %{{.+}}) : (tensor<1x4x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
// CHECK: %[[W4D:.+]] = onnx.node "Reshape"(%[[W2D]], %{{.+}}) : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<1x1x4x4xf32>
// CHECK: %[[Y:.+]] = ttt.kvb_layer %[[Q4D]], %{{.+}}, %{{.+}} : {{.*}} weights(%[[W4D]] : tensor<1x1x4x4xf32>)
// CHECK-SAME: loss = #ttt.loss<kind = dot>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 2>
// CHECK: %[[Y2D:.+]] = onnx.node "Reshape"(%[[Y]], %{{.+}}) : (tensor<1x1x6x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
// CHECK: %[[Y3D:.+]] = onnx.node "Reshape"(%[[Y2D]], %{{.+}}) : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<1x6x4xf32>
// CHECK: %[[OUT:.+]] = onnx.node "Identity"(%[[Y3D]]) {doc_string = "ttt: parallel linear-attention form of a TTT layer, read through ttt.chunk_loop", outputs = ["o"]}
// CHECK-NOT: "MatMul"
// CHECK-NOT: "Slice"
// CHECK: onnx.yield %[[OUT]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  // The last chunk's keys and values are dead; the analysis does not read
  // them.
  // expected-remark@+2 {{ttt-raise-onnx-chunks: 22 nodes read as linalg}}
  // expected-remark@+1 {{ttt-raise-chunk-loops: a linear fast weight (dot loss, chunks of 2, apply_then_update)}}
  onnx.graph @unrolled_dot(%q: tensor<1x6x4xf32> {onnx.name = "q"}, %k: tensor<1x6x4xf32> {onnx.name = "k"}, %v: tensor<1x6x4xf32> {onnx.name = "v"}) -> (tensor<1x6x4xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<[[[0.5, -0.25, 0.125, 1.0], [0.0, 0.75, -1.0, 0.25], [1.5, 0.0, 0.5, -0.5], [-0.125, 0.25, 0.0, 1.0]]]> : tensor<1x4x4xf32>
    %ax = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %c0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c0"]} : () -> tensor<1xi64>
    %c1 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c1"]} : () -> tensor<1xi64>
    %c2 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c2"]} : () -> tensor<1xi64>
    %c3 = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>} {outputs = ["c3"]} : () -> tensor<1xi64>
    %q0 = onnx.node "Slice"(%q, %c0, %c1, %ax) {outputs = ["q0"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %k0 = onnx.node "Slice"(%k, %c0, %c1, %ax) {outputs = ["k0"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %v0 = onnx.node "Slice"(%v, %c0, %c1, %ax) {outputs = ["v0"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %o0 = onnx.node "MatMul"(%q0, %w) {outputs = ["o0"]} : (tensor<1x2x4xf32>, tensor<1x4x4xf32>) -> tensor<1x2x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt0"]} : (tensor<1x2x4xf32>) -> tensor<1x4x2xf32>
    %g0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["g0"]} : (tensor<1x4x2xf32>, tensor<1x2x4xf32>) -> tensor<1x4x4xf32>
    %w1 = onnx.node "Add"(%w, %g0) {outputs = ["w1"]} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %q1 = onnx.node "Slice"(%q, %c1, %c2, %ax) {outputs = ["q1"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %k1 = onnx.node "Slice"(%k, %c1, %c2, %ax) {outputs = ["k1"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %v1 = onnx.node "Slice"(%v, %c1, %c2, %ax) {outputs = ["v1"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %o1 = onnx.node "MatMul"(%q1, %w1) {outputs = ["o1"]} : (tensor<1x2x4xf32>, tensor<1x4x4xf32>) -> tensor<1x2x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt1"]} : (tensor<1x2x4xf32>) -> tensor<1x4x2xf32>
    %g1 = onnx.node "MatMul"(%kt1, %v1) {outputs = ["g1"]} : (tensor<1x4x2xf32>, tensor<1x2x4xf32>) -> tensor<1x4x4xf32>
    %w2 = onnx.node "Add"(%w1, %g1) {outputs = ["w2"]} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %q2 = onnx.node "Slice"(%q, %c2, %c3, %ax) {outputs = ["q2"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %k2 = onnx.node "Slice"(%k, %c2, %c3, %ax) {outputs = ["k2"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %v2 = onnx.node "Slice"(%v, %c2, %c3, %ax) {outputs = ["v2"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x4xf32>
    %o2 = onnx.node "MatMul"(%q2, %w2) {outputs = ["o2"]} : (tensor<1x2x4xf32>, tensor<1x4x4xf32>) -> tensor<1x2x4xf32>
    // expected-remark@+1 {{TTT layer: unrolled chunk loop (3 chunks of 2 tokens), fast weights 'w': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %o = onnx.node "Concat"(%o0, %o1, %o2) attrs {axis = 1 : i64} {outputs = ["o"]} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x6x4xf32>
    onnx.yield %o : tensor<1x6x4xf32>
  }
}

// -----

// Nodes no handler takes are left out of the analysis, their results read
// as inputs; the graph stays as it is.
// CHECK-LABEL: onnx.graph @left_out(
// CHECK: onnx.node "Scale"
// CHECK: onnx.node "Relu"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  // expected-remark@+3 {{ttt-raise-onnx-chunks: 1 nodes read as linalg; 1 left out}}
  // expected-remark@+2 {{ttt-reroll-chunks: no chunk loop rerolled: no tensor is cut into three or more consecutive windows}}
  // expected-note@+2 {{'Scale' left out: its domain 'com.example' has no handlers}}
  onnx.graph @left_out(%x: tensor<2x4xf32> {onnx.name = "x"}) -> (tensor<2x4xf32> {onnx.name = "y"}) {
    %s = onnx.node "Scale"(%x) domain "com.example" attrs {factor = 2.0 : f32} {outputs = ["s"]} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %y = onnx.node "Relu"(%s) {outputs = ["y"]} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.yield %y : tensor<2x4xf32>
  }
}

// -----

// Window bounds computed from the input's shape at run time (as
// `torch.onnx.export(dynamo=False)` writes `x[:, i*c:(i+1)*c]`), and the
// windows' types unknown: the shape arithmetic is folded first, on a copy
// that is kept because the layer is rewritten.
// CHECK-LABEL: onnx.graph @shape_arithmetic(
// CHECK: onnx.node "Identity"({{.+}}) {doc_string = "ttt: parallel linear-attention form of a TTT layer, read through ttt.chunk_loop", outputs = ["o"]}
// CHECK-NOT: "Shape"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  // expected-remark@+2 {{ttt-raise-onnx-chunks: 22 nodes read as linalg}}
  // expected-remark@+1 {{ttt-raise-chunk-loops: a linear fast weight (dot loss, chunks of 2, apply_then_update)}}
  onnx.graph @shape_arithmetic(%q: tensor<1x6x4xf32> {onnx.name = "q"}, %k: tensor<1x6x4xf32> {onnx.name = "k"}, %v: tensor<1x6x4xf32> {onnx.name = "v"}) -> (tensor<1x6x4xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<[[[0.5, -0.25, 0.125, 1.0], [0.0, 0.75, -1.0, 0.25], [1.5, 0.0, 0.5, -0.5], [-0.125, 0.25, 0.0, 1.0]]]> : tensor<1x4x4xf32>
    %shape = onnx.node "Shape"(%q) {outputs = ["shape"]} : (tensor<1x6x4xf32>) -> tensor<3xi64>
    %i1 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["i1"]} : () -> tensor<1xi64>
    %len = onnx.node "Gather"(%shape, %i1) attrs {axis = 0 : i64} {outputs = ["len"]} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
    %three = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>} {outputs = ["three"]} : () -> tensor<1xi64>
    %c = onnx.node "Div"(%len, %three) {outputs = ["c"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %c0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c0"]} : () -> tensor<1xi64>
    %two = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["two"]} : () -> tensor<1xi64>
    %c2 = onnx.node "Mul"(%c, %two) {outputs = ["c2"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %q0 = onnx.node "Slice"(%q, %c0, %c, %i1) {outputs = ["q0"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %k0 = onnx.node "Slice"(%k, %c0, %c, %i1) {outputs = ["k0"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %v0 = onnx.node "Slice"(%v, %c0, %c, %i1) {outputs = ["v0"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %o0 = onnx.node "MatMul"(%q0, %w) {outputs = ["o0"]} : (tensor<1x?x4xf32>, tensor<1x4x4xf32>) -> tensor<1x?x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt0"]} : (tensor<1x?x4xf32>) -> tensor<1x4x?xf32>
    %g0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["g0"]} : (tensor<1x4x?xf32>, tensor<1x?x4xf32>) -> tensor<1x4x4xf32>
    %w1 = onnx.node "Add"(%w, %g0) {outputs = ["w1"]} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %q1 = onnx.node "Slice"(%q, %c, %c2, %i1) {outputs = ["q1"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %k1 = onnx.node "Slice"(%k, %c, %c2, %i1) {outputs = ["k1"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %v1 = onnx.node "Slice"(%v, %c, %c2, %i1) {outputs = ["v1"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %o1 = onnx.node "MatMul"(%q1, %w1) {outputs = ["o1"]} : (tensor<1x?x4xf32>, tensor<1x4x4xf32>) -> tensor<1x?x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt1"]} : (tensor<1x?x4xf32>) -> tensor<1x4x?xf32>
    %g1 = onnx.node "MatMul"(%kt1, %v1) {outputs = ["g1"]} : (tensor<1x4x?xf32>, tensor<1x?x4xf32>) -> tensor<1x4x4xf32>
    %w2 = onnx.node "Add"(%w1, %g1) {outputs = ["w2"]} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %q2 = onnx.node "Slice"(%q, %c2, %len, %i1) {outputs = ["q2"]} : (tensor<1x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x4xf32>
    %o2 = onnx.node "MatMul"(%q2, %w2) {outputs = ["o2"]} : (tensor<1x?x4xf32>, tensor<1x4x4xf32>) -> tensor<1x?x4xf32>
    // expected-remark@+1 {{TTT layer: unrolled chunk loop (3 chunks of 2 tokens), fast weights 'w': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %o = onnx.node "Concat"(%o0, %o1, %o2) attrs {axis = 1 : i64} {outputs = ["o"]} : (tensor<1x?x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x6x4xf32>
    onnx.yield %o : tensor<1x6x4xf32>
  }
}

// -----

// The weight broadcast to the batch (an Expand to a shape read from the
// queries, folded): chunk 0 reads it through the broadcast, the later chunks
// read the carried state. Chunk 0 is the general step from that initial
// state, so the loop starts at chunk 0, its initial state written back as
// the Expand of the stored weight.
// CHECK-LABEL: onnx.graph @weight_broadcast_to_the_batch(
// CHECK: %[[W:.+]] = onnx.initializer "w"
// CHECK: onnx.node "Expand"(%[[W]], %{{.+}}) : (tensor<1x4x4xf32>, tensor<3xi64>) -> tensor<2x4x4xf32>
// CHECK: ttt.kvb_layer
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 2>
// CHECK-NOT: "Slice"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  // expected-remark@+2 {{ttt-raise-onnx-chunks: 24 nodes read as linalg}}
  // expected-remark@+1 {{ttt-raise-chunk-loops: a linear fast weight (dot loss, chunks of 2, apply_then_update)}}
  onnx.graph @weight_broadcast_to_the_batch(%q: tensor<2x6x4xf32> {onnx.name = "q"}, %k: tensor<2x6x4xf32> {onnx.name = "k"}, %v: tensor<2x6x4xf32> {onnx.name = "v"}) -> (tensor<2x6x4xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<[[[0.5, -0.25, 0.125, 1.0], [0.0, 0.75, -1.0, 0.25], [1.5, 0.0, 0.5, -0.5], [-0.125, 0.25, 0.0, 1.0]]]> : tensor<1x4x4xf32>
    %sq = onnx.node "Shape"(%q) attrs {end = 1 : i64, start = 0 : i64} {outputs = ["sq"]} : (tensor<2x6x4xf32>) -> tensor<1xi64>
    %c44 = onnx.node "Constant"() attrs {value = dense<4> : tensor<2xi64>} {outputs = ["c44"]} : () -> tensor<2xi64>
    %shp = onnx.node "Concat"(%sq, %c44) attrs {axis = 0 : i64} {outputs = ["shp"]} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
    %wb = onnx.node "Expand"(%w, %shp) {outputs = ["wb"]} : (tensor<1x4x4xf32>, tensor<3xi64>) -> tensor<2x4x4xf32>
    %ax = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %c0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c0"]} : () -> tensor<1xi64>
    %c1 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c1"]} : () -> tensor<1xi64>
    %c2 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c2"]} : () -> tensor<1xi64>
    %c3 = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>} {outputs = ["c3"]} : () -> tensor<1xi64>
    %q0 = onnx.node "Slice"(%q, %c0, %c1, %ax) {outputs = ["q0"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %k0 = onnx.node "Slice"(%k, %c0, %c1, %ax) {outputs = ["k0"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %v0 = onnx.node "Slice"(%v, %c0, %c1, %ax) {outputs = ["v0"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %o0 = onnx.node "MatMul"(%q0, %wb) {outputs = ["o0"]} : (tensor<2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<2x2x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt0"]} : (tensor<2x2x4xf32>) -> tensor<2x4x2xf32>
    %g0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["g0"]} : (tensor<2x4x2xf32>, tensor<2x2x4xf32>) -> tensor<2x4x4xf32>
    %w1 = onnx.node "Add"(%wb, %g0) {outputs = ["w1"]} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %q1 = onnx.node "Slice"(%q, %c1, %c2, %ax) {outputs = ["q1"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %k1 = onnx.node "Slice"(%k, %c1, %c2, %ax) {outputs = ["k1"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %v1 = onnx.node "Slice"(%v, %c1, %c2, %ax) {outputs = ["v1"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %o1 = onnx.node "MatMul"(%q1, %w1) {outputs = ["o1"]} : (tensor<2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<2x2x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt1"]} : (tensor<2x2x4xf32>) -> tensor<2x4x2xf32>
    %g1 = onnx.node "MatMul"(%kt1, %v1) {outputs = ["g1"]} : (tensor<2x4x2xf32>, tensor<2x2x4xf32>) -> tensor<2x4x4xf32>
    %w2 = onnx.node "Add"(%w1, %g1) {outputs = ["w2"]} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %q2 = onnx.node "Slice"(%q, %c2, %c3, %ax) {outputs = ["q2"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %k2 = onnx.node "Slice"(%k, %c2, %c3, %ax) {outputs = ["k2"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %v2 = onnx.node "Slice"(%v, %c2, %c3, %ax) {outputs = ["v2"]} : (tensor<2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2x4xf32>
    %o2 = onnx.node "MatMul"(%q2, %w2) {outputs = ["o2"]} : (tensor<2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<2x2x4xf32>
    // expected-remark@+1 {{TTT layer: unrolled chunk loop (3 chunks of 2 tokens), fast weights 'w': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %o = onnx.node "Concat"(%o0, %o1, %o2) attrs {axis = 1 : i64} {outputs = ["o"]} : (tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x6x4xf32>
    onnx.yield %o : tensor<2x6x4xf32>
  }
}
