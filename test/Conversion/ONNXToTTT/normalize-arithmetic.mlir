// A difference is a Sub however it is spelled.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// CHECK-LABEL: onnx.graph @differences(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x4xf32> {{.*}}, %[[B:[^:]+]]: tensor<2x4xf32>
// CHECK: %[[ONE:.+]] = onnx.node "Constant"() attrs {value = dense<1.000000e+00> : tensor<f32>}
// CHECK: %[[X:.+]] = onnx.node "Sub"(%[[ONE]], %[[A]]) : (tensor<f32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[Y:.+]] = onnx.node "Sub"(%[[A]], %[[B]]) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// A product with a -1 of a higher rank is not a negation of its operand (it
// changes the shape).
// CHECK: %[[Z:.+]] = onnx.node "Add"(%[[A]], %{{.+}})
// CHECK-NOT: "Neg"
// CHECK: onnx.yield %[[X]], %[[Y]], %[[Z]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @differences(%a: tensor<2x4xf32> {onnx.name = "a"}, %b: tensor<2x4xf32> {onnx.name = "b"}, %c: tensor<4xf32> {onnx.name = "c"}) -> (tensor<2x4xf32> {onnx.name = "x"}, tensor<2x4xf32> {onnx.name = "y"}, tensor<2x4xf32> {onnx.name = "z"}) {
    %one = onnx.node "Constant"() attrs {value = dense<1.0> : tensor<f32>} {outputs = ["one"]} : () -> tensor<f32>
    %minus = onnx.node "Constant"() attrs {value = dense<-1.0> : tensor<f32>} {outputs = ["minus"]} : () -> tensor<f32>
    %na = onnx.node "Neg"(%a) {outputs = ["na"]} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %x = onnx.node "Add"(%na, %one) {outputs = ["x"]} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %mb = onnx.node "Mul"(%b, %minus) {outputs = ["mb"]} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y = onnx.node "Add"(%a, %mb) {outputs = ["y"]} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %minus2 = onnx.node "Constant"() attrs {value = dense<-1.0> : tensor<1x1xf32>} {outputs = ["minus2"]} : () -> tensor<1x1xf32>
    %mc = onnx.node "Mul"(%minus2, %c) {outputs = ["mc"]} : (tensor<1x1xf32>, tensor<4xf32>) -> tensor<1x4xf32>
    %z = onnx.node "Add"(%a, %mc) {outputs = ["z"]} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
    onnx.yield %x, %y, %z : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
}

// -----

// A transposed negation, `W^T + (-D)^T` (a weight stored output x input,
// updated by adding a negated step), is `W^T - D^T`.

// CHECK-LABEL: onnx.graph @transposed_negation(
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x2xf32> {{.*}}, %[[D:[^:]+]]: tensor<2x4xf32>
// CHECK: %[[DT:.+]] = onnx.node "Transpose"(%[[D]]) attrs {perm = array<i64: 1, 0>}
// CHECK: %[[R:.+]] = onnx.node "Sub"(%[[W]], %[[DT]]) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: "Neg"
// CHECK: onnx.yield %[[R]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @transposed_negation(%w: tensor<4x2xf32> {onnx.name = "w"}, %d: tensor<2x4xf32> {onnx.name = "d"}) -> (tensor<4x2xf32> {onnx.name = "r"}) {
    %nd = onnx.node "Neg"(%d) {outputs = ["nd"]} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %ndt = onnx.node "Transpose"(%nd) attrs {perm = array<i64: 1, 0>} {outputs = ["ndt"]} : (tensor<2x4xf32>) -> tensor<4x2xf32>
    %r = onnx.node "Add"(%w, %ndt) {outputs = ["r"]} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    onnx.yield %r : tensor<4x2xf32>
  }
}

// -----

// Two Slices of one vector whose bounds are separate initializers holding the
// same numbers (a hand-written model names each chunk's bounds) are one node;
// float initializers with equal numbers stay two weights.

// CHECK-LABEL: onnx.graph @equal_index_initializers(
// CHECK-SAME: %[[X:[^:]+]]: tensor<8xf32>
// CHECK-DAG: %[[ZERO:.+]] = onnx.initializer "zero"
// CHECK-DAG: %[[N0:.+]] = onnx.initializer "n0"
// CHECK-DAG: %[[W0:.+]] = onnx.initializer "w0"
// CHECK-DAG: %[[W1:.+]] = onnx.initializer "w1"
// CHECK: %[[S:.+]] = onnx.node "Slice"(%[[X]], %[[ZERO]], %[[N0]], %[[ZERO]])
// CHECK-NOT: "Slice"
// CHECK: %[[A:.+]] = onnx.node "Mul"(%[[S]], %[[W0]])
// CHECK: %[[B:.+]] = onnx.node "Mul"(%[[S]], %[[W1]])
// CHECK: onnx.node "Add"(%[[A]], %[[B]])
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @equal_index_initializers(%x: tensor<8xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "r"}) {
    %zero = onnx.initializer "zero" dense<0> : tensor<1xi64>
    %n0 = onnx.initializer "n0" dense<4> : tensor<1xi64>
    %n1 = onnx.initializer "n1" dense<4> : tensor<1xi64>
    %w0 = onnx.initializer "w0" dense<2.0> : tensor<4xf32>
    %w1 = onnx.initializer "w1" dense<2.0> : tensor<4xf32>
    %s0 = onnx.node "Slice"(%x, %zero, %n0, %zero) {outputs = ["s0"]} : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
    %s1 = onnx.node "Slice"(%x, %zero, %n1, %zero) {outputs = ["s1"]} : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
    %a = onnx.node "Mul"(%s0, %w0) {outputs = ["a"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = onnx.node "Mul"(%s1, %w1) {outputs = ["b"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %r = onnx.node "Add"(%a, %b) {outputs = ["r"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    onnx.yield %r : tensor<4xf32>
  }
}

// -----

// torch's F.pad builds Pad's pads by reversing a constant table (a Slice with
// step -1), transposing and flattening it: integer arithmetic, folded.

// CHECK-LABEL: onnx.graph @reversed_pads(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x2x4x4xf32>
// CHECK: %[[PADS:.+]] = onnx.node "Constant"() attrs {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>}
// CHECK: onnx.node "Pad"(%[[X]], %[[PADS]], %{{.+}})
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @reversed_pads(%x: tensor<1x2x4x4xf32> {onnx.name = "x"}) -> (tensor<1x2x6x6xf32> {onnx.name = "r"}) {
    %none = onnx.none
    %table = onnx.node "Constant"() attrs {value = dense<[[1, 1], [1, 1], [0, 0], [0, 0]]> : tensor<4x2xi64>} {outputs = ["table"]} : () -> tensor<4x2xi64>
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %minus = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["minus"]} : () -> tensor<1xi64>
    %least = onnx.node "Constant"() attrs {value = dense<-9223372036854775807> : tensor<1xi64>} {outputs = ["least"]} : () -> tensor<1xi64>
    %rev = onnx.node "Slice"(%table, %minus, %least, %zero, %minus) {outputs = ["rev"]} : (tensor<4x2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x2xi64>
    %t = onnx.node "Transpose"(%rev) attrs {perm = array<i64: 1, 0>} {outputs = ["t"]} : (tensor<4x2xi64>) -> tensor<2x4xi64>
    %flat = onnx.node "Reshape"(%t, %minus) {outputs = ["flat"]} : (tensor<2x4xi64>, tensor<1xi64>) -> tensor<8xi64>
    %r = onnx.node "Pad"(%x, %flat, %none) attrs {mode = "constant"} {outputs = ["r"]} : (tensor<1x2x4x4xf32>, tensor<8xi64>, none) -> tensor<1x2x6x6xf32>
    onnx.yield %r : tensor<1x2x6x6xf32>
  }
}

// -----

// Integer shapes that no tensor has (a ConstantOfShape of [-1], a Reshape to
// [-2, -3], an Expand to [-4]) are not folded: the nodes stay as they were
// (the first aborted the normalization before).

// CHECK-LABEL: onnx.graph @impossible_shapes(
// CHECK: onnx.node "ConstantOfShape"
// CHECK: onnx.node "Reshape"
// CHECK: onnx.node "Expand"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @impossible_shapes(%x: tensor<2xf32> {onnx.name = "x"}) -> (tensor<*xi64> {onnx.name = "a"}, tensor<*xi64> {onnx.name = "b"}, tensor<*xi64> {onnx.name = "c"}) {
    %minus = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["minus"]} : () -> tensor<1xi64>
    %a = onnx.node "ConstantOfShape"(%minus) attrs {value = dense<0> : tensor<1xi64>} {outputs = ["a"]} : (tensor<1xi64>) -> tensor<*xi64>
    %six = onnx.node "Constant"() attrs {value = dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>} {outputs = ["six"]} : () -> tensor<6xi64>
    %odd = onnx.node "Constant"() attrs {value = dense<[-2, -3]> : tensor<2xi64>} {outputs = ["odd"]} : () -> tensor<2xi64>
    %b = onnx.node "Reshape"(%six, %odd) {outputs = ["b"]} : (tensor<6xi64>, tensor<2xi64>) -> tensor<*xi64>
    %one = onnx.node "Constant"() attrs {value = dense<7> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
    %neg = onnx.node "Constant"() attrs {value = dense<-4> : tensor<1xi64>} {outputs = ["neg"]} : () -> tensor<1xi64>
    %c = onnx.node "Expand"(%one, %neg) {outputs = ["c"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<*xi64>
    onnx.yield %a, %b, %c : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
  }
}

// -----

// The logistic function written out, as torch-mlir's linalg lowering writes
// sigmoid (1 / (exp(-x) + 1)), and its reciprocal spelling: Sigmoid. A sum
// divided by the number of elements it adds (or times its inverse) is a
// ReduceMean over the same axes; divided by another number it stays.

// CHECK-LABEL: onnx.graph @written_out(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x8xf32>
// CHECK-DAG: %[[S:.+]] = onnx.node "Sigmoid"(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-DAG: %[[AXES:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>}
// CHECK-DAG: %[[M:.+]] = onnx.node "ReduceMean"(%[[X]], %[[AXES]]) attrs {keepdims = 1 : i64} : (tensor<2x8xf32>, tensor<1xi64>) -> tensor<2x1xf32>
// CHECK-DAG: %[[D:.+]] = onnx.node "Div"(%{{.+}}, %{{.+}}) {outputs = ["d"]}
// CHECK: onnx.yield %[[S]], %[[S]], %[[M]], %[[M]], %[[D]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @written_out(%x: tensor<2x8xf32> {onnx.name = "x"}) -> (tensor<2x8xf32> {onnx.name = "s"}, tensor<2x8xf32> {onnx.name = "r"}, tensor<2x1xf32> {onnx.name = "m"}, tensor<2x1xf32> {onnx.name = "n"}, tensor<2x1xf32> {onnx.name = "d"}) {
    %one = onnx.node "Constant"() attrs {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %neg = onnx.node "Neg"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %exp = onnx.node "Exp"(%neg) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %den = onnx.node "Add"(%exp, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %s = onnx.node "Div"(%one, %den) {outputs = ["s"]} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %den2 = onnx.node "Add"(%one, %exp) : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %r = onnx.node "Reciprocal"(%den2) {outputs = ["r"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %axes = onnx.node "Constant"() attrs {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %sum = onnx.node "ReduceSum"(%x, %axes) attrs {keepdims = 1 : i64} : (tensor<2x8xf32>, tensor<1xi64>) -> tensor<2x1xf32>
    %eight = onnx.node "Constant"() attrs {value = dense<8.0> : tensor<f32>} : () -> tensor<f32>
    %m = onnx.node "Div"(%sum, %eight) {outputs = ["m"]} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
    %eighth = onnx.node "Constant"() attrs {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
    %n = onnx.node "Mul"(%eighth, %sum) {outputs = ["n"]} : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    %seven = onnx.node "Constant"() attrs {value = dense<7.0> : tensor<f32>} : () -> tensor<f32>
    %d = onnx.node "Div"(%sum, %seven) {outputs = ["d"]} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
    onnx.yield %s, %r, %m, %n, %d : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  }
}

// -----

// A Where of a constant lower triangle of booleans (torch-mlir's tril, or a
// hand-written `col <= row` mask) keeping x or 0 is Trilu(x, k); kept where
// the mask is false, it is the upper triangle of the complement. A mask that
// is no triangle stays a Where.

// CHECK-LABEL: onnx.graph @masks(
// CHECK-SAME: %[[S:[^:]+]]: tensor<2x3x3xf32>
// CHECK-DAG: %[[K0:.+]] = onnx.node "Constant"() attrs {value = dense<0> : tensor<i64>}
// CHECK-DAG: %[[K1:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>}
// CHECK-DAG: %[[L:.+]] = onnx.node "Trilu"(%[[S]], %[[K0]]) attrs {upper = 0 : i64}
// CHECK-DAG: %[[U:.+]] = onnx.node "Trilu"(%[[S]], %[[K1]]) attrs {upper = 1 : i64}
// CHECK-DAG: %[[W:.+]] = onnx.node "Where"
// CHECK: onnx.yield %[[L]], %[[U]], %[[W]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @masks(%s: tensor<2x3x3xf32> {onnx.name = "s"}) -> (tensor<2x3x3xf32> {onnx.name = "l"}, tensor<2x3x3xf32> {onnx.name = "u"}, tensor<2x3x3xf32> {onnx.name = "w"}) {
    %zero = onnx.node "Constant"() attrs {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %tril = onnx.node "Constant"() attrs {value = dense<[[[true, false, false], [true, true, false], [true, true, true]]]> : tensor<1x3x3xi1>} : () -> tensor<1x3x3xi1>
    %l = onnx.node "Where"(%tril, %s, %zero) {outputs = ["l"]} : (tensor<1x3x3xi1>, tensor<2x3x3xf32>, tensor<f32>) -> tensor<2x3x3xf32>
    %u = onnx.node "Where"(%tril, %zero, %s) {outputs = ["u"]} : (tensor<1x3x3xi1>, tensor<f32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %odd = onnx.node "Constant"() attrs {value = dense<[[[true, false, true], [true, true, false], [true, true, true]]]> : tensor<1x3x3xi1>} : () -> tensor<1x3x3xi1>
    %w = onnx.node "Where"(%odd, %s, %zero) {outputs = ["w"]} : (tensor<1x3x3xi1>, tensor<2x3x3xf32>, tensor<f32>) -> tensor<2x3x3xf32>
    onnx.yield %l, %u, %w : tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>
  }
}

// -----

// `for s in range(0, T, C)` scripted: chunk i starts at `0 + i * C`, which is
// `i * C`; traced with T known, the trip count `Cast(Ceil(T / C))` of a float
// constant is the integer. A zero added to a broadcast operand (the result
// wider than it) and a Cast of a number that is not whole stay.

// CHECK-LABEL: onnx.graph @loop_arithmetic(
// CHECK-SAME: %[[I:[^:]+]]: tensor<i64>
// CHECK: %[[C:.+]] = onnx.node "Constant"() attrs {value = dense<8> : tensor<i64>}
// CHECK: %[[S:.+]] = onnx.node "Mul"(%[[I]], %[[C]])
// CHECK: %[[WIDE:.+]] = onnx.node "Add"(%[[I]], %{{.+}}) {{.*}}: (tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK: %[[TRIPS:.+]] = onnx.node "Constant"() attrs {value = dense<5> : tensor<i64>}
// CHECK: %[[HALF:.+]] = onnx.node "Cast"(%{{.+}}) attrs {to = 7 : i64} {{.*}}: (tensor<f32>) -> tensor<i64>
// CHECK: onnx.yield %[[S]], %[[WIDE]], %[[TRIPS]], %[[HALF]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @loop_arithmetic(%i: tensor<i64> {onnx.name = "i"}) -> (tensor<i64> {onnx.name = "s"}, tensor<2xi64> {onnx.name = "wide"}, tensor<i64> {onnx.name = "trips"}, tensor<i64> {onnx.name = "half"}) {
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<i64>} {outputs = ["zero"]} : () -> tensor<i64>
    %c = onnx.node "Constant"() attrs {value = dense<8> : tensor<i64>} {outputs = ["c"]} : () -> tensor<i64>
    %ic = onnx.node "Mul"(%i, %c) {outputs = ["ic"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %s = onnx.node "Add"(%zero, %ic) {outputs = ["s"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %zeros = onnx.node "Constant"() attrs {value = dense<0> : tensor<2xi64>} {outputs = ["zeros"]} : () -> tensor<2xi64>
    %wide = onnx.node "Add"(%i, %zeros) {outputs = ["wide"]} : (tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
    %ratio = onnx.node "Constant"() attrs {value = dense<4.5> : tensor<f32>} {outputs = ["ratio"]} : () -> tensor<f32>
    %up = onnx.node "Ceil"(%ratio) {outputs = ["up"]} : (tensor<f32>) -> tensor<f32>
    %trips = onnx.node "Cast"(%up) attrs {to = 7 : i64} {outputs = ["trips"]} : (tensor<f32>) -> tensor<i64>
    %half = onnx.node "Cast"(%ratio) attrs {to = 7 : i64} {outputs = ["half"]} : (tensor<f32>) -> tensor<i64>
    onnx.yield %s, %wide, %trips, %half : tensor<i64>, tensor<2xi64>, tensor<i64>, tensor<i64>
  }
}
