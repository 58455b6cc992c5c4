// Chunk outputs however they are joined become one Concat.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// A stack of the chunks (Unsqueeze, Concat, Reshape) is their Concat.

// CHECK-LABEL: onnx.graph @stack(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x2x3x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<1x2x3x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 2 : i64} : {{.*}} -> tensor<1x2x6x4xf32>
// CHECK-NOT: "Reshape"
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @stack(%a: tensor<1x2x3x4xf32> {onnx.name = "a"}, %b: tensor<1x2x3x4xf32> {onnx.name = "b"}) -> (tensor<1x2x6x4xf32> {onnx.name = "y"}) {
    %ax = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %ua = onnx.node "Unsqueeze"(%a, %ax) {outputs = ["ua"]} : (tensor<1x2x3x4xf32>, tensor<1xi64>) -> tensor<1x2x1x3x4xf32>
    %ub = onnx.node "Unsqueeze"(%b, %ax) {outputs = ["ub"]} : (tensor<1x2x3x4xf32>, tensor<1xi64>) -> tensor<1x2x1x3x4xf32>
    %s = onnx.node "Concat"(%ua, %ub) attrs {axis = 2 : i64} {outputs = ["s"]} : (tensor<1x2x1x3x4xf32>, tensor<1x2x1x3x4xf32>) -> tensor<1x2x2x3x4xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 2, 6, 4]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %y = onnx.node "Reshape"(%s, %shape) {outputs = ["y"]} : (tensor<1x2x2x3x4xf32>, tensor<4xi64>) -> tensor<1x2x6x4xf32>
    onnx.yield %y : tensor<1x2x6x4xf32>
  }
}

// -----

// Chunks written back to [B, T, H, D] and concatenated on T are the Transpose
// of their Concat on the [B, H, T, D] time axis.

// CHECK-LABEL: onnx.graph @concat_of_transposes(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x2x3x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<1x2x3x4xf32>
// CHECK: %[[C:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 2 : i64} : {{.*}} -> tensor<1x2x6x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Transpose"(%[[C]]) attrs {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x6x4xf32>) -> tensor<1x6x2x4xf32>
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @concat_of_transposes(%a: tensor<1x2x3x4xf32> {onnx.name = "a"}, %b: tensor<1x2x3x4xf32> {onnx.name = "b"}) -> (tensor<1x6x2x4xf32> {onnx.name = "y"}) {
    %ta = onnx.node "Transpose"(%a) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["ta"]} : (tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32>
    %tb = onnx.node "Transpose"(%b) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["tb"]} : (tensor<1x2x3x4xf32>) -> tensor<1x3x2x4xf32>
    %y = onnx.node "Concat"(%ta, %tb) attrs {axis = 1 : i64} {outputs = ["y"]} : (tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>) -> tensor<1x6x2x4xf32>
    onnx.yield %y : tensor<1x6x2x4xf32>
  }
}

// -----

// out[:, s:e] = o_c into a zero buffer (ScatterND with the indices of each
// window, as torch.onnx exports a slice assignment) is the Concat of the
// chunks in token order, whatever order they were written in.

// CHECK-LABEL: onnx.graph @scatter_windows(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x2x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<1x2x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 1 : i64} : {{.*}} -> tensor<1x4x4xf32>
// CHECK-NOT: "ScatterND"
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scatter_windows(%a: tensor<1x2x4xf32> {onnx.name = "a"}, %b: tensor<1x2x4xf32> {onnx.name = "b"}) -> (tensor<1x4x4xf32> {onnx.name = "y"}) {
    %zeros = onnx.initializer "zeros" dense<0.000000e+00> : tensor<1x4x4xf32>
    %ib = onnx.node "Constant"() attrs {value = dense<[[[0, 2], [0, 3]]]> : tensor<1x2x2xi64>} {outputs = ["ib"]} : () -> tensor<1x2x2xi64>
    %ia = onnx.node "Constant"() attrs {value = dense<[[[0, 0], [0, 1]]]> : tensor<1x2x2xi64>} {outputs = ["ia"]} : () -> tensor<1x2x2xi64>
    %s1 = onnx.node "ScatterND"(%zeros, %ib, %b) {outputs = ["s1"]} : (tensor<1x4x4xf32>, tensor<1x2x2xi64>, tensor<1x2x4xf32>) -> tensor<1x4x4xf32>
    %y = onnx.node "ScatterND"(%s1, %ia, %a) {outputs = ["y"]} : (tensor<1x4x4xf32>, tensor<1x2x2xi64>, tensor<1x2x4xf32>) -> tensor<1x4x4xf32>
    onnx.yield %y : tensor<1x4x4xf32>
  }
}

// -----

// Windows that leave a gap (tokens 2 and 3 stay zero) are no Concat.

// CHECK-LABEL: onnx.graph @scatter_gap(
// CHECK: onnx.node "ScatterND"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scatter_gap(%a: tensor<1x2x4xf32> {onnx.name = "a"}, %b: tensor<1x2x4xf32> {onnx.name = "b"}) -> (tensor<1x6x4xf32> {onnx.name = "y"}) {
    %zeros = onnx.initializer "zeros" dense<0.000000e+00> : tensor<1x6x4xf32>
    %ia = onnx.node "Constant"() attrs {value = dense<[[[0, 0], [0, 1]]]> : tensor<1x2x2xi64>} {outputs = ["ia"]} : () -> tensor<1x2x2xi64>
    %ib = onnx.node "Constant"() attrs {value = dense<[[[0, 4], [0, 5]]]> : tensor<1x2x2xi64>} {outputs = ["ib"]} : () -> tensor<1x2x2xi64>
    %s1 = onnx.node "ScatterND"(%zeros, %ia, %a) {outputs = ["s1"]} : (tensor<1x6x4xf32>, tensor<1x2x2xi64>, tensor<1x2x4xf32>) -> tensor<1x6x4xf32>
    %y = onnx.node "ScatterND"(%s1, %ib, %b) {outputs = ["y"]} : (tensor<1x6x4xf32>, tensor<1x2x2xi64>, tensor<1x2x4xf32>) -> tensor<1x6x4xf32>
    onnx.yield %y : tensor<1x6x4xf32>
  }
}

// -----

// Chunk outputs computed feature-major, `W x_c^T` written into a [B, E, T]
// buffer that is transposed at the end, are the products `x_c W^T` joined on
// the time axis; the dynamo exporter writes the same buffer as a Concat of
// [T, E, B] transposes, which the final transpose undoes.

// CHECK-LABEL: onnx.graph @feature_major_outputs(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x8x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<2x3x4xf32>
// CHECK-DAG: %[[WT:.+]] = onnx.node "Transpose"(%[[W]]) attrs {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
// CHECK-DAG: %[[X0:.+]] = onnx.node "Slice"(%[[X]], %{{[^,]+}}, %[[MID:[^,]+]], %{{[^,]+}}) {{.*}}-> tensor<2x4x4xf32>
// CHECK-DAG: %[[X1:.+]] = onnx.node "Slice"(%[[X]], %[[MID]], %{{[^,]+}}, %{{[^,]+}}) {{.*}}-> tensor<2x4x4xf32>
// CHECK-DAG: %[[O0:.+]] = onnx.node "MatMul"(%[[X0]], %[[WT]]) : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK-DAG: %[[O1:.+]] = onnx.node "MatMul"(%[[X1]], %[[WT]]) : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[O:.+]] = onnx.node "Concat"(%[[O0]], %[[O1]]) attrs {axis = 1 : i64} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x8x3xf32>
// CHECK: onnx.yield %[[O]], %[[O]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @feature_major_outputs(%x: tensor<2x8x4xf32> {onnx.name = "x"}, %w: tensor<2x3x4xf32> {onnx.name = "w"}) -> (tensor<2x8x3xf32> {onnx.name = "o"}, tensor<2x8x3xf32> {onnx.name = "d"}) {
    %ax = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %s0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["s0"]} : () -> tensor<1xi64>
    %s1 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["s1"]} : () -> tensor<1xi64>
    %s2 = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["s2"]} : () -> tensor<1xi64>
    %x0 = onnx.node "Slice"(%x, %s0, %s1, %ax) {outputs = ["x0"]} : (tensor<2x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x4xf32>
    %x1 = onnx.node "Slice"(%x, %s1, %s2, %ax) {outputs = ["x1"]} : (tensor<2x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x4xf32>
    %x0t = onnx.node "Transpose"(%x0) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["x0t"]} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %x1t = onnx.node "Transpose"(%x1) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["x1t"]} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %o0 = onnx.node "MatMul"(%w, %x0t) {outputs = ["o0"]} : (tensor<2x3x4xf32>, tensor<2x4x4xf32>) -> tensor<2x3x4xf32>
    %o1 = onnx.node "MatMul"(%w, %x1t) {outputs = ["o1"]} : (tensor<2x3x4xf32>, tensor<2x4x4xf32>) -> tensor<2x3x4xf32>
    %buf = onnx.node "Concat"(%o0, %o1) attrs {axis = 2 : i64} {outputs = ["buf"]} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
    %o = onnx.node "Transpose"(%buf) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["o"]} : (tensor<2x3x8xf32>) -> tensor<2x8x3xf32>
    %r0 = onnx.node "Transpose"(%o0) attrs {perm = array<i64: 2, 1, 0>} {outputs = ["r0"]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %r1 = onnx.node "Transpose"(%o1) attrs {perm = array<i64: 2, 1, 0>} {outputs = ["r1"]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %rbuf = onnx.node "Concat"(%r0, %r1) attrs {axis = 0 : i64} {outputs = ["rbuf"]} : (tensor<4x3x2xf32>, tensor<4x3x2xf32>) -> tensor<8x3x2xf32>
    %d = onnx.node "Transpose"(%rbuf) attrs {perm = array<i64: 2, 0, 1>} {outputs = ["d"]} : (tensor<8x3x2xf32>) -> tensor<2x8x3xf32>
    onnx.yield %o, %d : tensor<2x8x3xf32>, tensor<2x8x3xf32>
  }
}

// -----

// The dynamo exporter writes `out[:, s:e] = o_c` into the transpose of a
// zero buffer (time first); zeros in any layout are zeros.

// CHECK-LABEL: onnx.graph @scatter_into_transposed_zeros(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x1x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<2x1x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 0 : i64} : {{.*}} -> tensor<4x1x4xf32>
// CHECK-NOT: "ScatterND"
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scatter_into_transposed_zeros(%a: tensor<2x1x4xf32> {onnx.name = "a"}, %b: tensor<2x1x4xf32> {onnx.name = "b"}) -> (tensor<4x1x4xf32> {onnx.name = "y"}) {
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 4, 4]> : tensor<3xi64>} {outputs = ["shape"]} : () -> tensor<3xi64>
    %zeros = onnx.node "ConstantOfShape"(%shape) {outputs = ["zeros"]} : (tensor<3xi64>) -> tensor<1x4x4xf32>
    %zt = onnx.node "Transpose"(%zeros) attrs {perm = array<i64: 1, 0, 2>} {outputs = ["zt"]} : (tensor<1x4x4xf32>) -> tensor<4x1x4xf32>
    %ia = onnx.node "Constant"() attrs {value = dense<[[0], [1]]> : tensor<2x1xi64>} {outputs = ["ia"]} : () -> tensor<2x1xi64>
    %ib = onnx.node "Constant"() attrs {value = dense<[[2], [3]]> : tensor<2x1xi64>} {outputs = ["ib"]} : () -> tensor<2x1xi64>
    %s1 = onnx.node "ScatterND"(%zt, %ia, %a) {outputs = ["s1"]} : (tensor<4x1x4xf32>, tensor<2x1xi64>, tensor<2x1x4xf32>) -> tensor<4x1x4xf32>
    %y = onnx.node "ScatterND"(%s1, %ib, %b) {outputs = ["y"]} : (tensor<4x1x4xf32>, tensor<2x1xi64>, tensor<2x1x4xf32>) -> tensor<4x1x4xf32>
    onnx.yield %y : tensor<4x1x4xf32>
  }
}

// -----

// A stack whose chunks' leading dims the types leave open: the reshape keeps
// the element count, so with every open dim 1 in the target the chunks are
// the target's, and the stack is their Concat.

// CHECK-LABEL: onnx.graph @stack_open_dims(
// CHECK-SAME: %[[A:[^:]+]]: tensor<?x?x3x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<?x?x3x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 2 : i64} : {{.*}} -> tensor<1x1x6x4xf32>
// CHECK-NOT: "Reshape"
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @stack_open_dims(%a: tensor<?x?x3x4xf32> {onnx.name = "a"}, %b: tensor<?x?x3x4xf32> {onnx.name = "b"}) -> (tensor<1x1x6x4xf32> {onnx.name = "y"}) {
    %ax = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %ua = onnx.node "Unsqueeze"(%a, %ax) {outputs = ["ua"]} : (tensor<?x?x3x4xf32>, tensor<1xi64>) -> tensor<?x?x1x3x4xf32>
    %ub = onnx.node "Unsqueeze"(%b, %ax) {outputs = ["ub"]} : (tensor<?x?x3x4xf32>, tensor<1xi64>) -> tensor<?x?x1x3x4xf32>
    %s = onnx.node "Concat"(%ua, %ub) attrs {axis = 2 : i64} {outputs = ["s"]} : (tensor<?x?x1x3x4xf32>, tensor<?x?x1x3x4xf32>) -> tensor<?x?x2x3x4xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 1, 6, 4]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %y = onnx.node "Reshape"(%s, %shape) {outputs = ["y"]} : (tensor<?x?x2x3x4xf32>, tensor<4xi64>) -> tensor<1x1x6x4xf32>
    onnx.yield %y : tensor<1x1x6x4xf32>
  }
}

// -----

// Two open dims that the target does not pin to 1 could split the batch
// differently: the stack stays.

// CHECK-LABEL: onnx.graph @stack_open_dims_unknown(
// CHECK: onnx.node "Reshape"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @stack_open_dims_unknown(%a: tensor<?x?x3x4xf32> {onnx.name = "a"}, %b: tensor<?x?x3x4xf32> {onnx.name = "b"}) -> (tensor<2x3x6x4xf32> {onnx.name = "y"}) {
    %ax = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %ua = onnx.node "Unsqueeze"(%a, %ax) {outputs = ["ua"]} : (tensor<?x?x3x4xf32>, tensor<1xi64>) -> tensor<?x?x1x3x4xf32>
    %ub = onnx.node "Unsqueeze"(%b, %ax) {outputs = ["ub"]} : (tensor<?x?x3x4xf32>, tensor<1xi64>) -> tensor<?x?x1x3x4xf32>
    %s = onnx.node "Concat"(%ua, %ub) attrs {axis = 2 : i64} {outputs = ["s"]} : (tensor<?x?x1x3x4xf32>, tensor<?x?x1x3x4xf32>) -> tensor<?x?x2x3x4xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[2, 3, 6, 4]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %y = onnx.node "Reshape"(%s, %shape) {outputs = ["y"]} : (tensor<?x?x2x3x4xf32>, tensor<4xi64>) -> tensor<2x3x6x4xf32>
    onnx.yield %y : tensor<2x3x6x4xf32>
  }
}

// -----

// Chunk outputs `(W q^T)^T` turned back to [B, T, H, E] one by one and joined
// on T: the layout change moves out of the join, each chunk's swap of its
// innermost axes stays with its product (read as q W^T).

// CHECK-LABEL: onnx.graph @turned_products(
// CHECK-SAME: %[[W:[^:]+]]: tensor<1x2x3x4xf32> {{.*}}, %[[Q0:[^:]+]]: tensor<1x2x5x4xf32> {{.*}}, %[[Q1:[^:]+]]: tensor<1x2x5x4xf32>
// CHECK-DAG: %[[WT:.+]] = onnx.node "Transpose"(%[[W]]) attrs {perm = array<i64: 0, 1, 3, 2>}
// CHECK-DAG: %[[P0:.+]] = onnx.node "MatMul"(%[[Q0]], %[[WT]])
// CHECK-DAG: %[[P1:.+]] = onnx.node "MatMul"(%[[Q1]], %[[WT]])
// CHECK: %[[C:.+]] = onnx.node "Concat"(%[[P0]], %[[P1]]) attrs {axis = 2 : i64} {{.*}} -> tensor<1x2x10x3xf32>
// CHECK: %[[Y:.+]] = onnx.node "Transpose"(%[[C]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @turned_products(%w: tensor<1x2x3x4xf32> {onnx.name = "w"}, %q0: tensor<1x2x5x4xf32> {onnx.name = "q0"}, %q1: tensor<1x2x5x4xf32> {onnx.name = "q1"}) -> (tensor<1x10x2x3xf32> {onnx.name = "y"}) {
    %q0t = onnx.node "Transpose"(%q0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["q0t"]} : (tensor<1x2x5x4xf32>) -> tensor<1x2x4x5xf32>
    %q1t = onnx.node "Transpose"(%q1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["q1t"]} : (tensor<1x2x5x4xf32>) -> tensor<1x2x4x5xf32>
    %p0 = onnx.node "MatMul"(%w, %q0t) {outputs = ["p0"]} : (tensor<1x2x3x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x3x5xf32>
    %p1 = onnx.node "MatMul"(%w, %q1t) {outputs = ["p1"]} : (tensor<1x2x3x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x3x5xf32>
    %o0 = onnx.node "Transpose"(%p0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["o0"]} : (tensor<1x2x3x5xf32>) -> tensor<1x2x5x3xf32>
    %o1 = onnx.node "Transpose"(%p1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["o1"]} : (tensor<1x2x3x5xf32>) -> tensor<1x2x5x3xf32>
    %s = onnx.node "Concat"(%o0, %o1) attrs {axis = 2 : i64} {outputs = ["s"]} : (tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>) -> tensor<1x2x10x3xf32>
    %y = onnx.node "Transpose"(%s) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["y"]} : (tensor<1x2x10x3xf32>) -> tensor<1x10x2x3xf32>
    onnx.yield %y : tensor<1x10x2x3xf32>
  }
}

// -----

// A Loop that appends each chunk output turned back to [B, C, H, D]
// (`outs.append(o.transpose(1, 2))`): the sequence holds the [B, H, C, D]
// chunks, and their join is turned once after the loop.

// CHECK-LABEL: onnx.graph @loop_turned_elements(
// CHECK: onnx.node "Loop"
// CHECK-NOT: "Transpose"
// CHECK: %[[APPENDED:.+]] = onnx.node "SequenceInsert"(%{{.+}}, %[[O:.+]]) {{.*}}
// CHECK: onnx.yield %{{.+}}, %[[APPENDED]]
// CHECK: %[[C:.+]] = onnx.node "ConcatFromSequence"(%{{.+}}) attrs {axis = 2 : i64}
// CHECK: %[[Y:.+]] = onnx.node "Transpose"(%[[C]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @loop_turned_elements(%x: tensor<1x2x8x4xf32> {onnx.name = "x"}) -> (tensor<1x8x2x4xf32> {onnx.name = "y"}) {
    %n = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["n"]} : () -> tensor<i64>
    %t = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["t"]} : () -> tensor<i1>
    %empty = onnx.node "SequenceEmpty"() attrs {dtype = 1 : i64} {outputs = ["empty"]} : () -> !onnx.seq<tensor<*xf32>>
    %seq = onnx.node "Loop"(%n, %t, %empty) attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "c", "acc"], outputs = ["c_out", "acc_out"]>} {outputs = ["seq"]} : (tensor<i64>, tensor<i1>, !onnx.seq<tensor<*xf32>>) -> !onnx.seq<tensor<*xf32>> graphs {
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: !onnx.seq<tensor<*xf32>>):
      %four = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["four"]} : () -> tensor<i64>
      %one = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
      %axis = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["axis"]} : () -> tensor<1xi64>
      %s0 = onnx.node "Mul"(%i, %four) {outputs = ["s0"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %e0 = onnx.node "Add"(%s0, %four) {outputs = ["e0"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %s = onnx.node "Reshape"(%s0, %one) {outputs = ["s"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %e = onnx.node "Reshape"(%e0, %one) {outputs = ["e"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %o = onnx.node "Slice"(%x, %s, %e, %axis) {outputs = ["o"]} : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x?x4xf32>
      %ot = onnx.node "Transpose"(%o) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["ot"]} : (tensor<1x2x?x4xf32>) -> tensor<1x?x2x4xf32>
      %acc2 = onnx.node "SequenceInsert"(%acc, %ot) {outputs = ["acc2"]} : (!onnx.seq<tensor<*xf32>>, tensor<1x?x2x4xf32>) -> !onnx.seq<tensor<*xf32>>
      onnx.yield %c, %acc2 : tensor<i1>, !onnx.seq<tensor<*xf32>>
    }
    %y = onnx.node "ConcatFromSequence"(%seq) attrs {axis = 1 : i64} {outputs = ["y"]} : (!onnx.seq<tensor<*xf32>>) -> tensor<1x8x2x4xf32>
    onnx.yield %y : tensor<1x8x2x4xf32>
  }
}

// -----

// ttt-lm-pytorch's scan writes mini-batch i's output into row i of a
// torch.empty buffer [N, B, H, C, D] (`out[i] = y`: ScatterND of
// `y.reshape(1, ..)`, or the dynamo exporter's ScatterElements of
// `y.unsqueeze(0)`), permutes it to [B, N, C, H, D] and flattens it to
// [B, T, H * D]. The rows tile the buffer, so what it held does not matter;
// the join becomes one Concat of the outputs on their time axis, then the
// layout change.

// CHECK-LABEL: onnx.graph @scan_buffer(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4x5xf32> {{.*}}, %[[B:[^:]+]]: tensor<2x3x4x5xf32>
// CHECK-NOT: "Scatter
// CHECK: %[[J:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 2 : i64} {{.*}} -> tensor<2x3x8x5xf32>
// CHECK: %[[T:.+]] = onnx.node "Transpose"(%[[J]]) attrs {perm = array<i64: 0, 2, 1, 3>} {{.*}} -> tensor<2x8x3x5xf32>
// CHECK: %[[Y:.+]] = onnx.node "Reshape"(%[[T]], %{{.+}}) {{.*}} -> tensor<2x8x15xf32>
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scan_buffer(%a: tensor<2x3x4x5xf32> {onnx.name = "a"}, %b: tensor<2x3x4x5xf32> {onnx.name = "b"}) -> (tensor<2x8x15xf32> {onnx.name = "y"}) {
    %empty = onnx.initializer "empty" dense<7.000000e+00> : tensor<2x2x3x4x5xf32>
    %row = onnx.node "Constant"() attrs {value = dense<[1, 2, 3, 4, 5]> : tensor<5xi64>} {outputs = ["row"]} : () -> tensor<5xi64>
    %a1 = onnx.node "Reshape"(%a, %row) {outputs = ["a1"]} : (tensor<2x3x4x5xf32>, tensor<5xi64>) -> tensor<1x2x3x4x5xf32>
    %i0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1x1xi64>} {outputs = ["i0"]} : () -> tensor<1x1xi64>
    %s0 = onnx.node "ScatterND"(%empty, %i0, %a1) {outputs = ["s0"]} : (tensor<2x2x3x4x5xf32>, tensor<1x1xi64>, tensor<1x2x3x4x5xf32>) -> tensor<2x2x3x4x5xf32>
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %b1 = onnx.node "Unsqueeze"(%b, %zero) {outputs = ["b1"]} : (tensor<2x3x4x5xf32>, tensor<1xi64>) -> tensor<1x2x3x4x5xf32>
    %i1 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1x2x3x4x5xi64>} {outputs = ["i1"]} : () -> tensor<1x2x3x4x5xi64>
    %s1 = onnx.node "ScatterElements"(%s0, %i1, %b1) attrs {axis = 0 : i64} {outputs = ["s1"]} : (tensor<2x2x3x4x5xf32>, tensor<1x2x3x4x5xi64>, tensor<1x2x3x4x5xf32>) -> tensor<2x2x3x4x5xf32>
    %p = onnx.node "Transpose"(%s1) attrs {perm = array<i64: 1, 0, 3, 2, 4>} {outputs = ["p"]} : (tensor<2x2x3x4x5xf32>) -> tensor<2x2x4x3x5xf32>
    %flat = onnx.node "Constant"() attrs {value = dense<[2, 8, 15]> : tensor<3xi64>} {outputs = ["flat"]} : () -> tensor<3xi64>
    %y = onnx.node "Reshape"(%p, %flat) {outputs = ["y"]} : (tensor<2x2x4x3x5xf32>, tensor<3xi64>) -> tensor<2x8x15xf32>
    onnx.yield %y : tensor<2x8x15xf32>
  }
}

// -----

// A ScatterElements whose indices are not one row per write (here row 1
// writes the buffer's rows 0 and 1 alternately) is no window: left alone.

// CHECK-LABEL: onnx.graph @scatter_elements_not_a_row(
// CHECK: onnx.node "ScatterElements"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scatter_elements_not_a_row(%a: tensor<1x2xf32> {onnx.name = "a"}, %b: tensor<1x2xf32> {onnx.name = "b"}) -> (tensor<2x2xf32> {onnx.name = "y"}) {
    %empty = onnx.initializer "empty" dense<0.000000e+00> : tensor<2x2xf32>
    %i0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1x2xi64>} {outputs = ["i0"]} : () -> tensor<1x2xi64>
    %s0 = onnx.node "ScatterElements"(%empty, %i0, %a) attrs {axis = 0 : i64} {outputs = ["s0"]} : (tensor<2x2xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<2x2xf32>
    %i1 = onnx.node "Constant"() attrs {value = dense<[[1, 0]]> : tensor<1x2xi64>} {outputs = ["i1"]} : () -> tensor<1x2xi64>
    %y = onnx.node "ScatterElements"(%s0, %i1, %b) attrs {axis = 0 : i64} {outputs = ["y"]} : (tensor<2x2xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<2x2xf32>
    onnx.yield %y : tensor<2x2xf32>
  }
}

// -----

// Whole chunks joined, then a shorter last chunk joined after them on the same
// axis, are one Concat; a join on another axis, or one that something else
// also reads, stays.

// CHECK-LABEL: onnx.graph @concat_of_concat(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x2x3x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<1x2x3x4xf32> {{.*}}, %[[C:[^:]+]]: tensor<1x2x1x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Concat"(%[[A]], %[[B]], %[[C]]) attrs {axis = 2 : i64} : {{.*}} -> tensor<1x2x7x4xf32>
// CHECK: %[[AB:.+]] = onnx.node "Concat"(%[[A]], %[[B]]) attrs {axis = 3 : i64}
// CHECK: %[[Z:.+]] = onnx.node "Concat"(%[[AB]], %[[AB]]) attrs {axis = 3 : i64}
// CHECK: %[[ABT:.+]] = onnx.node "Concat"(%[[B]], %[[A]]) attrs {axis = 2 : i64}
// CHECK: %[[W:.+]] = onnx.node "Concat"(%[[ABT]], %[[C]]) attrs {axis = 2 : i64}
// CHECK: onnx.yield %[[Y]], %[[Z]], %[[W]], %[[ABT]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @concat_of_concat(%a: tensor<1x2x3x4xf32> {onnx.name = "a"}, %b: tensor<1x2x3x4xf32> {onnx.name = "b"}, %c: tensor<1x2x1x4xf32> {onnx.name = "c"}) -> (tensor<1x2x7x4xf32> {onnx.name = "y"}, tensor<1x2x3x16xf32> {onnx.name = "z"}, tensor<1x2x7x4xf32> {onnx.name = "w"}, tensor<1x2x6x4xf32> {onnx.name = "u"}) {
    %ab = onnx.node "Concat"(%a, %b) attrs {axis = 2 : i64} {outputs = ["ab"]} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x6x4xf32>
    %y = onnx.node "Concat"(%ab, %c) attrs {axis = -2 : i64} {outputs = ["y"]} : (tensor<1x2x6x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x7x4xf32>
    %ab3 = onnx.node "Concat"(%a, %b) attrs {axis = 3 : i64} {outputs = ["ab3"]} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x8xf32>
    %z = onnx.node "Concat"(%ab3, %ab3) attrs {axis = 3 : i64} {outputs = ["z"]} : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x16xf32>
    %u = onnx.node "Concat"(%b, %a) attrs {axis = 2 : i64} {outputs = ["u"]} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x6x4xf32>
    %w = onnx.node "Concat"(%u, %c) attrs {axis = 2 : i64} {outputs = ["w"]} : (tensor<1x2x6x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x7x4xf32>
    onnx.yield %y, %z, %w, %u : tensor<1x2x7x4xf32>, tensor<1x2x3x16xf32>, tensor<1x2x7x4xf32>, tensor<1x2x6x4xf32>
  }
}
