// A Transpose of a node that another node already computes turned (its
// factors transposed and swapped) becomes that node, so that one weight has
// one spelling (MergeTurnedValues.cpp).
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// `W - (0.5 * relu(s) b)^T`, where the push of the transpose stopped at the
// Relu, next to the fully turned `W - 0.5 * (b^T relu(s)^T)` defined after
// it: the turned product moves up and both outputs read one Sub.

// CHECK-LABEL: onnx.graph @turned_update(
// CHECK-SAME: %[[S:[^:]+]]: tensor<2x8x6xf32> {{.*}}, %[[B:[^:]+]]: tensor<2x6x4xf32> {{.*}}, %[[W:[^:]+]]: tensor<2x4x8xf32>
// CHECK: %[[A:.+]] = onnx.node "Relu"(%[[S]])
// CHECK: %[[BT:.+]] = onnx.node "Transpose"(%[[B]])
// CHECK: %[[AT:.+]] = onnx.node "Transpose"(%[[A]])
// CHECK: %[[MT:.+]] = onnx.node "MatMul"(%[[BT]], %[[AT]])
// CHECK: %[[Y:.+]] = onnx.node "Mul"(%{{.+}}, %[[MT]])
// CHECK: %[[D:.+]] = onnx.node "Sub"(%[[W]], %[[Y]])
// CHECK-NOT: "Sub"
// CHECK: onnx.yield %[[D]], %[[D]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @turned_update(%s: tensor<2x8x6xf32> {onnx.name = "s"}, %b: tensor<2x6x4xf32> {onnx.name = "b"}, %w: tensor<2x4x8xf32> {onnx.name = "w"}) -> (tensor<2x4x8xf32> {onnx.name = "o1"}, tensor<2x4x8xf32> {onnx.name = "o2"}) {
    %c = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["c"]} : () -> tensor<f32>
    %a = onnx.node "Relu"(%s) {outputs = ["a"]} : (tensor<2x8x6xf32>) -> tensor<2x8x6xf32>
    %m = onnx.node "MatMul"(%a, %b) {outputs = ["m"]} : (tensor<2x8x6xf32>, tensor<2x6x4xf32>) -> tensor<2x8x4xf32>
    %x = onnx.node "Mul"(%c, %m) {outputs = ["x"]} : (tensor<f32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %xt = onnx.node "Transpose"(%x) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["xt"]} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
    %o1 = onnx.node "Sub"(%w, %xt) {outputs = ["o1"]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %bt = onnx.node "Transpose"(%b) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["bt"]} : (tensor<2x6x4xf32>) -> tensor<2x4x6xf32>
    %at = onnx.node "Transpose"(%a) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["at"]} : (tensor<2x8x6xf32>) -> tensor<2x6x8xf32>
    %mt = onnx.node "MatMul"(%bt, %at) {outputs = ["mt"]} : (tensor<2x4x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
    %y = onnx.node "Mul"(%c, %mt) {outputs = ["y"]} : (tensor<f32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %o2 = onnx.node "Sub"(%w, %y) {outputs = ["o2"]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    onnx.yield %o1, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  }
}

// -----

// The turned product scales by another constant: not the transpose, and
// the Transpose stays.

// CHECK-LABEL: onnx.graph @other_scale(
// CHECK: %[[XT:.+]] = onnx.node "Transpose"(%{{.+}}) attrs {perm = array<i64: 0, 2, 1>} {{.*}} -> tensor<2x4x8xf32>
// CHECK: %[[D1:.+]] = onnx.node "Sub"(%{{.+}}, %[[XT]])
// CHECK: %[[D2:.+]] = onnx.node "Sub"
// CHECK: onnx.yield %[[D1]], %[[D2]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @other_scale(%s: tensor<2x8x6xf32> {onnx.name = "s"}, %b: tensor<2x6x4xf32> {onnx.name = "b"}, %w: tensor<2x4x8xf32> {onnx.name = "w"}) -> (tensor<2x4x8xf32> {onnx.name = "o1"}, tensor<2x4x8xf32> {onnx.name = "o2"}) {
    %c = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["c"]} : () -> tensor<f32>
    %c2 = onnx.node "Constant"() attrs {value = dense<2.500000e-01> : tensor<f32>} {outputs = ["c2"]} : () -> tensor<f32>
    %a = onnx.node "Relu"(%s) {outputs = ["a"]} : (tensor<2x8x6xf32>) -> tensor<2x8x6xf32>
    %m = onnx.node "MatMul"(%a, %b) {outputs = ["m"]} : (tensor<2x8x6xf32>, tensor<2x6x4xf32>) -> tensor<2x8x4xf32>
    %x = onnx.node "Mul"(%c, %m) {outputs = ["x"]} : (tensor<f32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %xt = onnx.node "Transpose"(%x) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["xt"]} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
    %o1 = onnx.node "Sub"(%w, %xt) {outputs = ["o1"]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %bt = onnx.node "Transpose"(%b) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["bt"]} : (tensor<2x6x4xf32>) -> tensor<2x4x6xf32>
    %at = onnx.node "Transpose"(%a) attrs {perm = array<i64: 0, 2, 1>} {outputs = ["at"]} : (tensor<2x8x6xf32>) -> tensor<2x6x8xf32>
    %mt = onnx.node "MatMul"(%bt, %at) {outputs = ["mt"]} : (tensor<2x4x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
    %y = onnx.node "Mul"(%c2, %mt) {outputs = ["y"]} : (tensor<f32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %o2 = onnx.node "Sub"(%w, %y) {outputs = ["o2"]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    onnx.yield %o1, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  }
}
