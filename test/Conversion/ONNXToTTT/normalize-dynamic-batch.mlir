// What torch-mlir writes for a batch of run-time size (`?`), read back as the
// static batch is: the normalizations below take one dim of run-time size.
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
