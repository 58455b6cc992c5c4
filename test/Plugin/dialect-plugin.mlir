// Stock mlir-opt loads the ttt dialects from the plug-in and round-trips a
// ttt op (printed, parsed back by a second mlir-opt, printed again).
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so %s \
// RUN:   | %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   | FileCheck %s
// RUN: %mlir_opt --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so %s --mlir-print-op-generic \
// RUN:   | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @plain_linear
// CHECK: %[[O:.+]] = ttt.kvb_layer %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> weights(%{{.+}} : tensor<2x8x8xf32>)
// CHECK-SAME: model = #ttt.model<kind = linear, trained = [0]>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 16, order = update_then_apply>
// CHECK: return %[[O]]
// GENERIC: "ttt.kvb_layer"
func.func @plain_linear(%q: tensor<?x2x?x8xf32>, %w: tensor<2x8x8xf32>)
    -> tensor<?x2x?x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q
      : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 16, order = update_then_apply>
      -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// The pass plug-in brings the project's passes to stock mlir-opt too.
// RUN: %mlir_opt --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so %s \
// RUN:   --pass-pipeline="builtin.module(ttt-to-linattn)" | FileCheck %s --check-prefix=PASSES
// PASSES-LABEL: func.func @plain_linear
// PASSES: linattn.chunk_reduce
// PASSES: linattn.chunk_apply
