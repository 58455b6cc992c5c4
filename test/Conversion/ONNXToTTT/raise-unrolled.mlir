// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_v3.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/linear_dot.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=UPDATE-FIRST

// A traced export unrolls the chunk loop: four copies of one chunk's
// computation thread the fast weight 'layer.w' (momentum, Newton-Schulz and a
// per-token learning rate included). The raise reads one ttt.kvb_layer off
// them and erases the copies.

// CHECK: remark: {{.*}}lact_v3.traced.onnx: node '/layer/Concat': TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights 'layer.w': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: onnx.graph @main_graph(
// CHECK-SAME: %[[Q:[a-z]+]]: tensor<1x2x64x8xf32> {onnx.name = "q"}, %[[K:[a-z]+]]: tensor<1x2x64x8xf32> {onnx.name = "k"}, %[[V:[a-z]+]]: tensor<1x2x64x8xf32> {onnx.name = "v"}, %[[LR:[a-z]+]]: tensor<1x2x64x1xf32> {onnx.name = "lr"}, %[[M:[a-z]+]]: tensor<1x2x64xf32> {onnx.name = "momentum"})
// CHECK: %[[W:.+]] = onnx.initializer "layer.w"
// CHECK-NOT: onnx.node
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} weights(%[[W]] : tensor<2x8x8xf32>) lr(%[[LR]] : tensor<1x2x64x1xf32>) momentum(%[[M]] : tensor<1x2x64xf32>)
// CHECK-SAME: model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
// CHECK-SAME: orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [4.08479{{[0-9]+}}, -6.89459{{[0-9]+}}, 2.92700{{[0-9]+}}
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 16>
// CHECK-NEXT: %[[NAMED:.+]] = onnx.node "Identity"(%[[O]]) {doc_string = "ttt: parallel linear-attention form of a TTT layer, {{.+}}", node_name = "{{.+}}", outputs = ["o"]}
// CHECK-NEXT: onnx.yield %[[NAMED]]

// Update-then-apply: chunk c's output reads the weight after chunk c's own
// update, so the first copy's weight is the initializer plus an update.

// UPDATE-FIRST: remark: {{.*}}linear_dot.traced.onnx: node '/layer/Concat': TTT layer: unrolled chunk loop (5 chunks of 8 tokens)
// UPDATE-FIRST-SAME: raised to ttt.kvb_layer
// UPDATE-FIRST-LABEL: onnx.graph @main_graph(
// UPDATE-FIRST: %[[W:.+]] = onnx.initializer "layer.w"
// UPDATE-FIRST: ttt.kvb_layer {{.*}} weights(%[[W]] : tensor<2x16x16xf32>)
// UPDATE-FIRST-SAME: schedule = #ttt.schedule<kind = chunked, size = 8, order = update_then_apply>
