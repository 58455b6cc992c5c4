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
