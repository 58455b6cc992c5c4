// RUN: ttt-opt %s -o %t.onnx
// RUN: ttt-opt %t.onnx | FileCheck %s
// RUN: ttt-opt %s --emit=onnx -o %t.emit.bin
// RUN: cmp %t.onnx %t.emit.bin

// IR written by hand (or by a pass) exports to a checked ONNX model: values
// without a name get fresh ones, an output whose value has another name is
// renamed with an Identity node, a graph input with onnx.default becomes an
// initializer of the same name, omitted inputs and outputs become "".

// CHECK:      module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]}
// CHECK:      onnx.graph @hand(%[[X:.+]]: tensor<2x3xf32> {onnx.name = "x"},
// CHECK-SAME:   %[[B:.+]]: tensor<3xf32> {onnx.default = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>, onnx.name = "b"})
// CHECK-SAME:   -> (tensor<2x3xf32> {onnx.name = "y"}, tensor<2x3xf32> {onnx.name = "x_again"})
// CHECK:        %[[NONE:.+]] = onnx.none
// CHECK:        %[[LO:.+]] = onnx.initializer "lo" dense<0.000000e+00> : tensor<f32>
// CHECK:        %[[A:.+]] = onnx.node "Add"(%[[X]], %[[B]]) {outputs = ["ttt_value__0"]}
// CHECK:        %[[Y:.+]] = onnx.node "Clip"(%[[A]], %[[LO]], %[[NONE]]) {node_name = "clip", outputs = ["y"]}
// CHECK-SAME:     : (tensor<2x3xf32>, tensor<f32>, none) -> tensor<2x3xf32>
// CHECK:        %[[XA:.+]] = onnx.node "Identity"(%[[X]]) {outputs = ["x_again"]}
// CHECK:        onnx.yield %[[Y]], %[[XA]]

onnx.graph @hand(%x: tensor<2x3xf32> {onnx.name = "x"},
                 %b: tensor<3xf32> {onnx.name = "b", onnx.default = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>})
    -> (tensor<2x3xf32> {onnx.name = "y"}, tensor<2x3xf32> {onnx.name = "x_again"}) {
  %none = onnx.none
  %lo = onnx.initializer "lo" dense<0.0> : tensor<f32>
  %a = onnx.node "Add"(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = onnx.node "Clip"(%a, %lo, %none) {node_name = "clip"} : (tensor<2x3xf32>, tensor<f32>, none) -> tensor<2x3xf32>
  onnx.yield %y, %x : tensor<2x3xf32>, tensor<2x3xf32>
}
