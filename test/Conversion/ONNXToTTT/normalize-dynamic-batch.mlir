// What torch-mlir writes for a batch of run-time size (`?`), read back as the
// static batch is: the normalizations below take one dim of run-time size, or
// several where the views' targets copy them from their sources' Shapes.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// A weight stretched to another input's batch for a batched product: in a
// graph read from a linalg program (ttt.may_assume_sizes) the MatMul reads the
// weight, which it broadcasts by itself, and the graph records that it takes
// the two batches as equal (the raise asserts it in the function).
// CHECK-LABEL: onnx.graph @stretched_factor(
// CHECK-SAME: ttt.assumed_equal_sizes = [{a = "y", b = "x", dims = array<i64: 0, 0>, licenses = "e"}]
// CHECK: %[[W:.+]] = onnx.node "Constant"
// CHECK: onnx.node "MatMul"(%x, %[[W]]) : (tensor<?x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<?x2x16x16xf32>
// CHECK-NOT: "Expand"
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @stretched_factor(%x: tensor<?x2x16x8xf32> {onnx.name = "x"}, %y: tensor<?x2x8x16xf32> {onnx.name = "y"}) -> (tensor<?x2x16x16xf32> {onnx.name = "o"}) attributes {ttt.may_assume_sizes} {
    %w = onnx.node "Constant"() attrs {value = dense<1.0> : tensor<1x2x8x16xf32>} {outputs = ["w"]} : () -> tensor<1x2x8x16xf32>
    %s = onnx.node "Shape"(%y) {outputs = ["s"]} : (tensor<?x2x8x16xf32>) -> tensor<4xi64>
    %e = onnx.node "Expand"(%w, %s) {outputs = ["e"]} : (tensor<1x2x8x16xf32>, tensor<4xi64>) -> tensor<?x2x8x16xf32>
    %o = onnx.node "MatMul"(%x, %e) {outputs = ["o"]} : (tensor<?x2x16x8xf32>, tensor<?x2x8x16xf32>) -> tensor<?x2x16x16xf32>
    onnx.yield %o : tensor<?x2x16x16xf32>
  }
}

// -----

// The same in an imported ONNX model: it cannot assert, so the Expand stays.
// CHECK-LABEL: onnx.graph @stretched_factor_of_a_model(
// CHECK-NOT: ttt.assumed_equal_sizes
// CHECK: "Expand"
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @stretched_factor_of_a_model(%x: tensor<?x2x16x8xf32> {onnx.name = "x"}, %y: tensor<?x2x8x16xf32> {onnx.name = "y"}) -> (tensor<?x2x16x16xf32> {onnx.name = "o"}) {
    %w = onnx.node "Constant"() attrs {value = dense<1.0> : tensor<1x2x8x16xf32>} {outputs = ["w"]} : () -> tensor<1x2x8x16xf32>
    %s = onnx.node "Shape"(%y) {outputs = ["s"]} : (tensor<?x2x8x16xf32>) -> tensor<4xi64>
    %e = onnx.node "Expand"(%w, %s) {outputs = ["e"]} : (tensor<1x2x8x16xf32>, tensor<4xi64>) -> tensor<?x2x8x16xf32>
    %o = onnx.node "MatMul"(%x, %e) {outputs = ["o"]} : (tensor<?x2x16x8xf32>, tensor<?x2x8x16xf32>) -> tensor<?x2x16x16xf32>
    onnx.yield %o : tensor<?x2x16x16xf32>
  }
}

// -----

// A sum over a static dim of a tensor with a dynamic batch, divided by that
// dim's size, is a mean.
// CHECK-LABEL: onnx.graph @mean_over_static_dims(
// CHECK: onnx.node "ReduceMean"(%x, %{{.+}}) attrs {keepdims = 1 : i64} : (tensor<?x2x16xf32>, tensor<1xi64>) -> tensor<?x2x1xf32>
// CHECK-NOT: "Div"
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @mean_over_static_dims(%x: tensor<?x2x16xf32> {onnx.name = "x"}) -> (tensor<?x2x1xf32> {onnx.name = "m"}) {
    %axes = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["axes"]} : () -> tensor<1xi64>
    %sum = onnx.node "ReduceSum"(%x, %axes) attrs {keepdims = 1 : i64} {outputs = ["sum"]} : (tensor<?x2x16xf32>, tensor<1xi64>) -> tensor<?x2x1xf32>
    %n = onnx.node "Constant"() attrs {value = dense<16.0> : tensor<f32>} {outputs = ["n"]} : () -> tensor<f32>
    %m = onnx.node "Div"(%sum, %n) {outputs = ["m"]} : (tensor<?x2x1xf32>, tensor<f32>) -> tensor<?x2x1xf32>
    onnx.yield %m : tensor<?x2x1xf32>
  }
}

// -----

// A product of factors whose dynamic batch is merged with the heads (torch-mlir's
// collapse_shape + batch_matmul + expand_shape) is the 4-D product.
// CHECK-LABEL: onnx.graph @merged_dynamic_batch(
// CHECK: %[[P:.+]] = onnx.node "MatMul"(%a, %b) : (tensor<?x2x16x8xf32>, tensor<?x2x8x8xf32>) -> tensor<?x2x16x8xf32>
// CHECK: onnx.yield %[[P]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @merged_dynamic_batch(%a: tensor<?x2x16x8xf32> {onnx.name = "a"}, %b: tensor<?x2x8x8xf32> {onnx.name = "b"}) -> (tensor<?x2x16x8xf32> {onnx.name = "o"}) {
    %s3a = onnx.node "Constant"() attrs {value = dense<[-1, 16, 8]> : tensor<3xi64>} {outputs = ["s3a"]} : () -> tensor<3xi64>
    %s3b = onnx.node "Constant"() attrs {value = dense<[-1, 8, 8]> : tensor<3xi64>} {outputs = ["s3b"]} : () -> tensor<3xi64>
    %s4 = onnx.node "Constant"() attrs {value = dense<[-1, 2, 16, 8]> : tensor<4xi64>} {outputs = ["s4"]} : () -> tensor<4xi64>
    %am = onnx.node "Reshape"(%a, %s3a) {outputs = ["am"]} : (tensor<?x2x16x8xf32>, tensor<3xi64>) -> tensor<?x16x8xf32>
    %bm = onnx.node "Reshape"(%b, %s3b) {outputs = ["bm"]} : (tensor<?x2x8x8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %p = onnx.node "MatMul"(%am, %bm) {outputs = ["p"]} : (tensor<?x16x8xf32>, tensor<?x8x8xf32>) -> tensor<?x16x8xf32>
    %o = onnx.node "Reshape"(%p, %s4) {outputs = ["o"]} : (tensor<?x16x8xf32>, tensor<4xi64>) -> tensor<?x2x16x8xf32>
    onnx.yield %o : tensor<?x2x16x8xf32>
  }
}

// -----

// The same with chunks of run-time length too: each view's target copies the
// length from its source's Shape, which proves the inner dims the same on
// both sides; the product is the 4-D one and the view back is a round trip.
// CHECK-LABEL: onnx.graph @merged_batch_and_length(
// CHECK: %[[P:.+]] = onnx.node "MatMul"(%a, %b) : (tensor<?x2x?x8xf32>, tensor<?x2x8x8xf32>) -> tensor<?x2x?x8xf32>
// CHECK: onnx.yield %[[P]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @merged_batch_and_length(%a: tensor<?x2x?x8xf32> {onnx.name = "a"}, %b: tensor<?x2x8x8xf32> {onnx.name = "b"}) -> (tensor<?x2x?x8xf32> {onnx.name = "o"}) {
    %minus = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["minus"]} : () -> tensor<1xi64>
    %two = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["two"]} : () -> tensor<1xi64>
    %eight = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["eight"]} : () -> tensor<1xi64>
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %i1 = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>} {outputs = ["i1"]} : () -> tensor<i64>
    %i2 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["i2"]} : () -> tensor<i64>
    %sa = onnx.node "Shape"(%a) {outputs = ["sa"]} : (tensor<?x2x?x8xf32>) -> tensor<4xi64>
    %na = onnx.node "Gather"(%sa, %i2) attrs {axis = 0 : i64} {outputs = ["na"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %la = onnx.node "Unsqueeze"(%na, %zero) {outputs = ["la"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %s3a = onnx.node "Concat"(%minus, %la, %eight) attrs {axis = 0 : i64} {outputs = ["s3a"]} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %s3b = onnx.node "Constant"() attrs {value = dense<[-1, 8, 8]> : tensor<3xi64>} {outputs = ["s3b"]} : () -> tensor<3xi64>
    %am = onnx.node "Reshape"(%a, %s3a) {outputs = ["am"]} : (tensor<?x2x?x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
    %bm = onnx.node "Reshape"(%b, %s3b) {outputs = ["bm"]} : (tensor<?x2x8x8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %p = onnx.node "MatMul"(%am, %bm) {outputs = ["p"]} : (tensor<?x?x8xf32>, tensor<?x8x8xf32>) -> tensor<?x?x8xf32>
    %sp = onnx.node "Shape"(%p) {outputs = ["sp"]} : (tensor<?x?x8xf32>) -> tensor<3xi64>
    %np = onnx.node "Gather"(%sp, %i1) attrs {axis = 0 : i64} {outputs = ["np"]} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %lp = onnx.node "Unsqueeze"(%np, %zero) {outputs = ["lp"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %s4 = onnx.node "Concat"(%minus, %two, %lp, %eight) attrs {axis = 0 : i64} {outputs = ["s4"]} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %o = onnx.node "Reshape"(%p, %s4) {outputs = ["o"]} : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x2x?x8xf32>
    onnx.yield %o : tensor<?x2x?x8xf32>
  }
}

// -----

// A view whose length is not a copy of its source's (here the keys' length,
// another tensor's) proves nothing: the batch-merged product stays.
// CHECK-LABEL: onnx.graph @merged_length_not_copied(
// CHECK: onnx.node "MatMul"(%am, %bm) {{.*}}: (tensor<?x?x8xf32>, tensor<?x8x8xf32>)
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @merged_length_not_copied(%a: tensor<?x2x?x8xf32> {onnx.name = "a"}, %k: tensor<?x2x?x8xf32> {onnx.name = "k"}, %b: tensor<?x2x8x8xf32> {onnx.name = "b"}) -> (tensor<?x?x8xf32> {onnx.name = "o"}) {
    %minus = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["minus"]} : () -> tensor<1xi64>
    %eight = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["eight"]} : () -> tensor<1xi64>
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %i2 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["i2"]} : () -> tensor<i64>
    %sk = onnx.node "Shape"(%k) {outputs = ["sk"]} : (tensor<?x2x?x8xf32>) -> tensor<4xi64>
    %nk = onnx.node "Gather"(%sk, %i2) attrs {axis = 0 : i64} {outputs = ["nk"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %lk = onnx.node "Unsqueeze"(%nk, %zero) {outputs = ["lk"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %s3a = onnx.node "Concat"(%minus, %lk, %eight) attrs {axis = 0 : i64} {outputs = ["s3a"]} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %s3b = onnx.node "Constant"() attrs {value = dense<[-1, 8, 8]> : tensor<3xi64>} {outputs = ["s3b"]} : () -> tensor<3xi64>
    %am = onnx.node "Reshape"(%a, %s3a) {outputs = ["am"]} : (tensor<?x2x?x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
    %bm = onnx.node "Reshape"(%b, %s3b) {outputs = ["bm"]} : (tensor<?x2x8x8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %p = onnx.node "MatMul"(%am, %bm) {outputs = ["p"]} : (tensor<?x?x8xf32>, tensor<?x8x8xf32>) -> tensor<?x?x8xf32>
    onnx.yield %p : tensor<?x?x8xf32>
  }
}

// -----

// Views that only add or drop unit dims of a tensor with a dynamic batch
// fold: a view of a view is one view, a transpose that moves only unit dims
// is a view (torch-mlir's einsum plumbing).
// CHECK-LABEL: onnx.graph @unit_views(
// CHECK: %[[V:.+]] = onnx.node "Reshape"(%x, %{{.+}}) : (tensor<?x2x16x8xf32>, tensor<5xi64>) -> tensor<?x2x1x16x8xf32>
// CHECK-NOT: "Transpose"
// CHECK: onnx.yield %[[V]]
module attributes {onnx.ir_version = 9 : i64, onnx.opset_import = [#onnx.opset<"", 20>]} {
  onnx.graph @unit_views(%x: tensor<?x2x16x8xf32> {onnx.name = "x"}) -> (tensor<?x2x1x16x8xf32> {onnx.name = "o"}) {
    %s5 = onnx.node "Constant"() attrs {value = dense<[-1, 2, 16, 8, 1]> : tensor<5xi64>} {outputs = ["s5"]} : () -> tensor<5xi64>
    %s6 = onnx.node "Constant"() attrs {value = dense<[-1, 2, 16, 1, 8]> : tensor<5xi64>} {outputs = ["s6"]} : () -> tensor<5xi64>
    %u = onnx.node "Reshape"(%x, %s5) {outputs = ["u"]} : (tensor<?x2x16x8xf32>, tensor<5xi64>) -> tensor<?x2x16x8x1xf32>
    %t = onnx.node "Transpose"(%u) attrs {perm = array<i64: 0, 1, 2, 4, 3>} {outputs = ["t"]} : (tensor<?x2x16x8x1xf32>) -> tensor<?x2x16x1x8xf32>
    %s7 = onnx.node "Constant"() attrs {value = dense<[-1, 2, 1, 16, 8]> : tensor<5xi64>} {outputs = ["s7"]} : () -> tensor<5xi64>
    %o = onnx.node "Reshape"(%t, %s7) {outputs = ["o"]} : (tensor<?x2x16x1x8xf32>, tensor<5xi64>) -> tensor<?x2x1x16x8xf32>
    onnx.yield %o : tensor<?x2x1x16x8xf32>
  }
}
