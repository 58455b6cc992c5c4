// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/linear_mse.scripted.onnx --ttt-raise-onnx 2>&1 | FileCheck %s
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_v2.scripted_nofold.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=SWIGLU

// A scripted export keeps the chunk loop as an ONNX Loop that carries the
// fast weight and appends each chunk's output to a sequence. Here the update
// is the MSE gradient -k^T (k W - v) / n with a per-token learning rate.

// CHECK: remark: {{.*}}linear_mse.scripted.onnx: node '/layer/ConcatFromSequence': TTT layer: ONNX Loop over chunks (chunks of 8 tokens), fast weights 'onnx::Expand_162': raised to ttt.kvb_layer (linear attention, affine scan over chunk states)
// CHECK-LABEL: onnx.graph @main_graph(
// CHECK-SAME: %[[Q:[a-z]+]]: tensor<?x2x?x16xf32>
// CHECK: %[[W:.+]] = onnx.node "Expand"
// CHECK-NOT: "Loop"
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]], {{.*}} weights(%[[W]] : tensor<?x2x16x16xf32>) lr(
// CHECK-SAME: loss = #ttt.loss<kind = mse, reduction = mean>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 8>
// CHECK-NEXT: %[[NAMED:.+]] = onnx.node "Identity"(%[[O]]) {doc_string = "ttt: parallel linear-attention form of a TTT layer, {{.+}}", node_name = "{{.+}}", outputs = ["o"]}
// CHECK-NEXT: onnx.yield %[[NAMED]]

// LaCT with only the output layer W1 trained: silu(q W0) * (q W2) with the
// constant W0, W2 is a static feature map; lr column 1 belongs to W1.

// SWIGLU: remark: {{.*}}: TTT layer: ONNX Loop over chunks (chunks of 16 tokens), fast weights 'layer.w1'; static weights 'layer.w0', 'layer.w2': raised to ttt.kvb_layer
// SWIGLU-LABEL: onnx.graph @main_graph(
// SWIGLU-DAG: %[[W0:.+]] = onnx.initializer "layer.w0"
// SWIGLU-DAG: %[[W2:.+]] = onnx.initializer "layer.w2"
// SWIGLU: ttt.kvb_layer {{.*}} weights(%[[W0]], %{{.+}}, %[[W2]] : tensor<2x8x16xf32>, tensor<?x2x16x8xf32>, tensor<2x8x16xf32>) lr(%{{.+}} : tensor<?x2x?x3xf32>) momentum(
// SWIGLU-SAME: model = #ttt.model<kind = swiglu, trained = [1]>
