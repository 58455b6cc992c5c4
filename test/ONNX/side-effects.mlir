// RUN: ttt-opt %s -canonicalize | FileCheck %s

// Nodes of the default domain are functions of their inputs, so unused ones
// may go; random ops, ops of other domains and ops with subgraphs stay.

// CHECK-LABEL: onnx.graph @g
// CHECK-NOT:     "Relu"
// CHECK:         onnx.node "RandomNormalLike"
// CHECK:         onnx.node "Log"(%{{.*}}) domain "com.example"
// CHECK:         onnx.node "If"
// CHECK:         onnx.yield
onnx.graph @g(%x: tensor<2xf32> {onnx.name = "x"}, %c: tensor<i1> {onnx.name = "c"})
    -> (tensor<2xf32> {onnx.name = "y"}) {
  %dead = onnx.node "Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %r = onnx.node "RandomNormalLike"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %l = onnx.node "Log"(%x) domain "com.example" : (tensor<2xf32>) -> tensor<2xf32>
  %i = onnx.node "If"(%c)
      attrs {then_branch = #onnx.graph<region = 0, name = "t", inputs = [], outputs = ["x"]>,
             else_branch = #onnx.graph<region = 1, name = "e", inputs = [], outputs = ["x"]>}
      : (tensor<i1>) -> tensor<2xf32> graphs {
    onnx.yield %x : tensor<2xf32>
  }, {
    onnx.yield %x : tensor<2xf32>
  }
  onnx.yield %x : tensor<2xf32>
}
