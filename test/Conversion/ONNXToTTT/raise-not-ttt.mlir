// The raise tells gradient steps on a fast weight from other recurrences: a
// state is a fast weight only if each chunk adds a term to it.
// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file -verify-diagnostics | FileCheck %s
// RUN: ttt-opt %s --ttt-raise-onnx=raise-all --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=ALL

// A selective scan (gated linear attention): S_t = a_t S_{t-1} + k_t^T v_t
// with a decay a_t computed from the keys. The state is scaled before the
// term is added, so it is no TTT layer; the graph is left as it was, and
// raise-all (what --ttt-explain runs) names the candidate and the reason.

// CHECK-LABEL: onnx.graph @gated_scan(
// CHECK: %[[D1:.+]] = onnx.node "Mul"(%{{.+}}, %[[S1:.+]]) {outputs = ["d1"]}
// CHECK: %[[S2:.+]] = onnx.node "Add"(%[[D1]], %{{.+}}) {outputs = ["S2"]}
// CHECK: onnx.node "Concat"
// CHECK-NOT: ttt.kvb_layer
// ALL: {{.*}}remark: no TTT layer found (19 nodes read)
// ALL: {{.*}}remark: not a TTT layer: its carried state 'S1' is not updated by adding a term to it (an ordinary recurrence, not gradient steps on fast weights)
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  // expected-remark @+1 {{no TTT layer found (19 nodes read)}}
  onnx.graph @gated_scan(%q: tensor<1x2x2x4xf32> {onnx.name = "q"}, %k: tensor<1x2x2x4xf32> {onnx.name = "k"}, %v: tensor<1x2x2x4xf32> {onnx.name = "v"}) -> (tensor<1x2x2x4xf32> {onnx.name = "y"}) {
    %S0 = onnx.initializer "S0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %wa = onnx.initializer "wa" dense<1.000000e-01> : tensor<2x4x1xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<1> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>)
    %za0 = onnx.node "MatMul"(%k0, %wa) {outputs = ["za0"]} : (tensor<1x2x1x4xf32>, tensor<2x4x1xf32>) -> tensor<1x2x1x1xf32>
    %a0 = onnx.node "Sigmoid"(%za0) {outputs = ["a0"]} : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
    %d0 = onnx.node "Mul"(%a0, %S0) {outputs = ["d0"]} : (tensor<1x2x1x1xf32>, tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x1x4xf32>) -> tensor<1x2x4x1xf32>
    %kv0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["kv0"]} : (tensor<1x2x4x1xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
    %S1 = onnx.node "Add"(%d0, %kv0) {outputs = ["S1"]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y0 = onnx.node "MatMul"(%q0, %S1) {outputs = ["y0"]} : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
    %za1 = onnx.node "MatMul"(%k1, %wa) {outputs = ["za1"]} : (tensor<1x2x1x4xf32>, tensor<2x4x1xf32>) -> tensor<1x2x1x1xf32>
    %a1 = onnx.node "Sigmoid"(%za1) {outputs = ["a1"]} : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
    %d1 = onnx.node "Mul"(%a1, %S1) {outputs = ["d1"]} : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x1x4xf32>) -> tensor<1x2x4x1xf32>
    %kv1 = onnx.node "MatMul"(%kt1, %v1) {outputs = ["kv1"]} : (tensor<1x2x4x1xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
    %S2 = onnx.node "Add"(%d1, %kv1) {outputs = ["S2"]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y1 = onnx.node "MatMul"(%q1, %S2) {outputs = ["y1"]} : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x2x4xf32>
    onnx.yield %y : tensor<1x2x2x4xf32>
  }
}


// -----

// The same scan without the decay, S_t = S_{t-1} + k_t^T v_t, is a dot-loss
// fast-weight layer (linear attention) and is raised.

// CHECK-LABEL: onnx.graph @linear_attention(
// CHECK: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @linear_attention(%q: tensor<1x2x2x4xf32> {onnx.name = "q"}, %k: tensor<1x2x2x4xf32> {onnx.name = "k"}, %v: tensor<1x2x2x4xf32> {onnx.name = "v"}) -> (tensor<1x2x2x4xf32> {onnx.name = "y"}) {
    %S0 = onnx.initializer "S0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<1> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>)
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x1x4xf32>) -> tensor<1x2x4x1xf32>
    %kv0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["kv0"]} : (tensor<1x2x4x1xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
    %S1 = onnx.node "Add"(%S0, %kv0) {outputs = ["S1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y0 = onnx.node "MatMul"(%q0, %S1) {outputs = ["y0"]} : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x1x4xf32>) -> tensor<1x2x4x1xf32>
    %kv1 = onnx.node "MatMul"(%kt1, %v1) {outputs = ["kv1"]} : (tensor<1x2x4x1xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
    %S2 = onnx.node "Add"(%S1, %kv1) {outputs = ["S2"]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y1 = onnx.node "MatMul"(%q1, %S2) {outputs = ["y1"]} : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 1 tokens), fast weights 'S0': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x2x4xf32>
    onnx.yield %y : tensor<1x2x2x4xf32>
  }
}
