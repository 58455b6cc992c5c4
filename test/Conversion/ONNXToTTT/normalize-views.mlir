// Chunks however they are cut become Slices of one tensor.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// A Split with constant sizes is one Slice per piece.

// CHECK-LABEL: onnx.graph @split(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x2x6x4xf32>
// The constant 2 is both the first piece's end and the axis: equal constants
// are merged.
// CHECK-DAG: %[[S0:.+]] = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>}
// CHECK-DAG: %[[TWO:.+]] = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>}
// CHECK: %[[A:.+]] = onnx.node "Slice"(%[[X]], %[[S0]], %[[TWO]], %[[TWO]]) {{.*}} -> tensor<1x2x2x4xf32>
// CHECK: %[[E1:.+]] = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>}
// CHECK: %[[B:.+]] = onnx.node "Slice"(%[[X]], %[[TWO]], %[[E1]], %[[TWO]]) {{.*}} -> tensor<1x2x4x4xf32>
// CHECK-NOT: "Split"
// CHECK: onnx.yield %[[A]], %[[B]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @split(%x: tensor<1x2x6x4xf32> {onnx.name = "x"}) -> (tensor<1x2x2x4xf32> {onnx.name = "a"}, tensor<1x2x4x4xf32> {onnx.name = "b"}) {
    %sizes = onnx.node "Constant"() attrs {value = dense<[2, 4]> : tensor<2xi64>} {outputs = ["sizes"]} : () -> tensor<2xi64>
    %a, %b = onnx.node "Split"(%x, %sizes) attrs {axis = -2 : i64} {outputs = ["a", "b"]} : (tensor<1x2x6x4xf32>, tensor<2xi64>) -> (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>)
    onnx.yield %a, %b : tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>
  }
}

// -----

// Gather(Reshape(x -> [B, H, N, C, D]), i) on the N axis is the i-th chunk of
// C tokens (a negative index counts from the end).

// CHECK-LABEL: onnx.graph @gather_on_reshape(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x2x6x4xf32>
// CHECK-DAG: %[[S:.+]] = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>}
// CHECK-DAG: %[[E:.+]] = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>}
// CHECK-DAG: %[[AX:.+]] = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>}
// CHECK: %[[C:.+]] = onnx.node "Slice"(%[[X]], %[[S]], %[[E]], %[[AX]]) {{.*}} -> tensor<1x2x2x4xf32>
// CHECK-NOT: "Gather"
// CHECK: onnx.yield %[[C]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @gather_on_reshape(%x: tensor<1x2x6x4xf32> {onnx.name = "x"}) -> (tensor<1x2x2x4xf32> {onnx.name = "c"}) {
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 2, 3, 2, 4]> : tensor<5xi64>} {outputs = ["shape"]} : () -> tensor<5xi64>
    %r = onnx.node "Reshape"(%x, %shape) {outputs = ["r"]} : (tensor<1x2x6x4xf32>, tensor<5xi64>) -> tensor<1x2x3x2x4xf32>
    %i = onnx.node "Constant"() attrs {value = dense<-1> : tensor<i64>} {outputs = ["i"]} : () -> tensor<i64>
    %c = onnx.node "Gather"(%r, %i) attrs {axis = 2 : i64} {outputs = ["c"]} : (tensor<1x2x3x2x4xf32>, tensor<i64>) -> tensor<1x2x2x4xf32>
    onnx.yield %c : tensor<1x2x2x4xf32>
  }
}

// -----

// A Reshape that does more than split the gathered axis is left alone.

// CHECK-LABEL: onnx.graph @gather_on_other_reshape(
// CHECK: onnx.node "Gather"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @gather_on_other_reshape(%x: tensor<1x2x6x4xf32> {onnx.name = "x"}) -> (tensor<1x3x4xf32> {onnx.name = "c"}) {
    %shape = onnx.node "Constant"() attrs {value = dense<[1, 4, 3, 4]> : tensor<4xi64>} {outputs = ["shape"]} : () -> tensor<4xi64>
    %r = onnx.node "Reshape"(%x, %shape) {outputs = ["r"]} : (tensor<1x2x6x4xf32>, tensor<4xi64>) -> tensor<1x4x3x4xf32>
    %i = onnx.node "Constant"() attrs {value = dense<0> : tensor<i64>} {outputs = ["i"]} : () -> tensor<i64>
    %c = onnx.node "Gather"(%r, %i) attrs {axis = 1 : i64} {outputs = ["c"]} : (tensor<1x4x3x4xf32>, tensor<i64>) -> tensor<1x3x4xf32>
    onnx.yield %c : tensor<1x3x4xf32>
  }
}

// -----

// A chunk of a [B, T, H, D] tensor moved to [B, H, C, D] is a chunk of the
// moved tensor: the Transpose goes in front of the Slice (one Transpose for
// every chunk), and the Slice's axis moves with it.

// CHECK-LABEL: onnx.graph @transpose_of_slice(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x6x2x4xf32>
// CHECK: %[[T:.+]] = onnx.node "Transpose"(%[[X]]) attrs {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
// CHECK-NOT: "Transpose"
// CHECK-DAG: %[[AX:.+]] = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>}
// CHECK: %[[A:.+]] = onnx.node "Slice"(%[[T]], %{{.+}}, %{{.+}}, %[[AX]]) : {{.*}} -> tensor<1x2x3x4xf32>
// CHECK: %[[B:.+]] = onnx.node "Slice"(%[[T]], %{{.+}}, %{{.+}}, %[[AX]]) : {{.*}} -> tensor<1x2x3x4xf32>
// CHECK: onnx.yield %[[A]], %[[B]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @transpose_of_slice(%x: tensor<1x6x2x4xf32> {onnx.name = "x"}) -> (tensor<1x2x3x4xf32> {onnx.name = "a"}, tensor<1x2x3x4xf32> {onnx.name = "b"}) {
    %s0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["s0"]} : () -> tensor<1xi64>
    %s1 = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>} {outputs = ["s1"]} : () -> tensor<1xi64>
    %s2 = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>} {outputs = ["s2"]} : () -> tensor<1xi64>
    %ax = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %c0 = onnx.node "Slice"(%x, %s0, %s1, %ax) {outputs = ["c0"]} : (tensor<1x6x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x3x2x4xf32>
    %c1 = onnx.node "Slice"(%x, %s1, %s2, %ax) {outputs = ["c1"]} : (tensor<1x6x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x3x2x4xf32>
    %a = onnx.node "Transpose"(%c0) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["a"]} : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
    %b = onnx.node "Transpose"(%c1) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["b"]} : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
    onnx.yield %a, %b : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
  }
}

// -----

// The transpose of a chunk's two innermost axes is how a product reads it
// (k_c^T v_c): it stays where it is. Two transposes that undo each other go.

// CHECK-LABEL: onnx.graph @inner_transposes(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x2x6x4xf32>
// CHECK: %[[C:.+]] = onnx.node "Slice"(%[[X]],
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[C]]) attrs {perm = array<i64: 0, 1, 3, 2>}
// CHECK: onnx.yield %[[KT]], %[[X]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @inner_transposes(%x: tensor<1x2x6x4xf32> {onnx.name = "x"}) -> (tensor<1x2x4x3xf32> {onnx.name = "kt"}, tensor<1x2x6x4xf32> {onnx.name = "y"}) {
    %s0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["s0"]} : () -> tensor<1xi64>
    %s1 = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>} {outputs = ["s1"]} : () -> tensor<1xi64>
    %ax = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %c = onnx.node "Slice"(%x, %s0, %s1, %ax) {outputs = ["c"]} : (tensor<1x2x6x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x3x4xf32>
    %kt = onnx.node "Transpose"(%c) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt"]} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32>
    %t = onnx.node "Transpose"(%x) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["t"]} : (tensor<1x2x6x4xf32>) -> tensor<1x6x2x4xf32>
    %y = onnx.node "Transpose"(%t) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["y"]} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
    onnx.yield %kt, %y : tensor<1x2x4x3xf32>, tensor<1x2x6x4xf32>
  }
}

// -----

// Integer arithmetic on constants is folded (torch builds the indices of a
// slice assignment this way), and so is the transpose of a constant weight; a
// reshape of a static tensor to its own shape goes. A Shape stays: the model
// serves other sizes of its dynamic dims.

// CHECK-LABEL: onnx.graph @constants(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>
// CHECK-DAG: %[[I:.+]] = onnx.node "Constant"() attrs {value = dense<{{\[}}[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi64>}
// CHECK-DAG: %[[WT:.+]] = onnx.node "Constant"() attrs {value = dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK: onnx.yield %[[I]], %[[WT]], %[[X]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @constants(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<2x3xi64> {onnx.name = "i"}, tensor<2x2xf32> {onnx.name = "wt"}, tensor<2x3xf32> {onnx.name = "y"}) {
    %w = onnx.initializer "w" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %shape = onnx.node "Constant"() attrs {value = dense<[2, 3]> : tensor<2xi64>} {outputs = ["shape"]} : () -> tensor<2xi64>
    %one = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
    %n = onnx.node "Gather"(%shape, %one) attrs {axis = 0 : i64} {outputs = ["n"]} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<i64>} {outputs = ["zero"]} : () -> tensor<i64>
    %step = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>} {outputs = ["step"]} : () -> tensor<i64>
    %nn = onnx.node "Squeeze"(%n) {outputs = ["nn"]} : (tensor<1xi64>) -> tensor<i64>
    %r = onnx.node "Range"(%zero, %nn, %step) {outputs = ["r"]} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
    %i = onnx.node "Expand"(%r, %shape) {outputs = ["i"]} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2x3xi64>
    %wt = onnx.node "Transpose"(%w) attrs {perm = array<i64: 1, 0>} {outputs = ["wt"]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %y = onnx.node "Reshape"(%x, %shape) {outputs = ["y"]} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
    onnx.yield %i, %wt, %y : tensor<2x3xi64>, tensor<2x2xf32>, tensor<2x3xf32>
  }
}

// -----

// Hand-written nodes with fewer inputs or results than ONNX allows are left
// alone, not crashed on (a node nothing reads, like the Transpose without a
// result, is dropped as dead).

// CHECK-LABEL: onnx.graph @malformed(
// CHECK: onnx.node "Split"() {outputs = ["a"]}
// CHECK: onnx.node "Transpose"() {outputs = ["t"]}
// CHECK: onnx.node "Reshape"() {outputs = ["r"]}
// CHECK: onnx.node "Einsum"() attrs {equation = "ij,jk->ik"} {outputs = ["e"]}
// CHECK: onnx.node "Slice"() {outputs = ["s"]}
// CHECK: onnx.node "Shape"() {outputs = ["sh"]}
// CHECK-NOT: onnx.node "Transpose"(%x)
// CHECK: onnx.yield
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @malformed(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<2x3xf32> {onnx.name = "a"}, tensor<3x2xf32> {onnx.name = "t"}, tensor<2x3xf32> {onnx.name = "r"}, tensor<2x2xf32> {onnx.name = "e"}, tensor<2x1xf32> {onnx.name = "c"}, tensor<2xi64> {onnx.name = "sh"}) {
    %a = onnx.node "Split"() {outputs = ["a"]} : () -> tensor<2x3xf32>
    %t = onnx.node "Transpose"() {outputs = ["t"]} : () -> tensor<3x2xf32>
    %r = onnx.node "Reshape"() {outputs = ["r"]} : () -> tensor<2x3xf32>
    %e = onnx.node "Einsum"() attrs {equation = "ij,jk->ik"} {outputs = ["e"]} : () -> tensor<2x2xf32>
    %s = onnx.node "Slice"() {outputs = ["s"]} : () -> tensor<2x3xf32>
    %c0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c0"]} : () -> tensor<1xi64>
    %c1 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c1"]} : () -> tensor<1xi64>
    %c = onnx.node "Slice"(%s, %c0, %c1, %c1) {outputs = ["c"]} : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1xf32>
    %sh = onnx.node "Shape"() {outputs = ["sh"]} : () -> tensor<2xi64>
    onnx.node "Transpose"(%x) {outputs = []} : (tensor<2x3xf32>) -> ()
    onnx.yield %a, %t, %r, %e, %c, %sh : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x1xf32>, tensor<2xi64>
  }
}

// -----

// Feature-major chunks (research code's `q.transpose(1, 2)[:, :, s:e]`) that
// a product reads are the transposes of the sequence's chunks; a chunk that
// no product reads (per-token coefficients) stays as it is.

// CHECK-LABEL: onnx.graph @feature_major_chunk(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x8x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<2x3x4xf32> {{.*}}, %[[M:[^:]+]]: tensor<2x8x1xf32>
// CHECK: %[[C:.+]] = onnx.node "Slice"(%[[Q]], %{{.+}}, %{{.+}}, %[[AX:.+]]) : (tensor<2x8x4xf32>, {{.*}}) -> tensor<2x4x4xf32>
// CHECK: %[[CT:.+]] = onnx.node "Transpose"(%[[C]]) attrs {perm = array<i64: 0, 2, 1>} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// CHECK: onnx.node "MatMul"(%[[W]], %[[CT]])
// CHECK: %[[MT:.+]] = onnx.node "Transpose"(%[[M]])
// CHECK: onnx.node "Slice"(%[[MT]],
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @feature_major_chunk(%q: tensor<2x8x4xf32> {onnx.name = "q"}, %w: tensor<2x3x4xf32> {onnx.name = "w"}, %m: tensor<2x8x1xf32> {onnx.name = "m"}) -> (tensor<2x3x4xf32> {onnx.name = "o"}, tensor<2x1x4xf32> {onnx.name = "mc"}) {
    %qt = onnx.node "Transpose"(%q) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["qt"]} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
    %s = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["s"]} : () -> tensor<1xi64>
    %e = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["e"]} : () -> tensor<1xi64>
    %ax = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["ax"]} : () -> tensor<1xi64>
    %qc = onnx.node "Slice"(%qt, %s, %e, %ax) {outputs = ["qc"]} : (tensor<2x4x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x4xf32>
    %o = onnx.node "MatMul"(%w, %qc) {outputs = ["o"]} : (tensor<2x3x4xf32>, tensor<2x4x4xf32>) -> tensor<2x3x4xf32>
    %mt = onnx.node "Transpose"(%m) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["mt"]} : (tensor<2x8x1xf32>) -> tensor<2x1x8xf32>
    %mc = onnx.node "Slice"(%mt, %s, %e, %ax) {outputs = ["mc"]} : (tensor<2x1x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x1x4xf32>
    onnx.yield %o, %mc : tensor<2x3x4xf32>, tensor<2x1x4xf32>
  }
}

// -----

// A Reshape or Expand typed as its input's static shape is its input; a
// target shape spelled as a Concat of constants and an empty piece is read.

// CHECK-LABEL: onnx.graph @typed_noop(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>
// CHECK-NOT: "Reshape"
// CHECK-NOT: "Expand"
// CHECK: onnx.yield %[[X]], %[[X]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @typed_noop(%x: tensor<2x3xf32> {onnx.name = "x"}, %y: tensor<2x3x5xf32> {onnx.name = "y"}) -> (tensor<2x3xf32> {onnx.name = "a"}, tensor<?x?xf32> {onnx.name = "b"}) {
    %shape = onnx.node "Shape"(%x) {outputs = ["shape"]} : (tensor<2x3xf32>) -> tensor<2xi64>
    %a = onnx.node "Expand"(%x, %shape) {outputs = ["a"]} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
    %dims = onnx.node "Constant"() attrs {value = dense<[2, 3]> : tensor<2xi64>} {outputs = ["dims"]} : () -> tensor<2xi64>
    %full = onnx.node "Shape"(%y) {outputs = ["full"]} : (tensor<2x3x5xf32>) -> tensor<3xi64>
    %start = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>} {outputs = ["start"]} : () -> tensor<1xi64>
    %end = onnx.node "Constant"() attrs {value = dense<9223372036854775807> : tensor<1xi64>} {outputs = ["end"]} : () -> tensor<1xi64>
    %rest = onnx.node "Slice"(%full, %start, %end) {outputs = ["rest"]} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<0xi64>
    %target = onnx.node "Concat"(%dims, %rest) attrs {axis = 0 : i64} {outputs = ["target"]} : (tensor<2xi64>, tensor<0xi64>) -> tensor<2xi64>
    %b = onnx.node "Reshape"(%a, %target) {outputs = ["b"]} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    onnx.yield %a, %b : tensor<2x3xf32>, tensor<?x?xf32>
  }
}

// -----

// A chunk's bounds written as Unsqueeze(c) (ONNX's shape inference leaves
// the cut untyped): once they fold, the Slice and the Unsqueeze after it
// get their static types.

// CHECK-LABEL: onnx.graph @refined_types(
// CHECK: %[[CUT:.+]] = onnx.node "Slice"({{.*}}) {{.*}} -> tensor<4x1xf32>
// CHECK: onnx.node "Unsqueeze"(%[[CUT]], {{.*}}) {{.*}} -> tensor<4x1x1xf32>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @refined_types(%m: tensor<4x3xf32> {onnx.name = "m"}) -> (tensor<?x?x1xf32> {onnx.name = "y"}) {
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %c1 = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>} {outputs = ["c1"]} : () -> tensor<i64>
    %c2 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["c2"]} : () -> tensor<i64>
    %start = onnx.node "Unsqueeze"(%c1, %zero) {outputs = ["start"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %end = onnx.node "Unsqueeze"(%c2, %zero) {outputs = ["end"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %axis = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["axis"]} : () -> tensor<1xi64>
    %cut = onnx.node "Slice"(%m, %start, %end, %axis) {outputs = ["cut"]} : (tensor<4x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
    %two = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["two"]} : () -> tensor<1xi64>
    %y = onnx.node "Unsqueeze"(%cut, %two) {outputs = ["y"]} : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
    onnx.yield %y : tensor<?x?x1xf32>
  }
}

// -----

// A chunk of per-token coefficients cut from [B, T, H] and turned to
// [B, H, C] that is only averaged (a momentum per token) is a cut of the
// turned tensor; a chunk a product reads keeps its turn (k_c^T).

// CHECK-LABEL: onnx.graph @turned_coefficients(
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x8x2xf32> {{.*}}, %[[K:[^:]+]]: tensor<1x8x4xf32>
// CHECK-DAG: %[[MT:.+]] = onnx.node "Transpose"(%[[M]]) attrs {perm = array<i64: 0, 2, 1>}
// CHECK-DAG: %[[MC:.+]] = onnx.node "Slice"(%[[MT]], %{{.+}}, %{{.+}}, %{{.+}}) {{.*}} -> tensor<1x2x4xf32>
// CHECK-DAG: onnx.node "ReduceMean"(%[[MC]])
// CHECK-DAG: %[[KC:.+]] = onnx.node "Slice"(%[[K]], {{.*}}) {{.*}} -> tensor<1x4x4xf32>
// CHECK-DAG: onnx.node "Transpose"(%[[KC]]) attrs {perm = array<i64: 0, 2, 1>}
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @turned_coefficients(%m: tensor<1x8x2xf32> {onnx.name = "m"}, %k: tensor<1x8x4xf32> {onnx.name = "k"}) -> (tensor<1x2x1xf32> {onnx.name = "y"}, tensor<1x4x4xf32> {onnx.name = "g"}) {
    %s = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["s"]} : () -> tensor<1xi64>
    %e = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["e"]} : () -> tensor<1xi64>
    %a = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["a"]} : () -> tensor<1xi64>
    %mc = onnx.node "Slice"(%m, %s, %e, %a) {outputs = ["mc"]} : (tensor<1x8x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4x2xf32>
    %mt = onnx.node "Transpose"(%mc) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["mt"]} : (tensor<1x4x2xf32>) -> tensor<1x2x4xf32>
    %y = onnx.node "ReduceMean"(%mt) attrs {axes = array<i64: -1>, keepdims = 1 : i64} {outputs = ["y"]} : (tensor<1x2x4xf32>) -> tensor<1x2x1xf32>
    %kc = onnx.node "Slice"(%k, %s, %e, %a) {outputs = ["kc"]} : (tensor<1x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4x4xf32>
    %kt = onnx.node "Transpose"(%kc) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["kt"]} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %g = onnx.node "MatMul"(%kt, %kc) {outputs = ["g"]} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    onnx.yield %y, %g : tensor<1x2x1xf32>, tensor<1x4x4xf32>
  }
}

// -----

// A Loop body that cuts [B, T, H, D] inputs and turns each chunk to
// [B, H, C, D]: the turned input stands next to the input, outside the
// body, and the body's cuts of it (here two of the same window) merge.

// CHECK-LABEL: onnx.graph @turned_in_loop(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x8x2x4xf32>
// CHECK-NEXT: %[[XT:.+]] = onnx.node "Transpose"(%[[X]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK: onnx.node "Loop"
// CHECK: %[[CUT:.+]] = onnx.node "Slice"(%[[XT]], {{.*}})
// CHECK-NOT: "Slice"
// CHECK: onnx.node "Add"(%[[CUT]], %[[CUT]])
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @turned_in_loop(%x: tensor<1x8x2x4xf32> {onnx.name = "x"}) -> (!onnx.seq<tensor<*xf32>> {onnx.name = "y"}) {
    %n = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["n"]} : () -> tensor<i64>
    %t = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["t"]} : () -> tensor<i1>
    %empty = onnx.node "SequenceEmpty"() attrs {dtype = 1 : i64} {outputs = ["empty"]} : () -> !onnx.seq<tensor<*xf32>>
    %seq = onnx.node "Loop"(%n, %t, %empty) attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "c", "acc"], outputs = ["c_out", "acc_out"]>} {outputs = ["seq"]} : (tensor<i64>, tensor<i1>, !onnx.seq<tensor<*xf32>>) -> !onnx.seq<tensor<*xf32>> graphs {
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: !onnx.seq<tensor<*xf32>>):
      %four = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["four"]} : () -> tensor<i64>
      %one = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
      %s0 = onnx.node "Mul"(%i, %four) {outputs = ["s0"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %e0 = onnx.node "Add"(%s0, %four) {outputs = ["e0"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %s = onnx.node "Reshape"(%s0, %one) {outputs = ["s"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %e = onnx.node "Reshape"(%e0, %one) {outputs = ["e"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %cut = onnx.node "Slice"(%x, %s, %e, %one) {outputs = ["cut"]} : (tensor<1x8x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?x2x4xf32>
      %a = onnx.node "Transpose"(%cut) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["a"]} : (tensor<1x?x2x4xf32>) -> tensor<1x2x?x4xf32>
      %b = onnx.node "Transpose"(%cut) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["b"]} : (tensor<1x?x2x4xf32>) -> tensor<1x2x?x4xf32>
      %sum = onnx.node "Add"(%a, %b) {outputs = ["sum"]} : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
      %acc2 = onnx.node "SequenceInsert"(%acc, %sum) {outputs = ["acc2"]} : (!onnx.seq<tensor<*xf32>>, tensor<1x2x?x4xf32>) -> !onnx.seq<tensor<*xf32>>
      onnx.yield %c, %acc2 : tensor<i1>, !onnx.seq<tensor<*xf32>>
    }
    onnx.yield %seq : !onnx.seq<tensor<*xf32>>
  }
}

// -----

// ttt-lm-pytorch cuts mini-batch i out of `x.reshape(B, N, C, H, D)`
// permuted to [N, B, H, C, D] (x is [B, T, H * D]): the Gather moves in front
// of the permutation, and the reshape that also splits the features becomes
// the split of `x.reshape(B, T, H, D)`, so the chunk is a time window of it.

// CHECK-LABEL: onnx.graph @mini_batch_of_permutation(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x40x32xf32>
// CHECK-NOT: "Gather"
// CHECK: %[[R:.+]] = onnx.node "Reshape"(%[[X]], %{{.+}}) {{.*}} -> tensor<2x40x2x16xf32>
// CHECK: %[[T:.+]] = onnx.node "Transpose"(%[[R]]) attrs {perm = array<i64: 0, 2, 1, 3>} {{.*}} -> tensor<2x2x40x16xf32>
// CHECK: %[[C:.+]] = onnx.node "Slice"(%[[T]], %{{.+}}, %{{.+}}, %{{.+}}) {{.*}} -> tensor<2x2x8x16xf32>
// CHECK: onnx.yield %[[C]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @mini_batch_of_permutation(%x: tensor<2x40x32xf32> {onnx.name = "x"}) -> (tensor<2x2x8x16xf32> {onnx.name = "c"}) {
    %shape = onnx.node "Constant"() attrs {value = dense<[2, 5, 8, 2, 16]> : tensor<5xi64>} {outputs = ["shape"]} : () -> tensor<5xi64>
    %r = onnx.node "Reshape"(%x, %shape) {outputs = ["r"]} : (tensor<2x40x32xf32>, tensor<5xi64>) -> tensor<2x5x8x2x16xf32>
    %p = onnx.node "Transpose"(%r) attrs {perm = array<i64: 1, 0, 3, 2, 4>} {outputs = ["p"]} : (tensor<2x5x8x2x16xf32>) -> tensor<5x2x2x8x16xf32>
    %i = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["i"]} : () -> tensor<i64>
    %c = onnx.node "Gather"(%p, %i) attrs {axis = 0 : i64} {outputs = ["c"]} : (tensor<5x2x2x8x16xf32>, tensor<i64>) -> tensor<2x2x8x16xf32>
    onnx.yield %c : tensor<2x2x8x16xf32>
  }
}

// -----

// Its learning rates: `eta = token_eta [1, 1, 1, C, 1] * lr` for all
// mini-batches, lr being `ttt_lr [B, T, H]` reshaped to [B, N, C, H],
// permuted to [B, H, N, C] and given a unit axis; mini-batch i of eta is the
// product of token_eta and the window [i C, i C + C) of `ttt_lr` turned to
// [B, H, T] (the Gather goes through the product, the broadcast, the unit
// reshape and the permutation, which moves in front of the split).

// CHECK-LABEL: onnx.graph @rates_of_mini_batch(
// CHECK-SAME: %[[LR:[^:]+]]: tensor<2x40x2xf32>
// CHECK-NOT: "Gather"
// CHECK: %[[T:.+]] = onnx.node "Transpose"(%[[LR]]) attrs {perm = array<i64: 0, 2, 1>} {{.*}} -> tensor<2x2x40xf32>
// CHECK-DAG: %[[FROM:.+]] = onnx.node "Constant"() attrs {value = dense<16> : tensor<1xi64>}
// CHECK-DAG: %[[TO:.+]] = onnx.node "Constant"() attrs {value = dense<24> : tensor<1xi64>}
// CHECK: %[[W:.+]] = onnx.node "Slice"(%[[T]], %[[FROM]], %[[TO]], %{{.+}}) {{.*}} -> tensor<2x2x8xf32>
// CHECK: %[[RATES:.+]] = onnx.node "Reshape"(%[[W]], %{{.+}}) {{.*}} -> tensor<2x2x1x8xf32>
// CHECK: %[[E:.+]] = onnx.node "Mul"(%{{.+}}, %[[RATES]]) {{.*}} -> tensor<2x2x8x8xf32>
// CHECK: onnx.yield %[[E]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @rates_of_mini_batch(%lr: tensor<2x40x2xf32> {onnx.name = "ttt_lr"}) -> (tensor<2x2x8x8xf32> {onnx.name = "eta"}) {
    %tok = onnx.initializer "token_eta" dense<0.5> : tensor<1x1x1x8x1xf32>
    %split = onnx.node "Constant"() attrs {value = dense<[2, 5, 8, 2]> : tensor<4xi64>} {outputs = ["split"]} : () -> tensor<4xi64>
    %r = onnx.node "Reshape"(%lr, %split) {outputs = ["r"]} : (tensor<2x40x2xf32>, tensor<4xi64>) -> tensor<2x5x8x2xf32>
    %p = onnx.node "Transpose"(%r) attrs {perm = array<i64: 0, 3, 1, 2>} {outputs = ["p"]} : (tensor<2x5x8x2xf32>) -> tensor<2x2x5x8xf32>
    %unit = onnx.node "Constant"() attrs {value = dense<[2, 2, 5, 1, 8]> : tensor<5xi64>} {outputs = ["unit"]} : () -> tensor<5xi64>
    %u = onnx.node "Reshape"(%p, %unit) {outputs = ["u"]} : (tensor<2x2x5x8xf32>, tensor<5xi64>) -> tensor<2x2x5x1x8xf32>
    %full = onnx.node "Constant"() attrs {value = dense<[2, 2, 5, 8, 1]> : tensor<5xi64>} {outputs = ["full"]} : () -> tensor<5xi64>
    %te = onnx.node "Expand"(%tok, %full) {outputs = ["te"]} : (tensor<1x1x1x8x1xf32>, tensor<5xi64>) -> tensor<2x2x5x8x1xf32>
    %eta = onnx.node "Mul"(%te, %u) {outputs = ["eta"]} : (tensor<2x2x5x8x1xf32>, tensor<2x2x5x1x8xf32>) -> tensor<2x2x5x8x8xf32>
    %i = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["i"]} : () -> tensor<i64>
    %c = onnx.node "Gather"(%eta, %i) attrs {axis = 2 : i64} {outputs = ["c"]} : (tensor<2x2x5x8x8xf32>, tensor<i64>) -> tensor<2x2x8x8xf32>
    onnx.yield %c : tensor<2x2x8x8xf32>
  }
}

// -----

// A constant broadcast over all mini-batches (the dynamo exporter folds
// `token_eta` expanded to [B, H, N, C, 1] into one initializer): each
// mini-batch's row is a constant, and equal rows are one.

// CHECK-LABEL: onnx.graph @rows_of_constant(
// CHECK-NOT: "Gather"
// CHECK: %[[ROW:.+]] = onnx.node "Constant"() attrs {value = dense<{{\[}}[1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>}
// CHECK: onnx.yield %[[ROW]], %[[ROW]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @rows_of_constant() -> (tensor<1x2xf32> {onnx.name = "a"}, tensor<1x2xf32> {onnx.name = "b"}) {
    %e = onnx.initializer "expand" dense<[[[1.0, 2.0]], [[1.0, 2.0]], [[1.0, 2.0]]]> : tensor<3x1x2xf32>
    %i0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<i64>} {outputs = ["i0"]} : () -> tensor<i64>
    %i2 = onnx.node "Constant"() attrs {value = dense<-1> : tensor<i64>} {outputs = ["i2"]} : () -> tensor<i64>
    %a = onnx.node "Gather"(%e, %i0) attrs {axis = 0 : i64} {outputs = ["a"]} : (tensor<3x1x2xf32>, tensor<i64>) -> tensor<1x2xf32>
    %b = onnx.node "Gather"(%e, %i2) attrs {axis = 0 : i64} {outputs = ["b"]} : (tensor<3x1x2xf32>, tensor<i64>) -> tensor<1x2xf32>
    onnx.yield %a, %b : tensor<1x2xf32>, tensor<1x2xf32>
  }
}

// -----

// A graph input's transpose that moves its feature axis before another axis is
// the inner-axes swap of the input turned to [B, H, T, D]: kᵀ of keys given
// [B, T, H, D]. The two Transposes stay two.

// CHECK-LABEL: onnx.graph @turned_input(
// CHECK-SAME: %[[K:[^:]+]]: tensor<1x6x2x4xf32>
// CHECK: %[[SEQ:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 2, 1, 3>} {{.*}} -> tensor<1x2x6x4xf32>
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[SEQ]]) attrs {perm = array<i64: 0, 1, 3, 2>} {{.*}} -> tensor<1x2x4x6xf32>
// CHECK: onnx.yield %[[KT]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @turned_input(%k: tensor<1x6x2x4xf32> {onnx.name = "k"}) -> (tensor<1x2x4x6xf32> {onnx.name = "kt"}) {
    %kt = onnx.node "Transpose"(%k) attrs {perm = array<i64: 0, 2, 3, 1>} {outputs = ["kt"]} : (tensor<1x6x2x4xf32>) -> tensor<1x2x4x6xf32>
    onnx.yield %kt : tensor<1x2x4x6xf32>
  }
}

// -----

// The same pair written out is kept; any other pair of Transposes is one.

// CHECK-LABEL: onnx.graph @kept_pair(
// CHECK-SAME: %[[K:[^:]+]]: tensor<1x6x2x4xf32>
// CHECK: %[[SEQ:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[SEQ]]) attrs {perm = array<i64: 0, 1, 3, 2>}
// CHECK: %[[ONE:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 2, 0, 1, 3>}
// CHECK: onnx.yield %[[KT]], %[[ONE]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @kept_pair(%k: tensor<1x6x2x4xf32> {onnx.name = "k"}) -> (tensor<1x2x4x6xf32> {onnx.name = "kt"}, tensor<2x1x6x4xf32> {onnx.name = "other"}) {
    %seq = onnx.node "Transpose"(%k) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["seq"]} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
    %kt = onnx.node "Transpose"(%seq) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["kt"]} : (tensor<1x2x6x4xf32>) -> tensor<1x2x4x6xf32>
    %other = onnx.node "Transpose"(%seq) attrs {perm = array<i64: 1, 0, 2, 3>} {outputs = ["other"]} : (tensor<1x2x6x4xf32>) -> tensor<2x1x6x4xf32>
    onnx.yield %kt, %other : tensor<1x2x4x6xf32>, tensor<2x1x6x4xf32>
  }
}

// -----

// A cut of another axis of one column: the column of the cut (slices of two
// axes commute), so that the column names one tensor's column.

// CHECK-LABEL: onnx.graph @cut_of_column(
// CHECK-SAME: %[[LR:[^:]+]]: tensor<2x10x3xf32>
// CHECK-DAG: %[[ZERO:.+]] = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>}
// CHECK-DAG: %[[SIX:.+]] = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>}
// CHECK-DAG: %[[ONE:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>}
// CHECK: %[[CUT:.+]] = onnx.node "Slice"(%[[LR]], %[[ZERO]], %[[SIX]], %[[ONE]]) {{.*}} -> tensor<2x6x3xf32>
// CHECK: %[[TWO:.+]] = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>}
// CHECK: %[[COL:.+]] = onnx.node "Slice"(%[[CUT]], %[[ONE]], %[[TWO]], %[[TWO]]) {{.*}} -> tensor<2x6x1xf32>
// CHECK: onnx.yield %[[COL]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @cut_of_column(%lr: tensor<2x10x3xf32> {onnx.name = "lr"}) -> (tensor<2x6x1xf32> {onnx.name = "lr1"}) {
    %c1 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c1"]} : () -> tensor<1xi64>
    %c2 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c2"]} : () -> tensor<1xi64>
    %last = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["last"]} : () -> tensor<1xi64>
    %col = onnx.node "Slice"(%lr, %c1, %c2, %last) {outputs = ["col"]} : (tensor<2x10x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x10x1xf32>
    %c0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c0"]} : () -> tensor<1xi64>
    %c6 = onnx.node "Constant"() attrs {value = dense<6> : tensor<1xi64>} {outputs = ["c6"]} : () -> tensor<1xi64>
    %lr1 = onnx.node "Slice"(%col, %c0, %c6, %c1) {outputs = ["lr1"]} : (tensor<2x10x1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x6x1xf32>
    onnx.yield %lr1 : tensor<2x6x1xf32>
  }
}

// -----

// torch-mlir's einsum: a factor padded with a unit dim, turned round, and
// merged into a batch; the product split with a unit dim, turned, and viewed
// back. A transpose of a unit-dim view is the view of the transpose; a
// transpose that only moves unit dims is a view; views that only add unit
// dims, or that come back to the source's shape, fold.

// CHECK-LABEL: onnx.graph @einsum_views(
// CHECK-SAME: %[[K:[^:]+]]: tensor<2x8x4xf32> {{.*}}, %[[P:[^:]+]]: tensor<2x4x4xf32>
// CHECK-DAG: %[[KT:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 2, 1>} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
// CHECK: onnx.yield %[[KT]], %[[P]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @einsum_views(%k: tensor<2x8x4xf32> {onnx.name = "k"}, %p: tensor<2x4x4xf32> {onnx.name = "p"}) -> (tensor<2x4x8xf32> {onnx.name = "kt"}, tensor<2x4x4xf32> {onnx.name = "back"}) {
    %s4 = onnx.node "Constant"() attrs {value = dense<[2, 8, 4, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
    %s3 = onnx.node "Constant"() attrs {value = dense<[2, 4, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
    %padded = onnx.node "Reshape"(%k, %s4) : (tensor<2x8x4xf32>, tensor<4xi64>) -> tensor<2x8x4x1xf32>
    %turned = onnx.node "Transpose"(%padded) attrs {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x4x1xf32>) -> tensor<2x4x8x1xf32>
    %kt = onnx.node "Reshape"(%turned, %s3) {outputs = ["kt"]} : (tensor<2x4x8x1xf32>, tensor<3xi64>) -> tensor<2x4x8xf32>
    %s8 = onnx.node "Constant"() attrs {value = dense<[8, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
    %flat = onnx.node "Reshape"(%p, %s8) : (tensor<2x4x4xf32>, tensor<2xi64>) -> tensor<8x4xf32>
    %s5 = onnx.node "Constant"() attrs {value = dense<[2, 4, 1, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %split = onnx.node "Reshape"(%flat, %s5) : (tensor<8x4xf32>, tensor<4xi64>) -> tensor<2x4x1x4xf32>
    %moved = onnx.node "Transpose"(%split) attrs {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x1x4xf32>) -> tensor<2x4x4x1xf32>
    %s3p = onnx.node "Constant"() attrs {value = dense<[2, 4, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
    %back = onnx.node "Reshape"(%moved, %s3p) {outputs = ["back"]} : (tensor<2x4x4x1xf32>, tensor<3xi64>) -> tensor<2x4x4xf32>
    onnx.yield %kt, %back : tensor<2x4x8xf32>, tensor<2x4x4xf32>
  }
}

// -----

// torch-mlir reads a parameter per sample through a view that only
// broadcasts it (unit dims put in front, an Expand to the batch); an op that
// broadcasts by itself reads the parameter, as the ONNX exporters write it.

// CHECK-LABEL: onnx.graph @broadcast_views(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x4x4xf32> {{.*}}, %[[M:[^:]+]]: tensor<3x2x4x4xf32> {{.*}}, %[[Q:[^:]+]]: tensor<3x2x8x4xf32>
// CHECK-DAG: %[[SUM:.+]] = onnx.node "Add"(%[[W]], %[[M]]) {{.*}} : (tensor<2x4x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32>
// CHECK-DAG: %[[O:.+]] = onnx.node "MatMul"(%[[Q]], %[[W]]) {{.*}} : (tensor<3x2x8x4xf32>, tensor<2x4x4xf32>) -> tensor<3x2x8x4xf32>
// CHECK-NOT: "Reshape"
// CHECK-NOT: "Expand"
// CHECK: onnx.yield %[[SUM]], %[[O]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @broadcast_views(%w: tensor<2x4x4xf32> {onnx.name = "w"}, %m: tensor<3x2x4x4xf32> {onnx.name = "m"}, %q: tensor<3x2x8x4xf32> {onnx.name = "q"}) -> (tensor<3x2x4x4xf32> {onnx.name = "sum"}, tensor<3x2x8x4xf32> {onnx.name = "o"}) {
    %s1 = onnx.node "Constant"() attrs {value = dense<[1, 2, 4, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %wr = onnx.node "Reshape"(%w, %s1) : (tensor<2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
    %sum = onnx.node "Add"(%wr, %m) {outputs = ["sum"]} : (tensor<1x2x4x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32>
    %s3 = onnx.node "Constant"() attrs {value = dense<[3, 2, 4, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %we = onnx.node "Expand"(%wr, %s3) : (tensor<1x2x4x4xf32>, tensor<4xi64>) -> tensor<3x2x4x4xf32>
    %o = onnx.node "MatMul"(%q, %we) {outputs = ["o"]} : (tensor<3x2x8x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x8x4xf32>
    onnx.yield %sum, %o : tensor<3x2x4x4xf32>, tensor<3x2x8x4xf32>
  }
}

// -----

// The views stay where a reader would read something else: a MatMul operand
// broadcast along a matrix dim, a view that gives the result its batch dim,
// a view of a computed value (the batch merges of torch-mlir's batched
// products read those), and a view that a reader which does not broadcast
// needs: then for every reader, so that all read one spelling of it.

// CHECK-LABEL: onnx.graph @kept_broadcast_views(
// CHECK: %[[COL:.+]] = onnx.node "Expand"
// CHECK: onnx.node "MatMul"({{.*}}, %[[COL]])
// CHECK: %[[LIFT:.+]] = onnx.node "Reshape"
// CHECK: onnx.node "Add"(%[[LIFT]], {{.*}}) {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: %[[VIEW:.+]] = onnx.node "Reshape"
// CHECK: onnx.node "Add"(%[[VIEW]], {{.*}}) {{.*}} -> tensor<3x2x4x4xf32>
// CHECK: %[[NEEDED:.+]] = onnx.node "Reshape"(%u,
// CHECK-DAG: onnx.node "Sigmoid"(%[[NEEDED]])
// CHECK-DAG: onnx.node "Add"(%[[NEEDED]], %m)
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @kept_broadcast_views(%w: tensor<2x4x4xf32> {onnx.name = "w"}, %m: tensor<3x2x4x4xf32> {onnx.name = "m"}, %q: tensor<3x2x8x4xf32> {onnx.name = "q"}, %c: tensor<2x4x1xf32> {onnx.name = "c"}, %s: tensor<4x4xf32> {onnx.name = "s"}, %u: tensor<2x4x4xf32> {onnx.name = "u"}) -> (tensor<3x2x8x4xf32> {onnx.name = "o"}, tensor<1x2x4x4xf32> {onnx.name = "lifted"}, tensor<3x2x4x4xf32> {onnx.name = "sum"}, tensor<1x2x4x4xf32> {onnx.name = "squashed"}, tensor<3x2x4x4xf32> {onnx.name = "shifted"}) {
    %s3 = onnx.node "Constant"() attrs {value = dense<[3, 2, 4, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %col = onnx.node "Expand"(%c, %s3) : (tensor<2x4x1xf32>, tensor<4xi64>) -> tensor<3x2x4x4xf32>
    %o = onnx.node "MatMul"(%q, %col) {outputs = ["o"]} : (tensor<3x2x8x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x8x4xf32>
    %s1 = onnx.node "Constant"() attrs {value = dense<[1, 2, 4, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %wr = onnx.node "Reshape"(%w, %s1) : (tensor<2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
    %lifted = onnx.node "Add"(%wr, %s) {outputs = ["lifted"]} : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
    %n = onnx.node "Sigmoid"(%w) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %nr = onnx.node "Reshape"(%n, %s1) : (tensor<2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
    %sum = onnx.node "Add"(%nr, %m) {outputs = ["sum"]} : (tensor<1x2x4x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32>
    %ur = onnx.node "Reshape"(%u, %s1) : (tensor<2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
    %squashed = onnx.node "Sigmoid"(%ur) {outputs = ["squashed"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %shifted = onnx.node "Add"(%ur, %m) {outputs = ["shifted"]} : (tensor<1x2x4x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32>
    onnx.yield %o, %lifted, %sum, %squashed, %shifted : tensor<3x2x8x4xf32>, tensor<1x2x4x4xf32>, tensor<3x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<3x2x4x4xf32>
  }
}

// -----

// A scripted export spells a weight's batch repeat `w.repeat(B, 1, 1, 1)` as
// an Expand by ones and a Tile by `Concat(B, 1, 1, 1)`, and folds heads into
// the batch with a Reshape whose target is read from shapes. The Expand by
// ones goes; a Tile that repeats only unit axes is that Expand; a Tile of a
// wide axis stays, typed with what its repeats say; the static dims a graph
// input declares (`Shape(q)[3]`, `q.shape[-1:]`) fold, and the Reshape gets
// the dims its target fixes.

// CHECK-LABEL: onnx.graph @scripted_repeats(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<?x2x?x16xf32>
// CHECK-DAG: %[[W:.+]] = onnx.initializer "w" {{.*}} : tensor<1x2x16x16xf32>
// CHECK-DAG: %[[W3:.+]] = onnx.initializer "w3" {{.*}} : tensor<2x16x16xf32>
// CHECK-NOT: "ConstantOfShape"
// CHECK: %[[E:.+]] = onnx.node "Expand"(%[[W]], %[[R4:.+]]) : (tensor<1x2x16x16xf32>, tensor<4xi64>) -> tensor<?x2x16x16xf32>
// CHECK: %[[T:.+]] = onnx.node "Tile"(%[[W3]], %{{.+}}) {{.*}}: (tensor<2x16x16xf32>, tensor<3xi64>) -> tensor<?x16x16xf32>
// CHECK-DAG: %[[LAST:.+]] = onnx.node "Constant"() attrs {value = dense<16> : tensor<1xi64>}
// CHECK-DAG: %[[D:.+]] = onnx.node "Constant"() attrs {value = dense<16> : tensor<i64>}
// CHECK: %[[TARGET:.+]] = onnx.node "Concat"(%{{.+}}, %{{.+}}, %[[LAST]])
// CHECK: %[[F:.+]] = onnx.node "Reshape"(%[[Q]], %[[TARGET]]) {{.*}}: (tensor<?x2x?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
// CHECK: onnx.yield %[[E]], %[[T]], %[[F]], %[[D]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @scripted_repeats(%q: tensor<?x2x?x16xf32> {onnx.dim_params = ["B", "", "T", ""], onnx.name = "q"}) -> (tensor<*xf32> {onnx.name = "e"}, tensor<*xf32> {onnx.name = "t"}, tensor<?x?x?xf32> {onnx.name = "f"}, tensor<i64> {onnx.name = "d"}) {
    %w = onnx.initializer "w" dense<0.5> : tensor<1x2x16x16xf32>
    %w3 = onnx.initializer "w3" dense<0.25> : tensor<2x16x16xf32>
    %shape = onnx.node "Shape"(%q) {outputs = ["shape"]} : (tensor<?x2x?x16xf32>) -> tensor<4xi64>
    %i0 = onnx.node "Constant"() attrs {value = dense<0> : tensor<i64>} {outputs = ["i0"]} : () -> tensor<i64>
    %i2 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["i2"]} : () -> tensor<i64>
    %i3 = onnx.node "Constant"() attrs {value = dense<3> : tensor<i64>} {outputs = ["i3"]} : () -> tensor<i64>
    %axis = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["axis"]} : () -> tensor<1xi64>
    %one = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
    %b = onnx.node "Gather"(%shape, %i0) attrs {axis = 0 : i64} {outputs = ["b"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %b1 = onnx.node "Unsqueeze"(%b, %axis) {outputs = ["b1"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %r4 = onnx.node "Concat"(%b1, %one, %one, %one) attrs {axis = 0 : i64} {outputs = ["r4"]} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %rank = onnx.node "Shape"(%r4) {outputs = ["rank"]} : (tensor<4xi64>) -> tensor<1xi64>
    %ones = onnx.node "ConstantOfShape"(%rank) attrs {value = dense<1> : tensor<1xi64>} {outputs = ["ones"]} : (tensor<1xi64>) -> tensor<?xi64>
    %same = onnx.node "Expand"(%w, %ones) {outputs = ["same"]} : (tensor<1x2x16x16xf32>, tensor<?xi64>) -> tensor<*xf32>
    %e = onnx.node "Tile"(%same, %r4) {outputs = ["e"]} : (tensor<*xf32>, tensor<4xi64>) -> tensor<*xf32>
    %r3 = onnx.node "Concat"(%b1, %one, %one) attrs {axis = 0 : i64} {outputs = ["r3"]} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %t = onnx.node "Tile"(%w3, %r3) {outputs = ["t"]} : (tensor<2x16x16xf32>, tensor<3xi64>) -> tensor<*xf32>
    %len = onnx.node "Gather"(%shape, %i2) attrs {axis = 0 : i64} {outputs = ["len"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %len1 = onnx.node "Unsqueeze"(%len, %axis) {outputs = ["len1"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %d = onnx.node "Gather"(%shape, %i3) attrs {axis = 0 : i64} {outputs = ["d"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %last_start = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["last_start"]} : () -> tensor<1xi64>
    %last_end = onnx.node "Constant"() attrs {value = dense<9223372036854775807> : tensor<1xi64>} {outputs = ["last_end"]} : () -> tensor<1xi64>
    %last = onnx.node "Slice"(%shape, %last_start, %last_end, %axis) {outputs = ["last"]} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %minus = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["minus"]} : () -> tensor<1xi64>
    %target = onnx.node "Concat"(%minus, %len1, %last) attrs {axis = 0 : i64} {outputs = ["target"]} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %f = onnx.node "Reshape"(%q, %target) {outputs = ["f"]} : (tensor<?x2x?x16xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
    onnx.yield %e, %t, %f, %d : tensor<*xf32>, tensor<*xf32>, tensor<?x?x?xf32>, tensor<i64>
  }
}

// -----

// A cut of a cut of one static axis is one cut of the source: chunk 1 of the
// whole chunks [0, 32) of 36 tokens is [8, 16), the rest of them cut again
// to their end clamps to 32; a cut of another axis, or counted from the end,
// stays.

// CHECK-LABEL: onnx.graph @cut_of_cut(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x36x4xf32>
// CHECK-DAG: %[[S8:.+]] = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>}
// CHECK-DAG: %[[E16:.+]] = onnx.node "Constant"() attrs {value = dense<16> : tensor<1xi64>}
// CHECK-DAG: %[[S24:.+]] = onnx.node "Constant"() attrs {value = dense<24> : tensor<1xi64>}
// CHECK-DAG: %[[E32:.+]] = onnx.node "Constant"() attrs {value = dense<32> : tensor<1xi64>}
// CHECK-DAG: %[[A:.+]] = onnx.node "Slice"(%[[X]], %[[S8]], %[[E16]], %{{.+}}) : {{.*}} -> tensor<2x8x4xf32>
// CHECK-DAG: %[[B:.+]] = onnx.node "Slice"(%[[X]], %[[S24]], %[[E32]], %{{.+}}) : {{.*}} -> tensor<2x8x4xf32>
// CHECK-DAG: %[[W:.+]] = onnx.node "Slice"(%[[X]], {{.*}} -> tensor<2x32x4xf32>
// CHECK-DAG: %[[C:.+]] = onnx.node "Slice"(%[[W]], {{.*}} -> tensor<2x32x2xf32>
// CHECK-DAG: %[[D:.+]] = onnx.node "Slice"(%[[W]], {{.*}} -> tensor<2x8x4xf32>
// CHECK: onnx.yield %[[A]], %[[B]], %[[C]], %[[D]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @cut_of_cut(%x: tensor<2x36x4xf32> {onnx.name = "x"}) -> (tensor<2x8x4xf32> {onnx.name = "a"}, tensor<2x8x4xf32> {onnx.name = "b"}, tensor<2x32x2xf32> {onnx.name = "c"}, tensor<2x8x4xf32> {onnx.name = "d"}) {
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %one = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
    %two = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["two"]} : () -> tensor<1xi64>
    %c8 = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["c8"]} : () -> tensor<1xi64>
    %c16 = onnx.node "Constant"() attrs {value = dense<16> : tensor<1xi64>} {outputs = ["c16"]} : () -> tensor<1xi64>
    %c24 = onnx.node "Constant"() attrs {value = dense<24> : tensor<1xi64>} {outputs = ["c24"]} : () -> tensor<1xi64>
    %c32 = onnx.node "Constant"() attrs {value = dense<32> : tensor<1xi64>} {outputs = ["c32"]} : () -> tensor<1xi64>
    %big = onnx.node "Constant"() attrs {value = dense<9223372036854775807> : tensor<1xi64>} {outputs = ["big"]} : () -> tensor<1xi64>
    %minus8 = onnx.node "Constant"() attrs {value = dense<-8> : tensor<1xi64>} {outputs = ["minus8"]} : () -> tensor<1xi64>
    %whole = onnx.node "Slice"(%x, %zero, %c32, %one) {outputs = ["whole"]} : (tensor<2x36x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x32x4xf32>
    %a = onnx.node "Slice"(%whole, %c8, %c16, %one) {outputs = ["a"]} : (tensor<2x32x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8x4xf32>
    %b = onnx.node "Slice"(%whole, %c24, %big, %one) {outputs = ["b"]} : (tensor<2x32x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8x4xf32>
    %c = onnx.node "Slice"(%whole, %zero, %two, %two) {outputs = ["c"]} : (tensor<2x32x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x32x2xf32>
    %d = onnx.node "Slice"(%whole, %minus8, %big, %one) {outputs = ["d"]} : (tensor<2x32x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8x4xf32>
    onnx.yield %a, %b, %c, %d : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x32x2xf32>, tensor<2x8x4xf32>
  }
}
