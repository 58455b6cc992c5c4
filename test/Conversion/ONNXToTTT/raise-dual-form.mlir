// A chunk output that reads its own chunk's keys (TTT-Linear's dual form) is
// read in terms of the chunk-start weights: the fast weight is W, the
// chunk's tril(Q K^T) and gradient are data of the step, not weights. Its
// causal term must compute the update's gradient token by token, scaled as
// the update: then the layer is raised with the causal order.
// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file -verify-diagnostics | FileCheck %s
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/ttt_linear.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=LINEAR
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/ttt_linear.traced.onnx --ttt-raise-onnx=raise-all 2>/dev/null | FileCheck %s --check-prefix=LINEAR-ALL
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/ttt_mlp.scripted.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=MLP
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/ttt_mlp.traced.onnx --ttt-raise-onnx=raise-all 2>&1 | FileCheck %s --check-prefix=MLP-TRACED

// The dot loss, two chunks of two tokens: token i of chunk c reads
// W_c + sum_{j <= i} k_j^T v_j, written o_c = q_c W_c + tril(q_c k_c^T) v_c,
// with W_{c+1} = W_c + k_c^T v_c. Linear attention with the intra-chunk term.
// CHECK-LABEL: onnx.graph @dual_dot(
// CHECK: ttt.kvb_layer %q, %k, %v
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 2, order = causal>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @dual_dot(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a0 = onnx.node "MatMul"(%q0, %kt0) {outputs = ["a0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m0 = onnx.node "Trilu"(%a0) attrs {upper = 0 : i64} {outputs = ["m0"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c0 = onnx.node "MatMul"(%m0, %v0) {outputs = ["c0"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["p0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y0 = onnx.node "Add"(%p0, %c0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %u0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a1 = onnx.node "MatMul"(%q1, %kt1) {outputs = ["a1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m1 = onnx.node "Trilu"(%a1) attrs {upper = 0 : i64} {outputs = ["m1"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c1 = onnx.node "MatMul"(%m1, %v1) {outputs = ["c1"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["p1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y1 = onnx.node "Add"(%p1, %c1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// The MSE loss 1/2 |k W - v|^2 in the dual form: o_c = q_c W_c -
// tril(q_c k_c^T) g_c with g_c = k_c W_c - v_c, W_{c+1} = W_c - k_c^T g_c.
// Raised to the causal order, and left as it was: inside the chunk the
// gradient reads the state token by token.
// CHECK-LABEL: onnx.graph @dual_mse(
// CHECK: %[[W1:.+]] = onnx.node "Sub"(%[[W0:.+]], %{{.+}}) {outputs = ["W1"]}
// CHECK: onnx.node "Trilu"
// CHECK: onnx.node "Concat"
// CHECK-NOT: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @dual_mse(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %z0 = onnx.node "MatMul"(%k0, %W0) {outputs = ["z0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %g0 = onnx.node "Sub"(%z0, %v0) {outputs = ["g0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a0 = onnx.node "MatMul"(%q0, %kt0) {outputs = ["a0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m0 = onnx.node "Trilu"(%a0) attrs {upper = 0 : i64} {outputs = ["m0"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c0 = onnx.node "MatMul"(%m0, %g0) {outputs = ["c0"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["p0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y0 = onnx.node "Sub"(%p0, %c0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %u0 = onnx.node "MatMul"(%kt0, %g0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Sub"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %z1 = onnx.node "MatMul"(%k1, %W1) {outputs = ["z1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %g1 = onnx.node "Sub"(%z1, %v1) {outputs = ["g1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a1 = onnx.node "MatMul"(%q1, %kt1) {outputs = ["a1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m1 = onnx.node "Trilu"(%a1) attrs {upper = 0 : i64} {outputs = ["m1"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c1 = onnx.node "MatMul"(%m1, %g1) {outputs = ["c1"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["p1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y1 = onnx.node "Sub"(%p1, %c1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': left as it was: exact lowering: affine scan over chunk states; proven: output layer W is linear and bias-free; the feature map is the identity (only the output layer trains); the state update is affine in the state (MSE gradient frozen per chunk); not rewritten: the causal order of an affine (MSE) layer reads state-dependent values inside the chunk}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// The upper triangle: token i would read the steps of the tokens after it.
// Not the causal order; left with the reason.
// CHECK-LABEL: onnx.graph @anti_causal(
// CHECK-NOT: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @anti_causal(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a0 = onnx.node "MatMul"(%q0, %kt0) {outputs = ["a0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m0 = onnx.node "Trilu"(%a0) attrs {upper = 1 : i64} {outputs = ["m0"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c0 = onnx.node "MatMul"(%m0, %v0) {outputs = ["c0"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["p0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y0 = onnx.node "Add"(%p0, %c0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %u0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a1 = onnx.node "MatMul"(%q1, %kt1) {outputs = ["a1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m1 = onnx.node "Trilu"(%a1) attrs {upper = 1 : i64} {outputs = ["m1"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c1 = onnx.node "MatMul"(%m1, %v1) {outputs = ["c1"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["p1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y1 = onnx.node "Add"(%p1, %c1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': left as it was: no ttt.kvb_layer form: the chunk's causal term is not Trilu(phi(q) phi(k)^T) times the values}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// The second chunk's causal term scaled by 0.5 while its update takes whole
// steps: token i would not read the steps its chunk's update adds.
// CHECK-LABEL: onnx.graph @causal_half_step(
// CHECK-NOT: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @causal_half_step(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %f = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["f"]} : () -> tensor<f32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a0 = onnx.node "MatMul"(%q0, %kt0) {outputs = ["a0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m0 = onnx.node "Trilu"(%a0) attrs {upper = 0 : i64} {outputs = ["m0"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c0 = onnx.node "MatMul"(%m0, %v0) {outputs = ["c0"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["p0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y0 = onnx.node "Add"(%p0, %c0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %u0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a1 = onnx.node "MatMul"(%q1, %kt1) {outputs = ["a1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m1 = onnx.node "Trilu"(%a1) attrs {upper = 0 : i64} {outputs = ["m1"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c1 = onnx.node "MatMul"(%m1, %v1) {outputs = ["c1"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %cs1 = onnx.node "Mul"(%c1, %f) {outputs = ["cs1"]} : (tensor<1x2x2x4xf32>, tensor<f32>) -> tensor<1x2x2x4xf32>
    %p1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["p1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y1 = onnx.node "Add"(%p1, %cs1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': left as it was: no ttt.kvb_layer form: its chunks scale their updates by different constants}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// ttt-lm-pytorch's spelling of the rates: `(eta * tril(Q K^T)) V`, the
// rates eta_j = lr_j scaling the score matrix's columns instead of the keys;
// the update scales the keys. The same layer: raised.
// CHECK-LABEL: onnx.graph @eta_times_attn(
// CHECK: ttt.kvb_layer %q, %k, %v
// CHECK-SAME: lr(
// CHECK-SAME: order = causal
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @eta_times_attn(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}, %lr: tensor<1x2x4x1xf32> {onnx.name = "lr"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %lr0, %lr1 = onnx.node "Split"(%lr, %sizes) attrs {axis = 2 : i64} {outputs = ["lr0", "lr1"]} : (tensor<1x2x4x1xf32>, tensor<2xi64>) -> (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>)
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a0 = onnx.node "MatMul"(%q0, %kt0) {outputs = ["a0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m0 = onnx.node "Trilu"(%a0) attrs {upper = 0 : i64} {outputs = ["m0"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %eta0 = onnx.node "Transpose"(%lr0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["eta0"]} : (tensor<1x2x2x1xf32>) -> tensor<1x2x1x2xf32>
    %e0 = onnx.node "Mul"(%eta0, %m0) {outputs = ["e0"]} : (tensor<1x2x1x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c0 = onnx.node "MatMul"(%e0, %v0) {outputs = ["c0"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["p0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y0 = onnx.node "Add"(%p0, %c0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %ke0 = onnx.node "Mul"(%k0, %lr0) {outputs = ["ke0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x4xf32>
    %ket0 = onnx.node "Transpose"(%ke0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["ket0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %u0 = onnx.node "MatMul"(%ket0, %v0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %kt1 = onnx.node "Transpose"(%k1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt1"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %a1 = onnx.node "MatMul"(%q1, %kt1) {outputs = ["a1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
    %m1 = onnx.node "Trilu"(%a1) attrs {upper = 0 : i64} {outputs = ["m1"]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %eta1 = onnx.node "Transpose"(%lr1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["eta1"]} : (tensor<1x2x2x1xf32>) -> tensor<1x2x1x2xf32>
    %e1 = onnx.node "Mul"(%eta1, %m1) {outputs = ["e1"]} : (tensor<1x2x1x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %c1 = onnx.node "MatMul"(%e1, %v1) {outputs = ["c1"]} : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    %p1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["p1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %y1 = onnx.node "Add"(%p1, %c1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// TTT-Linear (ttt-lm-pytorch's dual form, traced): the fast weights are W1
// and b1, the LayerNorm's weights are static, and nothing the chunk computes
// from its own keys is taken for a weight. Read as ttt.kvb_layer (the
// LayerNorm-MSE loss, the trained bias, token_eta, the causal order), it is
// not linear attention: left, with the analysis of its layer op.
// LINEAR: remark: {{.*}}ttt_linear.traced.onnx: node '/layer/Concat': TTT layer: unrolled chunk loop (5 chunks of 8 tokens), fast weights 'layer.W1', 'layer.b1'; static weights 'layer.ln_weight', '/layer/Clip_output_0', 'layer.ln_bias': left as it was: its output depends non-linearly on the trained fast weights (through Sqrt node
// LINEAR-SAME: as a ttt.kvb_layer: exact lowering: chunk-sequential loop; proven: output layer W is linear with its bias as a constant feature
// LINEAR-SAME: blocked by: LayerNorm inside the loss makes the gradient non-linear in the state
// LINEAR-NOT: not a TTT layer

// With raise-all the layer op replaces the chunks: the values are v - k (the
// reconstruction target), the LayerNorm parameters [H, 1, D] become [H, D],
// token_eta is the clipped vector the chunks slice, and q is added after it.
// LINEAR-ALL-LABEL: onnx.graph @main_graph(
// LINEAR-ALL-SAME: %[[Q:[^:]+]]: tensor<1x2x40x16xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x2x40x16xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x2x40x16xf32> {onnx.name = "v"}, %[[LR:[^:]+]]: tensor<1x2x40x1xf32> {onnx.name = "lr"}
// LINEAR-ALL-DAG: %[[W:.+]] = onnx.initializer "layer.W1"
// LINEAR-ALL-DAG: %[[B:.+]] = onnx.initializer "layer.b1"
// LINEAR-ALL-DAG: %[[GAMMA0:.+]] = onnx.initializer "layer.ln_weight"
// LINEAR-ALL: %[[ETA:.+]] = onnx.node "Clip"
// LINEAR-ALL: %[[TARGET:.+]] = onnx.node "Sub"(%[[V]], %[[K]])
// LINEAR-ALL: %[[GAMMA:.+]] = onnx.node "Reshape"(%[[GAMMA0]], %{{.+}}) : (tensor<2x1x16xf32>, tensor<2xi64>) -> tensor<2x16xf32>
// LINEAR-ALL: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[TARGET]] : {{.*}} weights(%[[W]], %[[B]] : tensor<2x16x16xf32>, tensor<2x1x16xf32>) lr(%[[LR]] : tensor<1x2x40x1xf32>) token_eta(%[[ETA]] : tensor<8xf32>) layernorm(%[[GAMMA]], %{{.+}} : tensor<2x16xf32>, tensor<2x16xf32>) model = #ttt.model<kind = linear, trained = [0, 1], bias = true> loss = #ttt.loss<kind = layernorm_mse, eps = {{.*}}> update = #ttt.update<> schedule = #ttt.schedule<kind = chunked, size = 8, order = causal>
// LINEAR-ALL: %[[SUM:.+]] = onnx.node "Add"(%[[Q]], %[[O]])
// LINEAR-ALL: onnx.node "Identity"(%[[SUM]])

// TTT-MLP in an ONNX Loop: four carried weights (W1, b1, W2, b2), read from
// the Loop's body (its bounds proven to cut [i C, min((i + 1) C, T)) and
// token_eta[:n] to each chunk's length), left with its layer op's analysis.
// MLP: remark: {{.*}}ttt_mlp.scripted.onnx: node '/layer/ConcatFromSequence': TTT layer: ONNX Loop over chunks (chunks of 8 tokens), fast weights 'onnx::Expand_{{[0-9]+}}', 'onnx::Expand_{{[0-9]+}}', 'onnx::Expand_{{[0-9]+}}' and 1 more; static weights
// MLP-SAME: through Tanh node
// MLP-SAME: as a ttt.kvb_layer: exact lowering: chunk-sequential loop; proven: output layer W1 is linear with its bias as a constant feature

// Traced, its two layers are read: gelu and its derivative by the function
// they compute, the first layer's gradient carried back through W2^T.
// MLP-TRACED: remark: {{.*}}ttt_mlp.traced.onnx: node '/layer/Concat': TTT layer: unrolled chunk loop (5 chunks of 8 tokens)
// MLP-TRACED-SAME: raised to ttt.kvb_layer; exact lowering: chunk-sequential loop; proven: output layer W1 is linear with its bias as a constant feature
// MLP-TRACED-SAME: blocked by: W0, b0 are trained
// MLP-TRACED: ttt.kvb_layer {{.*}} model = #ttt.model<kind = mlp, trained = [0, 1, 2, 3], bias = true, activation = gelu_tanh> loss = #ttt.loss<kind = layernorm_mse, {{.*}}> schedule = #ttt.schedule<kind = chunked, size = 8, order = causal>
