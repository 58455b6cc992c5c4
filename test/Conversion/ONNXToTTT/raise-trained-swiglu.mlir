// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_llm.traced.onnx --ttt-raise-onnx=raise-all 2>&1 | FileCheck %s
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_llm.scripted.onnx --ttt-raise-onnx=raise-all 2>&1 | FileCheck %s --check-prefix=LOOP
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_llm.traced.onnx --ttt-raise-onnx="raise-all keep-original" 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_v1.traced.onnx --ttt-raise-onnx=raise-all 2>&1 | FileCheck %s --check-prefix=NORM

// LaCT's base layer trains W0, W1 and W2. The updates of the gate and up
// projections are read as the dot loss's gradients backpropagated through
// silu(k W0) * (k W2); every weight takes its own learning-rate column, the
// chunk's momentum, Muon and the weight norm back to its initial column norms
// (which the exporter computed from a folded copy of each weight's squares).
// With raise-all the layer is raised, though it is not linear attention.

// CHECK: remark: {{.*}}node '/layer/Concat': TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights 'layer.w0', 'layer.w2', 'layer.w1': raised to ttt.kvb_layer; exact lowering: chunk-sequential loop
// CHECK-SAME: blocked by: W0 (gate), W2 (up) are trained
// CHECK-LABEL: onnx.graph @main_graph(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x64x8xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x2x64x8xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x2x64x8xf32> {onnx.name = "v"}, %[[LR:[^:]+]]: tensor<1x2x64x3xf32> {onnx.name = "lr"}, %[[M:[^:]+]]: tensor<1x2x64xf32> {onnx.name = "momentum"}
// CHECK-DAG: %[[W0:.+]] = onnx.initializer "layer.w0"
// CHECK-DAG: %[[W1:.+]] = onnx.initializer "layer.w1"
// CHECK-DAG: %[[W2:.+]] = onnx.initializer "layer.w2"
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} weights(%[[W0]], %[[W1]], %[[W2]] : {{.*}}) lr(%[[LR]] : {{.*}}) momentum(%[[M]] : {{.*}}) model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot> update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [4.08{{[0-9]+}}, -6.89{{[0-9]+}}, 2.92{{.*}}>, weight_norm = output_channels, weight_norm_eps = 9.99{{[0-9]+}}E-6> schedule = #ttt.schedule<kind = chunked, size = 16>
// CHECK-NOT: onnx.node "Sigmoid"
// CHECK: onnx.yield

// The scripted export's Loop carries the three weights and their momenta and
// spells 1 - s as Neg(s) + 1; it is the same layer.
// LOOP: remark: {{.*}}node '/layer/ConcatFromSequence': TTT layer: ONNX Loop over chunks (chunks of 16 tokens), {{.*}}: raised to ttt.kvb_layer
// LOOP: ttt.kvb_layer {{.*}} lr({{.*}}) momentum({{.*}}) model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot> update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, {{.*}}>, weight_norm = output_channels, {{.*}}> schedule = #ttt.schedule<kind = chunked, size = 16>
// LOOP-NOT: onnx.node "Loop"

// keep-original: the layer's nodes stay, paired with the layer op.
// KEEP: %[[LAYER:.+]] = ttt.kvb_layer
// KEEP: %[[MARK:.+]] = onnx.node "Identity"(%[[LAYER]])
// KEEP: %[[NODES:.+]] = onnx.node "Concat"
// KEEP: %[[R:.+]] = ttt.raised %[[MARK]] from %[[NODES]] : tensor<1x2x64x8xf32>
// KEEP: onnx.yield %[[R]]

// V1 (only W1 trains) keeps the weight norm.
// NORM: remark: {{.*}}raised to ttt.kvb_layer; {{.*}}blocked by: row weight normalization
// NORM: ttt.kvb_layer {{.*}} model = #ttt.model<kind = swiglu, trained = [1]> {{.*}} weight_norm = output_channels
