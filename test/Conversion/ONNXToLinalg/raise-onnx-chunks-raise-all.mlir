// ttt-raise-onnx-chunks{raise-all}: every layer the route reads is written
// back as a ttt.kvb_layer, whether or not the graph can keep it (ttt-explain
// and the API's reports read it). A layer of a model importing opset 12 has
// no ONNX parallel form (it needs opset 13); by default it stays as it is.
// RUN: ttt-opt %s --pass-pipeline='builtin.module(ttt-raise-onnx-chunks{raise-all=true})' 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: ttt-opt %s --ttt-raise-onnx-chunks 2>&1 | FileCheck %s --check-prefix=DEFAULT

// ALL: remark: TTT layer: unrolled chunk loop (3 chunks of 2 tokens), fast weights 'w': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// ALL-LABEL: onnx.graph @older_opset(
// ALL: ttt.kvb_layer
// ALL-SAME: schedule = #ttt.schedule<kind = chunked, size = 2>
// ALL-NOT: "MatMul"
// ALL: onnx.yield

// DEFAULT-NOT: remark
// DEFAULT-LABEL: onnx.graph @older_opset(
// DEFAULT-NOT: ttt.kvb_layer
// DEFAULT: onnx.node "Concat"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 12>]} {
  onnx.graph @older_opset(%q: tensor<1x6x4xf32> {onnx.name = "q"}, %k: tensor<1x6x4xf32> {onnx.name = "k"}, %v: tensor<1x6x4xf32> {onnx.name = "v"}) -> (tensor<1x6x4xf32> {onnx.name = "o"}) {
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
    %o = onnx.node "Concat"(%o0, %o1, %o2) attrs {axis = 1 : i64} {outputs = ["o"]} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x6x4xf32>
    onnx.yield %o : tensor<1x6x4xf32>
  }
}
