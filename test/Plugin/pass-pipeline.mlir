// Stock mlir-opt builds its pass flags (--canonicalize, ...) before it loads
// a pass plug-in, so --ttt-explain is unknown there although --help lists it.
// The project's passes and pipelines work as a pipeline string, which is
// parsed after the plug-in is loaded (`ttt-opt --help` and the README say
// so).
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so %s \
// RUN:   --pass-pipeline='builtin.module(ttt-explain)' 2>&1 | FileCheck %s
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so %s \
// RUN:   --pass-pipeline='builtin.module(ttt-simplify,ttt-to-linattn)' \
// RUN:   | FileCheck %s --check-prefix=REWRITE
// RUN: not %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so %s --ttt-explain 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FLAG
// RUN: ttt-opt --help | FileCheck %s --check-prefix=HELP

// CHECK: remark: ttt-explain: exact lowering: prefix sum over chunk states
// REWRITE-LABEL: func.func @plain_linear
// REWRITE: linattn.chunk_reduce
// FLAG: Unknown command line argument '--ttt-explain'
// HELP: --pass-pipeline='builtin.module(ttt-explain)'
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
