// RUN: %python %S/Inputs/make_model.py custom_domain %t.onnx
// RUN: ttt-opt %t.onnx | FileCheck %s
// REQUIRES: onnx-python

// An op of a domain ttt does not know is kept with all its attributes, each
// of the ONNX kind it had; shape inference knows nothing of its result.

// CHECK:      onnx.opset_import = [#onnx.opset<"", 17>, #onnx.opset<"com.example", 2>]
// CHECK:      %[[R:.+]] = onnx.node "Relu"
// CHECK:      %[[S:.+]] = onnx.node "FancyScale"(%[[R]], %{{.+}}) domain "com.example"
// CHECK-SAME:   attrs {axes = array<i64: 0, 1>, gains = array<f32: 1.000000e+00, 2.500000e+00>,
// CHECK-SAME:          mode = "fast", table = dense<[4, 5]> : tensor<2xi32>, tag = 7 : i64}
// CHECK-SAME:   {node_name = "fancy", outputs = ["s"]}
// CHECK-SAME:   : (tensor<2x3xf32>, tensor<f32>) -> !onnx.unknown
// CHECK:      onnx.node "Identity"(%[[S]]) {{.*}} : (!onnx.unknown) -> tensor<2x3xf32>
