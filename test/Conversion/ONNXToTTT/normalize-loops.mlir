// A scripted chunk loop's chunks and outputs, however they are taken and
// collected, become Slices at i * C and a carried sequence joined once.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// Scan outputs become a carried sequence; their stack moved next to the time
// axis and merged into it becomes one ConcatFromSequence on the time axis.

// CHECK-LABEL: onnx.graph @scan_output(
// CHECK: %[[EMPTY:.+]] = onnx.node "SequenceEmpty"() attrs {dtype = 1 : i64}
// CHECK: %[[SEQ:.+]] = onnx.node "Loop"(%{{.+}}, %{{.+}}, %[[EMPTY]]) attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "cond", "body.scan0.in"], outputs = ["cond_out", "body.scan0.out"]>}
// CHECK-SAME: -> !onnx.seq<tensor<*xf32>>
// CHECK: ^bb0(%{{.+}}: tensor<i64>, %{{.+}}: tensor<i1>, %[[IN:.+]]: !onnx.seq<tensor<*xf32>>):
// CHECK: %[[PIECE:.+]] = onnx.node "Slice"
// CHECK: %[[OUT:.+]] = onnx.node "SequenceInsert"(%[[IN]], %[[PIECE]])
// CHECK: onnx.yield %{{.+}}, %[[OUT]]
// CHECK-NOT: "Transpose"
// CHECK: %[[JOINED:.+]] = onnx.node "ConcatFromSequence"(%[[SEQ]]) attrs {axis = 2 : i64}
// CHECK: %[[O:.+]] = onnx.node "Reshape"(%[[JOINED]], %{{.+}})
// CHECK: onnx.yield %[[O]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scan_output(%x: tensor<?x2x?x4xf32> {onnx.name = "x"}, %n: tensor<i64> {onnx.name = "n"}) -> (tensor<?x2x?x4xf32> {onnx.name = "o"}) {
    %true = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["true"]} : () -> tensor<i1>
    %c4 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c4"]} : () -> tensor<i64>
    %scanned = onnx.node "Loop"(%n, %true) attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "cond"], outputs = ["cond_out", "piece"]>} {outputs = ["scanned"]} : (tensor<i64>, tensor<i1>) -> tensor<*xf32> graphs {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>):
      %start = onnx.node "Mul"(%i, %c4) {outputs = ["start"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %end = onnx.node "Add"(%start, %c4) {outputs = ["end"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
      %s = onnx.node "Unsqueeze"(%start, %zero) {outputs = ["s"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %e = onnx.node "Unsqueeze"(%end, %zero) {outputs = ["e"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %axis = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["axis"]} : () -> tensor<1xi64>
      %piece = onnx.node "Slice"(%x, %s, %e, %axis) {outputs = ["piece"]} : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
      %cond_out = onnx.node "Identity"(%cond) {outputs = ["cond_out"]} : (tensor<i1>) -> tensor<i1>
      onnx.yield %cond_out, %piece : tensor<i1>, tensor<?x2x?x4xf32>
    }
    %moved = onnx.node "Transpose"(%scanned) attrs {perm = array<i64: 1, 2, 0, 3, 4>} {outputs = ["moved"]} : (tensor<*xf32>) -> tensor<*xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[0, 0, -1, 4]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %o = onnx.node "Reshape"(%moved, %shape) {outputs = ["o"]} : (tensor<*xf32>, tensor<4xi64>) -> tensor<?x2x?x4xf32>
    onnx.yield %o : tensor<?x2x?x4xf32>
  }
}

// -----

// A stack of a sequence (new_axis 1) that a Reshape flattens is the join on
// the stacked axis: the same elements in the same order.

// CHECK-LABEL: onnx.graph @stacked_sequence(
// CHECK-SAME: %[[S:[^:]+]]: !onnx.seq<tensor<1x2x4x8xf32>>
// CHECK: %[[J:.+]] = onnx.node "ConcatFromSequence"(%[[S]]) attrs {axis = 2 : i64}
// CHECK-NOT: new_axis
// CHECK: %[[O:.+]] = onnx.node "Reshape"(%[[J]], %{{.+}})
// CHECK: onnx.yield %[[O]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @stacked_sequence(%s: !onnx.seq<tensor<1x2x4x8xf32>> {onnx.name = "s"}) -> (tensor<1x2x12x8xf32> {onnx.name = "o"}) {
    %stacked = onnx.node "ConcatFromSequence"(%s) attrs {axis = 2 : i64, new_axis = 1 : i64} {outputs = ["stacked"]} : (!onnx.seq<tensor<1x2x4x8xf32>>) -> tensor<*xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[0, 0, -1, 8]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %o = onnx.node "Reshape"(%stacked, %shape) {outputs = ["o"]} : (tensor<*xf32>, tensor<4xi64>) -> tensor<1x2x12x8xf32>
    onnx.yield %o : tensor<1x2x12x8xf32>
  }
}

// -----

// A Reshape that copies a dim at or after the stacked axis (a 0 there) would
// read another dim of the join: left alone. So is a stack past the elements'
// last axis.

// CHECK-LABEL: onnx.graph @stack_copies_moved_dim(
// CHECK: onnx.node "ConcatFromSequence"(%{{.+}}) attrs {axis = 2 : i64, new_axis = 1 : i64}
// CHECK-LABEL: onnx.graph @stack_past_the_elements(
// CHECK: onnx.node "ConcatFromSequence"(%{{.+}}) attrs {axis = 4 : i64, new_axis = 1 : i64}
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @stack_copies_moved_dim(%s: !onnx.seq<tensor<1x2x4x8xf32>> {onnx.name = "s"}) -> (tensor<*xf32> {onnx.name = "o"}) {
    %stacked = onnx.node "ConcatFromSequence"(%s) attrs {axis = 2 : i64, new_axis = 1 : i64} {outputs = ["stacked"]} : (!onnx.seq<tensor<1x2x4x8xf32>>) -> tensor<*xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[0, 0, 0, -1]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %o = onnx.node "Reshape"(%stacked, %shape) {outputs = ["o"]} : (tensor<*xf32>, tensor<4xi64>) -> tensor<*xf32>
    onnx.yield %o : tensor<*xf32>
  }
  onnx.graph @stack_past_the_elements(%s: !onnx.seq<tensor<1x2x4x8xf32>> {onnx.name = "s"}) -> (tensor<*xf32> {onnx.name = "o"}) {
    %stacked = onnx.node "ConcatFromSequence"(%s) attrs {axis = 4 : i64, new_axis = 1 : i64} {outputs = ["stacked"]} : (!onnx.seq<tensor<1x2x4x8xf32>>) -> tensor<*xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 2, -1]> : tensor<3xi64>} {outputs = ["shape"]} : () -> tensor<3xi64>
    %o = onnx.node "Reshape"(%stacked, %shape) {outputs = ["o"]} : (tensor<*xf32>, tensor<3xi64>) -> tensor<*xf32>
    onnx.yield %o : tensor<*xf32>
  }
}

// -----

// Inside a Loop, the piece at the iteration counter of a split into pieces of
// C (SplitToSequence + SequenceAt(i)) and the i-th chunk of a reshape to
// [B, H, -1, C, D] (Gather(i)) are Slices from i * C to i * C + C.

// CHECK-LABEL: onnx.graph @chunks_at_the_counter(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x2x?x4xf32>
// CHECK: ^bb0(%[[I:[^:]+]]: tensor<i64>, %{{[^:]+}}: tensor<i1>
// CHECK: %[[C:.+]] = onnx.node "Constant"() attrs {value = dense<3> : tensor<i64>}
// CHECK: %[[START:.+]] = onnx.node "Mul"(%[[I]], %[[C]])
// CHECK: %[[END:.+]] = onnx.node "Add"(%[[START]], %[[C]])
// CHECK: %[[S:.+]] = onnx.node "Reshape"(%[[START]], %{{.+}})
// CHECK: %[[E:.+]] = onnx.node "Reshape"(%[[END]], %{{.+}})
// CHECK: %[[AX:.+]] = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>}
// CHECK: %[[A:.+]] = onnx.node "Slice"(%[[X]], %[[S]], %[[E]], %[[AX]])
// CHECK-NOT: "SequenceAt"
// CHECK-NOT: "Gather"
// CHECK: onnx.node "SequenceInsert"(%{{.+}}, %[[A]])
// CHECK: onnx.node "SequenceInsert"(%{{.+}}, %[[A]])
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @chunks_at_the_counter(%x: tensor<?x2x?x4xf32> {onnx.name = "x"}, %n: tensor<i64> {onnx.name = "n"}) -> (tensor<*xf32> {onnx.name = "a"}, tensor<*xf32> {onnx.name = "b"}) {
    %true = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["true"]} : () -> tensor<i1>
    %c3 = onnx.node "Constant"() attrs {value = dense<3> : tensor<i64>} {outputs = ["c3"]} : () -> tensor<i64>
    %pieces = onnx.node "SplitToSequence"(%x, %c3) attrs {axis = 2 : i64} {outputs = ["pieces"]} : (tensor<?x2x?x4xf32>, tensor<i64>) -> !onnx.seq<tensor<*xf32>>
    %shape = onnx.node "Constant"() attrs {value = dense<[0, 0, -1, 3, 4]> : tensor<5xi64>} {outputs = ["shape"]} : () -> tensor<5xi64>
    %r = onnx.node "Reshape"(%x, %shape) {outputs = ["r"]} : (tensor<?x2x?x4xf32>, tensor<5xi64>) -> tensor<?x2x?x3x4xf32>
    %a, %b = onnx.node "Loop"(%n, %true) attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "cond"], outputs = ["cond_out", "split_piece", "gathered"]>} {outputs = ["a", "b"]} : (tensor<i64>, tensor<i1>) -> (tensor<*xf32>, tensor<*xf32>) graphs {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>):
      %split_piece = onnx.node "SequenceAt"(%pieces, %i) {outputs = ["split_piece"]} : (!onnx.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
      %gathered = onnx.node "Gather"(%r, %i) attrs {axis = 2 : i64} {outputs = ["gathered"]} : (tensor<?x2x?x3x4xf32>, tensor<i64>) -> tensor<*xf32>
      %cond_out = onnx.node "Identity"(%cond) {outputs = ["cond_out"]} : (tensor<i1>) -> tensor<i1>
      onnx.yield %cond_out, %split_piece, %gathered : tensor<i1>, tensor<*xf32>, tensor<*xf32>
    }
    onnx.yield %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Pieces of listed sizes (a 1-D split), and a reshape whose leading dims are
// static numbers where the source is dynamic (it may regroup the batch), are
// left alone.

// CHECK-LABEL: onnx.graph @chunks_left_alone(
// CHECK: onnx.node "SequenceAt"
// CHECK: onnx.node "Gather"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @chunks_left_alone(%x: tensor<?x2x?x4xf32> {onnx.name = "x"}, %i: tensor<i64> {onnx.name = "i"}) -> (tensor<*xf32> {onnx.name = "a"}, tensor<*xf32> {onnx.name = "b"}) {
    %sizes = onnx.node "Constant"() attrs {value = dense<[3, 3]> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %pieces = onnx.node "SplitToSequence"(%x, %sizes) attrs {axis = 2 : i64} {outputs = ["pieces"]} : (tensor<?x2x?x4xf32>, tensor<2xi64>) -> !onnx.seq<tensor<*xf32>>
    %a = onnx.node "SequenceAt"(%pieces, %i) {outputs = ["a"]} : (!onnx.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 2, -1, 3, 4]> : tensor<5xi64>} {outputs = ["shape"]} : () -> tensor<5xi64>
    %r = onnx.node "Reshape"(%x, %shape) {outputs = ["r"]} : (tensor<?x2x?x4xf32>, tensor<5xi64>) -> tensor<1x2x?x3x4xf32>
    %b = onnx.node "Gather"(%r, %i) attrs {axis = 2 : i64} {outputs = ["b"]} : (tensor<1x2x?x3x4xf32>, tensor<i64>) -> tensor<*xf32>
    onnx.yield %a, %b : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// `w = w + k^T v` with w a stored [H, o, i] weight broadcasts it over the
// batch: the carried argument is declared [2, 3, 3] but holds [B, 2, 3, 3]
// from the second iteration on. Its type loosens to unranked, so that no
// view is built on the rank it has only once; a carried value that keeps its
// rank keeps its type.

// CHECK-LABEL: onnx.graph @rank_changing_carry(
// CHECK: onnx.node "Loop"
// CHECK: ^bb0(%{{[^:]+}}: tensor<i64>, %{{[^:]+}}: tensor<i1>, %{{[^:]+}}: tensor<*xf32>, %{{[^:]+}}: tensor<2x3xf32>,
// CHECK: onnx.yield
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @rank_changing_carry(%w0: tensor<2x3x3xf32> {onnx.name = "w0"}, %d: tensor<4x2x3x3xf32> {onnx.name = "d"}, %x: tensor<4x2x3x5xf32> {onnx.name = "x"}, %c0: tensor<2x3xf32> {onnx.name = "c0"}, %n: tensor<i64> {onnx.name = "n"}) -> (tensor<*xf32> {onnx.name = "w"}, tensor<2x3xf32> {onnx.name = "c"}, tensor<*xf32> {onnx.name = "y"}) {
    %true = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["true"]} : () -> tensor<i1>
    %w, %c, %y = onnx.node "Loop"(%n, %true, %w0, %c0) attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "cond", "w_in", "c_in"], outputs = ["cond_out", "w_out", "c_out", "y_out"]>} {outputs = ["w", "c", "y"]} : (tensor<i64>, tensor<i1>, tensor<2x3x3xf32>, tensor<2x3xf32>) -> (tensor<*xf32>, tensor<2x3xf32>, tensor<*xf32>) graphs {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %w_in: tensor<2x3x3xf32>, %c_in: tensor<2x3xf32>):
      %cond_out = onnx.node "Identity"(%cond) {outputs = ["cond_out"]} : (tensor<i1>) -> tensor<i1>
      %w_out = onnx.node "Add"(%w_in, %d) {outputs = ["w_out"]} : (tensor<2x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32>
      %c_out = onnx.node "Identity"(%c_in) {outputs = ["c_out"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %y_out = onnx.node "MatMul"(%w_in, %x) {outputs = ["y_out"]} : (tensor<2x3x3xf32>, tensor<4x2x3x5xf32>) -> tensor<4x2x3x5xf32>
      onnx.yield %cond_out, %w_out, %c_out, %y_out : tensor<i1>, tensor<4x2x3x3xf32>, tensor<2x3xf32>, tensor<4x2x3x5xf32>
    }
    onnx.yield %w, %c, %y : tensor<*xf32>, tensor<2x3xf32>, tensor<*xf32>
  }
}
