// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_llm.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_v1.scripted.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=NORM
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_glu.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_dwconv.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=CONV
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_dwconv.traced.onnx --ttt-raise-onnx=raise-all 2>/dev/null | FileCheck %s --check-prefix=CONV-ALL
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_dwconv_shift.traced.onnx --ttt-raise-onnx=raise-all 2>/dev/null | FileCheck %s --check-prefix=SHIFT
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_dwconv_shift.scripted.onnx --ttt-raise-onnx=raise-all 2>/dev/null | FileCheck %s --check-prefix=SCRIPTED

// Layers that are not linear attention are found, reported with the reason
// read off their dataflow, and left exactly as they were.

// DYNAMIC: remark: {{.*}}lact_llm.traced.onnx: node '/layer/Concat': TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights 'layer.w0', 'layer.w2', 'layer.w1': left as it was: its output depends non-linearly on the trained fast weights (through Sigmoid node '/layer/Sigmoid_{{[0-9]+}}')
// The analysis of its ttt.kvb_layer form says what is proven all the same.
// DYNAMIC-SAME: ; as a ttt.kvb_layer: exact lowering: chunk-sequential loop; proven: output layer W1 (out) is linear and bias-free
// DYNAMIC-SAME: blocked by: W0 (gate), W2 (up) are trained
// DYNAMIC-NOT: = ttt.kvb_layer
// DYNAMIC: onnx.node "Concat"
// DYNAMIC-NOT: = ttt.kvb_layer

// Weight norm divides the weight by its own column norms after each update.
// NORM: remark: {{.*}}lact_v1.scripted.onnx: node '/layer/ConcatFromSequence': TTT layer: ONNX Loop over chunks (chunks of 16 tokens), fast weights 'onnx::Expand_{{[0-9]+}}'; static weights 'layer.w0', 'layer.w2': left as it was: the update of 'onnx::Expand_{{[0-9]+}}' is not affine in the fast weights (through Sqrt node '/layer/Sqrt_{{[0-9]+}}')
// NORM: onnx.node "Loop"

// FULL: remark: {{.*}}vit3_glu.traced.onnx: node '/layer/Mul_10': TTT layer: full-batch step, fast weights '/layer/Sub_{{[0-9]}}_output_0', '/layer/Sub_{{[0-9]}}_output_0': left as it was: its output depends non-linearly on the trained fast weights (through Sigmoid

// ViT^3's depth-wise branch is read as a ttt.dwconv_layer, whose analysis
// says why it stays: one full-batch step is already its exact form.
// CONV: remark: {{.*}}vit3_dwconv.traced.onnx: node '/layer/Conv_1': TTT layer: full-batch step, fast weights '/layer/Sub_output_0': left as it was: exact lowering: single full-batch step (reduce, transform, apply); proven: a depth-wise convolution is per-channel linear attention with 9-dimensional keys
// CONV-SAME: not rewritten: the recurrent lowering already is the exact reduce-transform-apply form
// CONV-NOT: ttt.dwconv_layer
// CONV: onnx.node "Conv"
// CONV-NOT: ttt.dwconv_layer

// With raise-all, the layer op reads the queries, keys and values as given,
// the start kernel (ViT^3's [C, 1, 3, 3], which torch's trace folded to
// [1, C, 3, 3]) as [C, 3, 3]; the loss scale is the factor
// of the values the correlation reads, times the h * w of its mean.
// CONV-ALL-LABEL: onnx.graph @main_graph(
// CONV-ALL-SAME: %[[Q:[^:]+]]: tensor<2x8x6x6xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<2x8x6x6xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<2x8x6x6xf32> {onnx.name = "v"}
// CONV-ALL: %[[W0:.+]] = onnx.initializer "onnx::Sub_{{[0-9]+}}"
// CONV-ALL: %[[W:.+]] = onnx.node "Reshape"(%[[W0]], %{{.+}}) : (tensor<1x8x3x3xf32>, tensor<3xi64>) -> tensor<8x3x3xf32>
// CONV-ALL: %[[O:.+]] = ttt.dwconv_layer %[[Q]], %[[K]], %[[V]], %[[W]] : {{.*}} loss = #ttt.loss<kind = dot, scale = 0.3333{{[0-9]+}}, reduction = mean> update = #ttt.update<clip = frobenius>
// The layer's output is the grouped convolution's [1, B*C, h, w].
// CONV-ALL: %[[R:.+]] = onnx.node "Reshape"(%[[O]], %{{.+}}) : (tensor<2x8x6x6xf32>, tensor<4xi64>) -> tensor<1x16x6x6xf32>
// CONV-ALL: onnx.node "Identity"(%[[R]])
// CONV-ALL-NOT: "Conv"

// The same branch written as nine shifted products: the step's taps (values
// times the padded keys at each offset, stacked a * 3 + b) and the output's
// kernel entries times windows of the padded queries read the same layer op.
// SHIFT-LABEL: onnx.graph @main_graph(
// SHIFT-SAME: %[[Q:[^:]+]]: tensor<1x8x6x6xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x8x6x6xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x8x6x6xf32> {onnx.name = "v"}
// SHIFT: %[[W:.+]] = onnx.node "Reshape"(%{{.+}}, %{{.+}}) : (tensor<1x8x3x3xf32>, tensor<3xi64>) -> tensor<8x3x3xf32>
// SHIFT: %[[O:.+]] = ttt.dwconv_layer %[[Q]], %[[K]], %[[V]], %[[W]] : {{.*}} loss = #ttt.loss<kind = dot, scale = 0.3333{{[0-9]+}}, reduction = mean> update = #ttt.update<clip = frobenius>
// SHIFT: onnx.node "Identity"(%[[O]])
// SHIFT-NOT: "Slice"

// Scripted, the same branch cuts its windows as `Slice(Pad(x), a,
// Shape(k)[2] + a)` and divides the values by `Cast(Shape(k)[2] *
// Shape(k)[3])`: the windows span the image because q, k and v declare the
// same symbolic sizes, and the divisor is the mean over the positions, so the
// layer op keeps the run-time image size and the loss scale is the constant
// factor alone.
// SCRIPTED-LABEL: onnx.graph @main_graph(
// SCRIPTED-SAME: %[[Q:[^:]+]]: tensor<?x8x?x?xf32> {onnx.dim_params = ["B", "", "Hs", "Ws"], onnx.name = "q"}, %[[K:[^:]+]]: tensor<?x8x?x?xf32> {{.*}}, %[[V:[^:]+]]: tensor<?x8x?x?xf32>
// SCRIPTED: %[[W:.+]] = onnx.node "Reshape"(%{{.+}}, %{{.+}}) : (tensor<8x1x3x3xf32>, tensor<3xi64>) -> tensor<8x3x3xf32>
// SCRIPTED: %[[O:.+]] = ttt.dwconv_layer %[[Q]], %[[K]], %[[V]], %[[W]] : {{.*}} loss = #ttt.loss<kind = dot, scale = 0.3333{{[0-9]+}}, reduction = mean> update = #ttt.update<clip = frobenius> -> tensor<?x8x?x?xf32>
// SCRIPTED: onnx.node "Identity"(%[[O]])
// SCRIPTED-NOT: "Slice"
// SCRIPTED-NOT: "Shape"
