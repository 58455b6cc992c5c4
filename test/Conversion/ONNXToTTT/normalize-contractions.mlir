// Contractions become MatMuls of one orientation.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// Einsum with one contracted index: the keys' chunk is transposed in its two
// innermost axes (k^T v), and a weight without the batch index broadcasts.

// CHECK-LABEL: onnx.graph @einsum(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x3x8x4xf32> {{.*}}, %[[K:[^:]+]]: tensor<2x3x8x4xf32> {{.*}}, %[[V:[^:]+]]: tensor<2x3x8x5xf32> {{.*}}, %[[W:[^:]+]]: tensor<3x4x5xf32>
// CHECK: %[[O:.+]] = onnx.node "MatMul"(%[[Q]], %[[W]]) : (tensor<2x3x8x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x8x5xf32>
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x3x8x4xf32>) -> tensor<2x3x4x8xf32>
// CHECK: %[[G:.+]] = onnx.node "MatMul"(%[[KT]], %[[V]]) : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NOT: "Einsum"
// CHECK: onnx.yield %[[O]], %[[G]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @einsum(%q: tensor<2x3x8x4xf32> {onnx.name = "q"}, %k: tensor<2x3x8x4xf32> {onnx.name = "k"}, %v: tensor<2x3x8x5xf32> {onnx.name = "v"}, %w: tensor<3x4x5xf32> {onnx.name = "w"}) -> (tensor<2x3x8x5xf32> {onnx.name = "o"}, tensor<2x3x4x5xf32> {onnx.name = "g"}) {
    %o = onnx.node "Einsum"(%q, %w) attrs {equation = "bhtd,hde->bhte"} {outputs = ["o"]} : (tensor<2x3x8x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x8x5xf32>
    %g = onnx.node "Einsum"(%k, %v) attrs {equation = "bhtd, bhte -> bhde"} {outputs = ["g"]} : (tensor<2x3x8x4xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
    onnx.yield %o, %g : tensor<2x3x8x5xf32>, tensor<2x3x4x5xf32>
  }
}

// -----

// An output in the other order is the transposed product, (a^T b)^T, which
// reads as b^T a; a trace and a sum over one operand are left alone.

// CHECK-LABEL: onnx.graph @einsum_forms(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x8x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<2x8x5xf32>
// CHECK: %[[BT:.+]] = onnx.node "Transpose"(%[[B]]) attrs {perm = array<i64: 0, 2, 1>}
// CHECK: %[[R:.+]] = onnx.node "MatMul"(%[[BT]], %[[A]]) : {{.*}} -> tensor<2x5x4xf32>
// CHECK: onnx.node "Einsum"(%[[A]]) attrs {equation = "btt->b"}
// CHECK: onnx.node "Einsum"(%[[A]], %[[B]]) attrs {equation = "btd,bte->b"}
// CHECK: onnx.yield %[[R]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @einsum_forms(%a: tensor<2x8x4xf32> {onnx.name = "a"}, %b: tensor<2x8x5xf32> {onnx.name = "b"}) -> (tensor<2x5x4xf32> {onnx.name = "r"}, tensor<2xf32> {onnx.name = "t"}, tensor<2xf32> {onnx.name = "s"}) {
    %r = onnx.node "Einsum"(%a, %b) attrs {equation = "btd,bte->bed"} {outputs = ["r"]} : (tensor<2x8x4xf32>, tensor<2x8x5xf32>) -> tensor<2x5x4xf32>
    %t = onnx.node "Einsum"(%a) attrs {equation = "btt->b"} {outputs = ["t"]} : (tensor<2x8x4xf32>) -> tensor<2xf32>
    %s = onnx.node "Einsum"(%a, %b) attrs {equation = "btd,bte->b"} {outputs = ["s"]} : (tensor<2x8x4xf32>, tensor<2x8x5xf32>) -> tensor<2xf32>
    onnx.yield %r, %t, %s : tensor<2x5x4xf32>, tensor<2xf32>, tensor<2xf32>
  }
}

// -----

// A weight stored output x input, applied as (W q^T)^T and moved by
// W + 0.5 v^T k, reads as its transpose applied as q W^T and moved by
// W^T + 0.5 k^T v: the transposes move from results to operands, and the
// transpose of the initial weight (a graph input here; a constant weight's
// transpose is folded) is the one both chunks read.

// CHECK-LABEL: onnx.graph @weight_out_by_in(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x8x4xf32> {{.*}}, %[[K:[^:]+]]: tensor<1x2x8x4xf32> {{.*}}, %[[V:[^:]+]]: tensor<1x2x8x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<2x4x4xf32>
// CHECK: %[[HALF:.+]] = onnx.initializer "half"
// CHECK: %[[WT:.+]] = onnx.node "Transpose"(%[[W]]) attrs {perm = array<i64: 0, 2, 1>}
// CHECK: %[[O0:.+]] = onnx.node "MatMul"(%[[Q]], %[[WT]])
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 1, 3, 2>}
// CHECK: %[[G:.+]] = onnx.node "MatMul"(%[[KT]], %[[V]])
// CHECK: %[[U:.+]] = onnx.node "Mul"(%[[HALF]], %[[G]])
// CHECK: %[[W1:.+]] = onnx.node "Add"(%[[WT]], %[[U]])
// CHECK: %[[O1:.+]] = onnx.node "MatMul"(%[[Q]], %[[W1]])
// CHECK-NOT: "Transpose"
// CHECK: onnx.yield %[[O0]], %[[O1]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @weight_out_by_in(%q: tensor<1x2x8x4xf32> {onnx.name = "q"}, %k: tensor<1x2x8x4xf32> {onnx.name = "k"}, %v: tensor<1x2x8x4xf32> {onnx.name = "v"}, %w: tensor<2x4x4xf32> {onnx.name = "w"}) -> (tensor<1x2x8x4xf32> {onnx.name = "o0"}, tensor<1x2x8x4xf32> {onnx.name = "o1"}) {
    %half = onnx.initializer "half" dense<5.000000e-01> : tensor<f32>
    %qt = onnx.node "Transpose"(%q) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["qt"]} : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
    %p0 = onnx.node "MatMul"(%w, %qt) {outputs = ["p0"]} : (tensor<2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
    %o0 = onnx.node "Transpose"(%p0) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["o0"]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
    %vt = onnx.node "Transpose"(%v) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["vt"]} : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x8xf32>
    %g = onnx.node "MatMul"(%vt, %k) {outputs = ["g"]} : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
    %u = onnx.node "Mul"(%half, %g) {outputs = ["u"]} : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %w1 = onnx.node "Add"(%w, %u) {outputs = ["w1"]} : (tensor<2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %p1 = onnx.node "MatMul"(%w1, %qt) {outputs = ["p1"]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
    %o1 = onnx.node "Transpose"(%p1) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["o1"]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
    onnx.yield %o0, %o1 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
  }
}

// -----

// A vector broadcast along the rows does not transpose; that transpose stays.

// CHECK-LABEL: onnx.graph @vector_operand(
// CHECK: %[[S:.+]] = onnx.node "Add"
// CHECK: onnx.node "Transpose"(%[[S]])
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @vector_operand(%x: tensor<3x4xf32> {onnx.name = "x"}, %b: tensor<4xf32> {onnx.name = "b"}) -> (tensor<4x3xf32> {onnx.name = "y"}) {
    %s = onnx.node "Add"(%x, %b) {outputs = ["s"]} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
    %y = onnx.node "Transpose"(%s) attrs {perm = array<i64: 1, 0>} {outputs = ["y"]} : (tensor<3x4xf32>) -> tensor<4x3xf32>
    onnx.yield %y : tensor<4x3xf32>
  }
}

// -----

// `W h^T` in [B, H, D, T] read back as [B, T, H, D] (research code's
// `bmm(w1, hidden.transpose(1, 2))` on [B, T, H, E] tensors): the product is
// turned round to h W^T in [B, H, T, D], and only the layout change stays.

// CHECK-LABEL: onnx.graph @flipped_product(
// CHECK-SAME: %[[H:[^:]+]]: tensor<2x8x3x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<2x3x5x4xf32>
// CHECK-DAG: %[[WT:.+]] = onnx.node "Transpose"(%[[W]]) attrs {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x3x5x4xf32>) -> tensor<2x3x4x5xf32>
// CHECK-DAG: %[[HT:.+]] = onnx.node "Transpose"(%[[H]]) attrs {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x8x3x4xf32>) -> tensor<2x3x8x4xf32>
// CHECK: %[[P:.+]] = onnx.node "MatMul"(%[[HT]], %[[WT]]) : (tensor<2x3x8x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x8x5xf32>
// CHECK: %[[O:.+]] = onnx.node "Transpose"(%[[P]]) attrs {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x8x5xf32>) -> tensor<2x8x3x5xf32>
// CHECK: onnx.yield %[[O]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @flipped_product(%h: tensor<2x8x3x4xf32> {onnx.name = "h"}, %w: tensor<2x3x5x4xf32> {onnx.name = "w"}) -> (tensor<2x8x3x5xf32> {onnx.name = "o"}) {
    %ht = onnx.node "Transpose"(%h) attrs {perm = array<i64: 0, 2, 3, 1>} {outputs = ["ht"]} : (tensor<2x8x3x4xf32>) -> tensor<2x3x4x8xf32>
    %p = onnx.node "MatMul"(%w, %ht) {outputs = ["p"]} : (tensor<2x3x5x4xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x5x8xf32>
    %o = onnx.node "Transpose"(%p) attrs {perm = array<i64: 0, 3, 1, 2>} {outputs = ["o"]} : (tensor<2x3x5x8xf32>) -> tensor<2x8x3x5xf32>
    onnx.yield %o : tensor<2x8x3x5xf32>
  }
}

// -----

// A layout transpose of an elementwise computation on transposed values
// (research code's `silu(x W0)` on [B, T, H, E] views) moves onto its
// operands, where it cancels.

// CHECK-LABEL: onnx.graph @layout_through_elementwise(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4x5xf32>
// CHECK: %[[S:.+]] = onnx.node "Sigmoid"(%[[A]]) : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK: %[[M:.+]] = onnx.node "Mul"(%[[A]], %[[S]]) : (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NOT: "Transpose"
// CHECK: onnx.yield %[[M]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @layout_through_elementwise(%a: tensor<2x3x4x5xf32> {onnx.name = "a"}) -> (tensor<2x3x4x5xf32> {onnx.name = "o"}) {
    %at = onnx.node "Transpose"(%a) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["at"]} : (tensor<2x3x4x5xf32>) -> tensor<2x4x3x5xf32>
    %s = onnx.node "Sigmoid"(%at) {outputs = ["s"]} : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
    %m = onnx.node "Mul"(%at, %s) {outputs = ["m"]} : (tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
    %o = onnx.node "Transpose"(%m) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["o"]} : (tensor<2x4x3x5xf32>) -> tensor<2x3x4x5xf32>
    onnx.yield %o : tensor<2x3x4x5xf32>
  }
}

// -----

// torch-mlir's 4-D matmul: both factors collapsed to [B*H, .., ..], a batched
// MatMul, the product expanded back. The reshapes only merge the batch dims
// the factors share, so the product is the MatMul of the factors (a factor
// that is the inner transpose of a collapsed chunk becomes the inner
// transpose of the chunk). A reshape of a reshape is one reshape, here of q
// to its own shape: q.

// CHECK-LABEL: onnx.graph @batch_merges(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x8x4xf32> {{.*}}, %[[K:[^:]+]]: tensor<1x2x8x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<1x2x4x5xf32>
// CHECK-DAG: %[[O:.+]] = onnx.node "MatMul"(%[[Q]], %[[W]]) : (tensor<1x2x8x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x8x5xf32>
// CHECK-DAG: %[[KT:.+]] = onnx.node "Transpose"(%[[K]]) attrs {perm = array<i64: 0, 1, 3, 2>}
// CHECK-DAG: %[[G:.+]] = onnx.node "MatMul"(%[[KT]], %[[Q]]) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: onnx.yield %[[O]], %[[G]], %[[Q]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @batch_merges(%q: tensor<1x2x8x4xf32> {onnx.name = "q"}, %k: tensor<1x2x8x4xf32> {onnx.name = "k"}, %w: tensor<1x2x4x5xf32> {onnx.name = "w"}) -> (tensor<1x2x8x5xf32> {onnx.name = "o"}, tensor<1x2x4x4xf32> {onnx.name = "g"}, tensor<1x2x8x4xf32> {onnx.name = "f"}) {
    %s3 = onnx.node "Constant"() attrs {value = dense<[2, 8, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
    %s3w = onnx.node "Constant"() attrs {value = dense<[2, 4, 5]> : tensor<3xi64>} : () -> tensor<3xi64>
    %s4 = onnx.node "Constant"() attrs {value = dense<[1, 2, 8, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
    %s4g = onnx.node "Constant"() attrs {value = dense<[1, 2, 4, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %s4f = onnx.node "Constant"() attrs {value = dense<[1, 2, 8, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %s2 = onnx.node "Constant"() attrs {value = dense<[16, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
    %qf = onnx.node "Reshape"(%q, %s3) : (tensor<1x2x8x4xf32>, tensor<3xi64>) -> tensor<2x8x4xf32>
    %wf = onnx.node "Reshape"(%w, %s3w) : (tensor<1x2x4x5xf32>, tensor<3xi64>) -> tensor<2x4x5xf32>
    %of = onnx.node "MatMul"(%qf, %wf) : (tensor<2x8x4xf32>, tensor<2x4x5xf32>) -> tensor<2x8x5xf32>
    %o = onnx.node "Reshape"(%of, %s4) {outputs = ["o"]} : (tensor<2x8x5xf32>, tensor<4xi64>) -> tensor<1x2x8x5xf32>
    %kf = onnx.node "Reshape"(%k, %s3) : (tensor<1x2x8x4xf32>, tensor<3xi64>) -> tensor<2x8x4xf32>
    %kt = onnx.node "Transpose"(%kf) attrs {perm = array<i64: 0, 2, 1>} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
    %gf = onnx.node "MatMul"(%kt, %qf) : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
    %g = onnx.node "Reshape"(%gf, %s4g) {outputs = ["g"]} : (tensor<2x4x4xf32>, tensor<4xi64>) -> tensor<1x2x4x4xf32>
    %flat = onnx.node "Reshape"(%q, %s2) : (tensor<1x2x8x4xf32>, tensor<2xi64>) -> tensor<16x4xf32>
    %f = onnx.node "Reshape"(%flat, %s4f) {outputs = ["f"]} : (tensor<16x4xf32>, tensor<4xi64>) -> tensor<1x2x8x4xf32>
    onnx.yield %o, %g, %f : tensor<1x2x8x5xf32>, tensor<1x2x4x4xf32>, tensor<1x2x8x4xf32>
  }
}
