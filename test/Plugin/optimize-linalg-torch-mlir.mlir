// ttt between torch-mlir and the next compiler: stock mlir-opt loads the
// plug-in and runs ttt-optimize-linalg on what torch-mlir's FX importer made of
// a PyTorch TTT layer (test/fixtures/linalg/linear_dot.mlir: PlainLinear, dot
// loss, 36 tokens in chunks of 8, parameters as dense_resource constants).
// The unrolled chunk loop is raised and lowered back to upstream dialects.
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   %S/../fixtures/linalg/linear_dot.mlir \
// RUN:   --pass-pipeline='builtin.module(ttt-optimize-linalg)' 2>&1 | FileCheck %s

// CHECK: remark: TTT layer: unrolled chunk loop (5 chunks of 8 tokens, the last of 4), fast weights (a constant): raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: func.func @linear_dot(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x36x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x36x16xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x36x16xf32>)
// CHECK-NOT: ttt.
// CHECK-NOT: linattn.
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.generic
// CHECK-NOT: ttt.
// CHECK-NOT: linattn.
// CHECK: return
