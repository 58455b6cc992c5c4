// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/research/research_lact_v2_bthd_einsum.traced_opset17.onnx --ttt-raise-onnx 2>&1 | FileCheck %s
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/research/research_lact_v2_bthd_einsum.dynamo_opset20.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=DYNAMO

// LaCT's V2 as research code writes it on [B, T, H, D] tensors with einsum:
// the SwiGLU features are computed on [B, T, H, E] views of [B, H, T, E]
// products (the layout transposes sink through them), W1 is stored output x
// input and applied transposed (its update is read as stored: v^T phi(k),
// with Muon on the stored orientation), and the momentum is averaged over the
// time axis of a [B, T, H] tensor (the layer op gets it as [B, H, T]).

// CHECK: remark: {{.*}}node '/Concat': TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights '/Tile_output_0' (transposed); {{.*}}: raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: onnx.graph @main_graph(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x64x2x8xf32> {onnx.name = "q"}, {{.*}} %[[M:[^:]+]]: tensor<2x64x2xf32> {onnx.name = "momentum"}
// CHECK-DAG: %[[QT:.+]] = onnx.node "Transpose"(%[[Q]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[W1:.+]] = onnx.node "Transpose"(%[[TILE:.+]]) attrs {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x8x16xf32>) -> tensor<2x2x16x8xf32>
// CHECK-DAG: %[[MT:.+]] = onnx.node "Transpose"(%[[M]]) attrs {perm = array<i64: 0, 2, 1>} : (tensor<2x64x2xf32>) -> tensor<2x2x64xf32>
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[QT]], {{.*}} weights(%{{.+}}, %[[W1]], %{{.+}} : {{.*}}) lr({{.*}}) momentum(%[[MT]] : tensor<2x2x64xf32>) model = #ttt.model<kind = swiglu, trained = [1]> loss = #ttt.loss<kind = dot> update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5
// CHECK: onnx.node "Transpose"(%{{.+}}) attrs {perm = array<i64: 0, 2, 1, 3>} {{.*}}tensor<2x2x64x8xf32>) -> tensor<2x64x2x8xf32>

// The dynamo export folds the batch repeat of W1 and its transpose into
// constants, and writes Muon's norm as ReduceL2.
// DYNAMO: remark: {{.*}}node 'node_cat': TTT layer: unrolled chunk loop (4 chunks of 16 tokens), {{.*}}: raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// DYNAMO: ttt.kvb_layer {{.*}} model = #ttt.model<kind = swiglu, trained = [1]>
