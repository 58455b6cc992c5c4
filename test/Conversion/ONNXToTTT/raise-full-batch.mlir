// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file 2>/dev/null | FileCheck %s
// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_nvs.traced.onnx --ttt-raise-onnx=raise-all 2>&1 | FileCheck %s --check-prefix=NVS
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_glu.scripted.onnx --ttt-raise-onnx=raise-all 2>&1 | FileCheck %s --check-prefix=GLU
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_glu.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=GLU-LEFT

// A full-batch step: one update on every key and value, then the weight
// applied to every query (LaCT-NVS's schedule). Its keys, values and rates are
// the whole sequences, not chunks.

// W + 0.5 k^T v, then q W: full-mask linear attention.
// REMARK: remark: {{.*}}TTT layer: full-batch step, fast weights 'w1': raised to ttt.kvb_layer (linear attention, single full-batch step (reduce, transform, apply))
// CHECK-LABEL: onnx.graph @dot(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x12x4xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x2x8x4xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x2x8x3xf32> {onnx.name = "v"}
// CHECK: %[[W:.+]] = onnx.initializer "w"
// CHECK: ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} weights(%[[W]] : tensor<2x4x3xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot> update = #ttt.update<lr_scale = 5.000000e-01> schedule = #ttt.schedule<kind = full_batch>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @dot(%q: tensor<1x2x12x4xf32> {onnx.name = "q"}, %k: tensor<1x2x8x4xf32> {onnx.name = "k"}, %v: tensor<1x2x8x3xf32> {onnx.name = "v"}) -> (tensor<1x2x12x3xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<0.25> : tensor<2x4x3xf32>
    %kt = onnx.node "Transpose"(%k) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt"]} : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
    %g = onnx.node "MatMul"(%kt, %v) {outputs = ["g"]} : (tensor<1x2x4x8xf32>, tensor<1x2x8x3xf32>) -> tensor<1x2x4x3xf32>
    %half = onnx.node "Constant"() attrs {value = dense<0.5> : tensor<f32>} {outputs = ["half"]} : () -> tensor<f32>
    %step = onnx.node "Mul"(%g, %half) {outputs = ["step"]} : (tensor<1x2x4x3xf32>, tensor<f32>) -> tensor<1x2x4x3xf32>
    %w1 = onnx.node "Add"(%w, %step) {outputs = ["w1"]} : (tensor<2x4x3xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
    %o = onnx.node "MatMul"(%q, %w1) {outputs = ["o"]} : (tensor<1x2x12x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x12x3xf32>
    onnx.yield %o : tensor<1x2x12x3xf32>
  }
}

// -----

// The MSE step W - k^T (k W - v) / T with the weight passed in as an input:
// the residual reads W, so it is no tensor of values; the step transforms the
// state it reads, which the recurrent form already computes as one step.
// REMARK: remark: {{.*}}TTT layer: full-batch step, fast weights 'w1': left as it was: exact lowering: single full-batch step
// REMARK-SAME: the state update is affine in the state
// REMARK-SAME: not rewritten: this full-batch step transforms its state
// CHECK-LABEL: onnx.graph @mse_weight_input(
// CHECK-NOT: ttt.kvb_layer
// CHECK: onnx.yield
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @mse_weight_input(%q: tensor<1x2x12x4xf32> {onnx.name = "q"}, %k: tensor<1x2x8x4xf32> {onnx.name = "k"}, %v: tensor<1x2x8x4xf32> {onnx.name = "v"}, %w: tensor<2x4x4xf32> {onnx.name = "w"}) -> (tensor<1x2x12x4xf32> {onnx.name = "o"}) {
    %kw = onnx.node "MatMul"(%k, %w) {outputs = ["kw"]} : (tensor<1x2x8x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x8x4xf32>
    %r = onnx.node "Sub"(%kw, %v) {outputs = ["r"]} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
    %kt = onnx.node "Transpose"(%k) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt"]} : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
    %g = onnx.node "MatMul"(%kt, %r) {outputs = ["g"]} : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
    %n = onnx.node "Constant"() attrs {value = dense<8.0> : tensor<f32>} {outputs = ["n"]} : () -> tensor<f32>
    %mean = onnx.node "Div"(%g, %n) {outputs = ["mean"]} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    %w1 = onnx.node "Sub"(%w, %mean) {outputs = ["w1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %o = onnx.node "MatMul"(%q, %w1) {outputs = ["o"]} : (tensor<1x2x12x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x12x4xf32>
    onnx.yield %o : tensor<1x2x12x4xf32>
  }
}

// -----

// Keys, values and queries given [B, T, H, D], turned once; the output turned
// back stays outside the layer. k^T of the turned keys is spelled as one
// Transpose of the input; the per-token rate scales the keys.
// REMARK: remark: {{.*}}TTT layer: full-batch step, fast weights 'w1': raised to ttt.kvb_layer (linear attention, single full-batch step
// CHECK-LABEL: onnx.graph @token_major(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x12x2x4xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x8x2x4xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x8x2x3xf32> {onnx.name = "v"}, %[[LR:[^:]+]]: tensor<1x8x2x1xf32> {onnx.name = "lr"}
// CHECK-DAG: %[[QS:.+]] = onnx.node "Transpose"(%[[Q]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[KS:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[VS:.+]] = onnx.node "Transpose"(%[[V]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[LS:.+]] = onnx.node "Transpose"(%[[LR]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[QS]], %[[KS]], %[[VS]] : {{.*}} lr(%[[LS]] : tensor<1x2x8x1xf32>) {{.*}} schedule = #ttt.schedule<kind = full_batch>
// CHECK: onnx.node "Transpose"(%{{.*}}) attrs {perm = array<i64: 0, 2, 1, 3>}
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @token_major(%q: tensor<1x12x2x4xf32> {onnx.name = "q"}, %k: tensor<1x8x2x4xf32> {onnx.name = "k"}, %v: tensor<1x8x2x3xf32> {onnx.name = "v"}, %lr: tensor<1x8x2x1xf32> {onnx.name = "lr"}) -> (tensor<1x12x2x3xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<0.25> : tensor<2x4x3xf32>
    %qs = onnx.node "Transpose"(%q) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["qs"]} : (tensor<1x12x2x4xf32>) -> tensor<1x2x12x4xf32>
    %vs = onnx.node "Transpose"(%v) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["vs"]} : (tensor<1x8x2x3xf32>) -> tensor<1x2x8x3xf32>
    %kl = onnx.node "Mul"(%k, %lr) {outputs = ["kl"]} : (tensor<1x8x2x4xf32>, tensor<1x8x2x1xf32>) -> tensor<1x8x2x4xf32>
    %kt = onnx.node "Transpose"(%kl) attrs {perm = array<i64: 0, 2, 3, 1>} {outputs = ["kt"]} : (tensor<1x8x2x4xf32>) -> tensor<1x2x4x8xf32>
    %g = onnx.node "MatMul"(%kt, %vs) {outputs = ["g"]} : (tensor<1x2x4x8xf32>, tensor<1x2x8x3xf32>) -> tensor<1x2x4x3xf32>
    %w1 = onnx.node "Add"(%w, %g) {outputs = ["w1"]} : (tensor<2x4x3xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
    %os = onnx.node "MatMul"(%qs, %w1) {outputs = ["os"]} : (tensor<1x2x12x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x12x3xf32>
    %o = onnx.node "Transpose"(%os) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["o"]} : (tensor<1x2x12x3xf32>) -> tensor<1x12x2x3xf32>
    onnx.yield %o : tensor<1x12x2x3xf32>
  }
}

// -----

// The rates scale the values: kᵀ (v ⊙ lr) is (k ⊙ lr)ᵀ v, the keys' rates.
// REMARK: remark: {{.*}}TTT layer: full-batch step, fast weights 'w1': raised to ttt.kvb_layer (linear attention
// CHECK-LABEL: onnx.graph @rates_on_values(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x12x4xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x2x8x4xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x2x8x3xf32> {onnx.name = "v"}, %[[LR:[^:]+]]: tensor<1x2x8x1xf32> {onnx.name = "lr"}
// CHECK: ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} lr(%[[LR]] : tensor<1x2x8x1xf32>) {{.*}} schedule = #ttt.schedule<kind = full_batch>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @rates_on_values(%q: tensor<1x2x12x4xf32> {onnx.name = "q"}, %k: tensor<1x2x8x4xf32> {onnx.name = "k"}, %v: tensor<1x2x8x3xf32> {onnx.name = "v"}, %lr: tensor<1x2x8x1xf32> {onnx.name = "lr"}) -> (tensor<1x2x12x3xf32> {onnx.name = "o"}) {
    %w = onnx.initializer "w" dense<0.25> : tensor<2x4x3xf32>
    %kt = onnx.node "Transpose"(%k) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt"]} : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
    %vl = onnx.node "Mul"(%v, %lr) {outputs = ["vl"]} : (tensor<1x2x8x3xf32>, tensor<1x2x8x1xf32>) -> tensor<1x2x8x3xf32>
    %g = onnx.node "MatMul"(%kt, %vl) {outputs = ["g"]} : (tensor<1x2x4x8xf32>, tensor<1x2x8x3xf32>) -> tensor<1x2x4x3xf32>
    %w1 = onnx.node "Add"(%w, %g) {outputs = ["w1"]} : (tensor<2x4x3xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
    %o = onnx.node "MatMul"(%q, %w1) {outputs = ["o"]} : (tensor<1x2x12x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x12x3xf32>
    onnx.yield %o : tensor<1x2x12x3xf32>
  }
}

// LaCT-NVS: W0, W1 and W2 each take one step from their initializers on all
// of k, v (per-weight rate columns, Muon, weight norm), then apply to the 40
// queries; raised as a full_batch layer whose queries outnumber its 24 keys.
// NVS: remark: {{.*}}node '/layer/MatMul_53': TTT layer: full-batch step, {{.*}}: raised to ttt.kvb_layer; exact lowering: single full-batch step
// NVS-SAME: blocked by: W0 (gate), W2 (up) are trained
// NVS: ttt.kvb_layer {{.*}} : tensor<1x1x40x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32> weights({{.*}}) lr({{.*}} : tensor<1x1x24x3xf32>) model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot> update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, {{.*}}>, weight_norm = output_channels, {{.*}}> schedule = #ttt.schedule<kind = full_batch>

// ViT^3's GLU branch: Wa and Wg each step once by their gradient of the dot
// loss (-v / n * scale, n = k.size(2) read from the shape: a mean), clipped
// per output column, then (q Wa) * silu(q Wg).
// GLU: remark: {{.*}}node '/layer/Mul_10': TTT layer: full-batch step, {{.*}}: raised to ttt.kvb_layer; exact lowering: single full-batch step
// GLU-SAME: blocked by: the output (x Wa) * silu(x Wg) gates every output channel
// GLU: ttt.kvb_layer {{.*}} weights(%layer.w1, %layer.w2 : {{.*}}) model = #ttt.model<kind = glu, trained = [0, 1]> loss = #ttt.loss<kind = dot, scale = 0.3333{{[0-9]+}}, reduction = mean> update = #ttt.update<clip = output_channels> schedule = #ttt.schedule<kind = full_batch>

// Without raise-all the layer stays, with what is proven and what blocks it.
// GLU-LEFT: remark: {{.*}}TTT layer: full-batch step, {{.*}}: left as it was: its output depends non-linearly on the trained fast weights (through Sigmoid {{.*}}; as a ttt.kvb_layer: exact lowering: single full-batch step
// GLU-LEFT-NOT: ttt.kvb_layer
// GLU-LEFT: onnx.node "Sigmoid"
