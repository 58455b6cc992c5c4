// linattn-to-onnx refuses what it cannot export, names the op and why, and
// leaves the graph as it was.
// RUN: ttt-opt %s --linattn-to-onnx --split-input-file -verify-diagnostics

onnx.graph @attention(%q: tensor<?x2x?x4xf32> {onnx.name = "q"}, %v: tensor<?x2x?x3xf32> {onnx.name = "v"}) -> (tensor<?x2x?x3xf32> {onnx.name = "o"}) {
  // expected-error @+1 {{linattn-to-onnx: cannot rewrite 'linattn.attention' into ONNX nodes: linattn.attention is not supported}}
  %o = linattn.attention %q, %q, %v mask = full : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32> -> tensor<?x2x?x3xf32>
  onnx.yield %o : tensor<?x2x?x3xf32>
}

// -----


onnx.graph @other_op(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}) {
  // expected-error @+1 {{cannot rewrite 'arith.addf' into ONNX nodes: it has no ONNX form}}
  %y = arith.addf %x, %x : tensor<4xf32>
  onnx.yield %y : tensor<4xf32>
}

// -----

onnx.graph @strided_slice(%lr: tensor<2x2x8x3xf32> {onnx.name = "lr"}) -> (tensor<2x2x4xf32> {onnx.name = "eta"}) {
  // expected-error @+1 {{cannot rewrite 'tensor.extract_slice' into ONNX nodes: the slice must keep all of dims 0, 1 and 2}}
  %eta = tensor.extract_slice %lr[0, 0, 0, 1] [2, 2, 4, 1] [1, 1, 2, 1] : tensor<2x2x8x3xf32> to tensor<2x2x4xf32>
  onnx.yield %eta : tensor<2x2x4xf32>
}
