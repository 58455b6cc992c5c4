// linattn-to-onnx refuses what it cannot export, names the op and why, and
// leaves the graph as it was.
// RUN: ttt-opt %s --linattn-to-onnx --split-input-file -verify-diagnostics

onnx.graph @other_op(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}) {
  // expected-error @+1 {{cannot rewrite 'arith.addf' into ONNX nodes: it has no ONNX form}}
  %y = arith.addf %x, %x : tensor<4xf32>
  onnx.yield %y : tensor<4xf32>
}

// -----

onnx.graph @scalar_cast(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}) {
  // expected-error @+1 {{cannot rewrite 'arith.constant' into ONNX nodes: it has no ONNX form}}
  %c = arith.constant 1.0 : f16
  // expected-error @+1 {{cannot rewrite 'arith.extf' into ONNX nodes: a float conversion of a scalar has no ONNX form here}}
  %w = arith.extf %c : f16 to f32
  onnx.yield %x : tensor<4xf32>
}
