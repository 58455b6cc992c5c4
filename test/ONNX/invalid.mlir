// RUN: ttt-opt %s -split-input-file -verify-diagnostics

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<3xf32>) {
  // expected-error @+1 {{output #0 ('') is declared as 'tensor<3xf32>' but the yielded value has type 'tensor<2xf32>'}}
  onnx.yield %x : tensor<2xf32>
}

// -----

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  // expected-error @+1 {{names 2 outputs but has 1 results}}
  %y = onnx.node "Relu"(%x) {outputs = ["a", "b"]} : (tensor<2xf32>) -> tensor<2xf32>
  onnx.yield %y : tensor<2xf32>
}

// -----

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  // expected-error @+1 {{result #0 needs a name; only omitted outputs (type none) have the empty name}}
  %y = onnx.node "Relu"(%x) {outputs = [""]} : (tensor<2xf32>) -> tensor<2xf32>
  onnx.yield %y : tensor<2xf32>
}

// -----

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  // expected-error @+1 {{attribute 'bad' has no ONNX form}}
  %y = onnx.node "Relu"(%x) attrs {bad = unit} : (tensor<2xf32>) -> tensor<2xf32>
  onnx.yield %y : tensor<2xf32>
}

// -----

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  // expected-error @+1 {{region 0 is not referred to by any graph attribute}}
  %y = onnx.node "Foo"(%x) domain "d" : (tensor<2xf32>) -> tensor<2xf32> graphs {
    onnx.yield
  }
  onnx.yield %y : tensor<2xf32>
}

// -----

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  // expected-error @+1 {{a graph attribute refers to region 1 but the node has 1 regions}}
  %y = onnx.node "Foo"(%x) domain "d"
      attrs {g = #onnx.graph<region = 1, name = "b", inputs = [], outputs = []>}
      : (tensor<2xf32>) -> tensor<2xf32> graphs {
    onnx.yield
  }
  onnx.yield %y : tensor<2xf32>
}

// -----

onnx.graph @g(%m: tensor<i64>, %c: tensor<i1>, %s: tensor<4xf32>) -> (tensor<4xf32>) {
  // expected-error @+1 {{its body takes 2 inputs, but a Loop with 1 loop-carried value needs 3}}
  %r = onnx.node "Loop"(%m, %c, %s)
      attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["c", "s"], outputs = ["c2", "s2"]>}
      : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> graphs {
  ^bb0(%bc: tensor<i1>, %bs: tensor<4xf32>):
    onnx.yield %bc, %bs : tensor<i1>, tensor<4xf32>
  }
  onnx.yield %r : tensor<4xf32>
}

// -----

onnx.graph @g(%m: tensor<i64>, %c: tensor<i1>, %s: tensor<4xf32>) -> (tensor<4xf32>) {
  // expected-error @+1 {{its body yields 1 value, but this Loop needs 2: the condition, 1 loop-carried value and 0 scan outputs}}
  %r = onnx.node "Loop"(%m, %c, %s)
      attrs {body = #onnx.graph<region = 0, name = "body", inputs = ["i", "c", "s"], outputs = ["c2"]>}
      : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> graphs {
  ^bb0(%i: tensor<i64>, %bc: tensor<i1>, %bs: tensor<4xf32>):
    onnx.yield %bc : tensor<i1>
  }
  onnx.yield %r : tensor<4xf32>
}

// -----

onnx.graph @g(%c: tensor<i1>) -> (tensor<f32>) {
  // expected-error @+1 {{an If needs a 'else_branch' graph attribute}}
  %r = onnx.node "If"(%c)
      attrs {then_branch = #onnx.graph<region = 0, name = "t", inputs = [], outputs = ["x"]>}
      : (tensor<i1>) -> tensor<f32> graphs {
    %x = onnx.initializer "x" dense<1.0> : tensor<f32>
    onnx.yield %x : tensor<f32>
  }
  onnx.yield %r : tensor<f32>
}

// -----

onnx.graph @g(%s: tensor<4xf32>, %xs: tensor<3x4xf32>) -> (tensor<4xf32>) {
  // expected-error @+1 {{its body takes 1 input, but this Scan needs 2: 1 state and 1 scan input}}
  %r = onnx.node "Scan"(%s, %xs)
      attrs {body = #onnx.graph<region = 0, name = "b", inputs = ["s"], outputs = ["s2"]>,
             num_scan_inputs = 1 : i64}
      : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<4xf32> graphs {
  ^bb0(%bs: tensor<4xf32>):
    onnx.yield %bs : tensor<4xf32>
  }
  onnx.yield %r : tensor<4xf32>
}

// -----

onnx.graph @g(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  %y = onnx.node "Foo"(%x) domain "d"
      attrs {g = #onnx.graph<region = 0, name = "b", inputs = [], outputs = ["o"]>}
      : (tensor<2xf32>) -> tensor<2xf32> graphs {
    // expected-error @+1 {{yields 2 values but subgraph 'b' names 1 outputs}}
    onnx.yield %x, %x : tensor<2xf32>, tensor<2xf32>
  }
  onnx.yield %y : tensor<2xf32>
}

// -----

// expected-error @+1 {{'onnx.dim_params' of input #0 must be one string per dimension of its ranked tensor type 'tensor<2xf32>'}}
onnx.graph @g(%x: tensor<2xf32> {onnx.dim_params = ["a", "b"]}) -> (tensor<2xf32>) {
  onnx.yield %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{'onnx.opset_import' imports domain "" twice}}
module attributes {onnx.opset_import = [#onnx.opset<"", 13>, #onnx.opset<"", 17>]} {
}

// -----

// expected-error @+1 {{opset version of domain "x" must be at least 1, got 0}}
module attributes {onnx.opset_import = [#onnx.opset<"x", 0>]} {
}

// -----

// expected-error @+1 {{unknown onnx dialect attribute 'onnx.frobnicate'}}
module attributes {onnx.frobnicate = 1 : i64} {
}

// -----

onnx.graph @g() -> (tensor<1x!onnx.unknown>) {
  // expected-error @+1 {{has an element type ONNX tensors cannot have}}
  %w = onnx.initializer "w" dense<"a"> : tensor<1x!onnx.unknown>
  onnx.yield %w : tensor<1x!onnx.unknown>
}
