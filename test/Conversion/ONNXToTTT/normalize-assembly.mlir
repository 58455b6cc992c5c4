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
