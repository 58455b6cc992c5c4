// A per-token learning rate scales the keys of its own tokens, and a
// per-token momentum is averaged over them: an update that reads another
// chunk's rates or momentum coefficients is no step of ttt.kvb_layer, and is
// left with the reason.
// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file -verify-diagnostics | FileCheck %s

// Own rates: W_{c+1} = W_c + (k_c * lr_c)^T v_c, raised.
// CHECK-LABEL: onnx.graph @own_rates(
// CHECK: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @own_rates(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}, %lr: tensor<1x2x4x1xf32> {onnx.name = "lr"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %lr0, %lr1 = onnx.node "Split"(%lr, %sizes) attrs {axis = 2 : i64} {outputs = ["lr0", "lr1"]} : (tensor<1x2x4x1xf32>, tensor<2xi64>) -> (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>)
    %y0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %ke0 = onnx.node "Mul"(%k0, %lr0) {outputs = ["ke0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x4xf32>
    %kt0 = onnx.node "Transpose"(%ke0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %u0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// The first chunk's keys scaled by the second chunk's rates.
// CHECK-LABEL: onnx.graph @next_rates(
// CHECK-NOT: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @next_rates(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}, %lr: tensor<1x2x4x1xf32> {onnx.name = "lr"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %lr0, %lr1 = onnx.node "Split"(%lr, %sizes) attrs {axis = 2 : i64} {outputs = ["lr0", "lr1"]} : (tensor<1x2x4x1xf32>, tensor<2xi64>) -> (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>)
    %y0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %ke0 = onnx.node "Mul"(%k0, %lr1) {outputs = ["ke0"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x4xf32>
    %kt0 = onnx.node "Transpose"(%ke0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %u0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["u0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %u0) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': left as it was: no ttt.kvb_layer form: the update's keys and learning rates come from different chunks}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// Momentum averaged over the chunk's own tokens: m_1 = mean(mom_0) m_0 +
// k_0^T v_0 (m_0 = 0), W_1 = W_0 + m_1. Raised.
// CHECK-LABEL: onnx.graph @own_momentum(
// CHECK: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @own_momentum(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}, %mom: tensor<1x2x4xf32> {onnx.name = "mom"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %M0 = onnx.initializer "M0" dense<0.000000e+00> : tensor<1x2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %mom0, %mom1 = onnx.node "Split"(%mom, %sizes) attrs {axis = 2 : i64} {outputs = ["mom0", "mom1"]} : (tensor<1x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>)
    %y0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %g0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["g0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %mu0 = onnx.node "ReduceMean"(%mom0) attrs {axes = array<i64: -1>, keepdims = 1 : i64} {outputs = ["mu0"]} : (tensor<1x2x2xf32>) -> tensor<1x2x1xf32>
    %mux = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["mux"]} : () -> tensor<1xi64>
    %mu0u = onnx.node "Unsqueeze"(%mu0, %mux) {outputs = ["mu0u"]} : (tensor<1x2x1xf32>, tensor<1xi64>) -> tensor<1x2x1x1xf32>
    %d0 = onnx.node "Mul"(%mu0u, %M0) {outputs = ["d0"]} : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %M1 = onnx.node "Add"(%d0, %g0) {outputs = ["M1"]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %M1) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}

// -----

// The first chunk's update averages the second chunk's coefficients.
// CHECK-LABEL: onnx.graph @next_momentum(
// CHECK-NOT: ttt.kvb_layer
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @next_momentum(%q: tensor<1x2x4x4xf32> {onnx.name = "q"}, %k: tensor<1x2x4x4xf32> {onnx.name = "k"}, %v: tensor<1x2x4x4xf32> {onnx.name = "v"}, %mom: tensor<1x2x4xf32> {onnx.name = "mom"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}) {
    %W0 = onnx.initializer "W0" dense<5.000000e-01> : tensor<2x4x4xf32>
    %M0 = onnx.initializer "M0" dense<0.000000e+00> : tensor<1x2x4x4xf32>
    %sizes = onnx.node "Constant"() attrs {value = dense<2> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %q0, %q1 = onnx.node "Split"(%q, %sizes) attrs {axis = 2 : i64} {outputs = ["q0", "q1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %k0, %k1 = onnx.node "Split"(%k, %sizes) attrs {axis = 2 : i64} {outputs = ["k0", "k1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %v0, %v1 = onnx.node "Split"(%v, %sizes) attrs {axis = 2 : i64} {outputs = ["v0", "v1"]} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
    %mom0, %mom1 = onnx.node "Split"(%mom, %sizes) attrs {axis = 2 : i64} {outputs = ["mom0", "mom1"]} : (tensor<1x2x4xf32>, tensor<2xi64>) -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>)
    %y0 = onnx.node "MatMul"(%q0, %W0) {outputs = ["y0"]} : (tensor<1x2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x2x4xf32>
    %kt0 = onnx.node "Transpose"(%k0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt0"]} : (tensor<1x2x2x4xf32>) -> tensor<1x2x4x2xf32>
    %g0 = onnx.node "MatMul"(%kt0, %v0) {outputs = ["g0"]} : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    %mu0 = onnx.node "ReduceMean"(%mom1) attrs {axes = array<i64: -1>, keepdims = 1 : i64} {outputs = ["mu0"]} : (tensor<1x2x2xf32>) -> tensor<1x2x1xf32>
    %mux = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["mux"]} : () -> tensor<1xi64>
    %mu0u = onnx.node "Unsqueeze"(%mu0, %mux) {outputs = ["mu0u"]} : (tensor<1x2x1xf32>, tensor<1xi64>) -> tensor<1x2x1x1xf32>
    %d0 = onnx.node "Mul"(%mu0u, %M0) {outputs = ["d0"]} : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %M1 = onnx.node "Add"(%d0, %g0) {outputs = ["M1"]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %W1 = onnx.node "Add"(%W0, %M1) {outputs = ["W1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %y1 = onnx.node "MatMul"(%q1, %W1) {outputs = ["y1"]} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
    // expected-remark @+1 {{TTT layer: unrolled chunk loop (2 chunks of 2 tokens), fast weights 'W0': left as it was: no ttt.kvb_layer form: its momentum averages other tokens than its update reads}}
    %y = onnx.node "Concat"(%y0, %y1) attrs {axis = 2 : i64} {outputs = ["y"]} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
    onnx.yield %y : tensor<1x2x4x4xf32>
  }
}
