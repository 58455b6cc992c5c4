// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_llm.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/lact_v1.scripted.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=NORM
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_glu.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: ttt-opt %ttt_src_root/test/fixtures/onnx/vit3_dwconv.traced.onnx --ttt-raise-onnx 2>&1 | FileCheck %s --check-prefix=CONV

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

// CONV: remark: {{.*}}vit3_dwconv.traced.onnx: node '/layer/Conv_1': TTT layer: full-batch step, fast weights '/layer/Sub_output_0': left as it was: no ttt.kvb_layer form: its output convolves the queries with the trained weight (ViT^3's depth-wise branch, ttt.dwconv_layer), which the raise does not read
// CONV: onnx.node "Conv"
