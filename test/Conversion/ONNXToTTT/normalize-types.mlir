// The types ONNX's shape inference loses at a constant If come back.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// torch.tile exports an If on whether the repeats outnumber the dims; the
// condition is a constant, so the branch it takes replaces the If, and the
// nodes after it get the static types their inputs fix: the Tile, the
// product and the broadcast Add; the Expand to the slot's own shape then
// is the sum itself.

// CHECK-LABEL: onnx.graph @constant_if(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x2x8x16xf32>
// CHECK-NOT: "If"
// CHECK: %[[T:.+]] = onnx.node "Tile"(%[[W:[^,]+]], %{{.+}}) {{.*}} : (tensor<1x2x16x16xf32>, tensor<4xi64>) -> tensor<2x2x16x16xf32>
// CHECK: %[[P:.+]] = onnx.node "MatMul"(%[[X]], %[[T]]) {{.*}} -> tensor<2x2x8x16xf32>
// CHECK: %[[S:.+]] = onnx.node "Add"(%[[P]], %{{.+}}) {{.*}} -> tensor<2x2x8x16xf32>
// CHECK: %[[R:.+]] = onnx.node "ReduceMean"(%[[S]]) {{.*}} -> tensor<2x2x8x1xf32>
// CHECK-NOT: "Expand"
// A value the graph yields keeps its declared type.
// CHECK: %[[N:.+]] = onnx.node "Neg"(%[[R]]) {{.*}} -> tensor<*xf32>
// CHECK: onnx.yield %[[S]], %[[N]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @constant_if(%x: tensor<2x2x8x16xf32> {onnx.name = "x"}) -> (tensor<2x2x8x16xf32> {onnx.name = "y"}, tensor<*xf32> {onnx.name = "m"}) {
    %w = onnx.initializer "w" dense<0.5> : tensor<1x2x16x16xf32>
    %b = onnx.initializer "b" dense<0.25> : tensor<2x1x16xf32>
    %cond = onnx.initializer "cond" dense<false> : tensor<1xi1>
    %reps = onnx.node "Constant"() attrs {value = dense<[2, 1, 1, 1]> : tensor<4xi64>} {outputs = ["reps"]} : () -> tensor<4xi64>
    %one = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["one"]} : () -> tensor<1xi64>
    %picked = onnx.node "If"(%cond) attrs {else_branch = #onnx.graph<region = 1, name = "else", inputs = [], outputs = ["same"]>, then_branch = #onnx.graph<region = 0, name = "then", inputs = [], outputs = ["longer"]>} {outputs = ["picked"]} : (tensor<1xi1>) -> tensor<*xf32> graphs {
      %longer = onnx.node "Unsqueeze"(%w, %one) {outputs = ["longer"]} : (tensor<1x2x16x16xf32>, tensor<1xi64>) -> tensor<1x1x2x16x16xf32>
      onnx.yield %longer : tensor<1x1x2x16x16xf32>
    }, {
      %same = onnx.node "Identity"(%w) {outputs = ["same"]} : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
      onnx.yield %same : tensor<1x2x16x16xf32>
    }
    %tiled = onnx.node "Tile"(%picked, %reps) {outputs = ["tiled"]} : (tensor<*xf32>, tensor<4xi64>) -> tensor<*xf32>
    %p = onnx.node "MatMul"(%x, %tiled) {outputs = ["p"]} : (tensor<2x2x8x16xf32>, tensor<*xf32>) -> tensor<*xf32>
    %s = onnx.node "Add"(%p, %b) {outputs = ["s"]} : (tensor<*xf32>, tensor<2x1x16xf32>) -> tensor<*xf32>
    %shape = onnx.node "Shape"(%x) {outputs = ["shape"]} : (tensor<2x2x8x16xf32>) -> tensor<4xi64>
    %y = onnx.node "Expand"(%s, %shape) {outputs = ["y"]} : (tensor<*xf32>, tensor<4xi64>) -> tensor<*xf32>
    %m = onnx.node "ReduceMean"(%s) attrs {axes = array<i64: -1>, keepdims = 1 : i64} {outputs = ["m"]} : (tensor<*xf32>) -> tensor<*xf32>
    %n = onnx.node "Neg"(%m) {outputs = ["n"]} : (tensor<*xf32>) -> tensor<*xf32>
    onnx.yield %y, %n : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Nothing is refined against the inputs: a product whose inner dims do not
// agree, and an If whose condition is a graph input, stay as they are.

// CHECK-LABEL: onnx.graph @not_refined(
// CHECK: onnx.node "If"
// CHECK: onnx.node "MatMul"{{.*}} -> tensor<*xf32>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @not_refined(%c: tensor<1xi1> {onnx.name = "c"}, %x: tensor<2x8xf32> {onnx.name = "x"}, %w: tensor<4x3xf32> {onnx.name = "w"}) -> (tensor<*xf32> {onnx.name = "y"}, tensor<*xf32> {onnx.name = "p"}) {
    %y = onnx.node "If"(%c) attrs {else_branch = #onnx.graph<region = 1, name = "else", inputs = [], outputs = ["b"]>, then_branch = #onnx.graph<region = 0, name = "then", inputs = [], outputs = ["a"]>} {outputs = ["y"]} : (tensor<1xi1>) -> tensor<*xf32> graphs {
      %a = onnx.node "Identity"(%x) {outputs = ["a"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
      onnx.yield %a : tensor<2x8xf32>
    }, {
      %b = onnx.node "Neg"(%x) {outputs = ["b"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
      onnx.yield %b : tensor<2x8xf32>
    }
    %p = onnx.node "MatMul"(%x, %w) {outputs = ["p"]} : (tensor<2x8xf32>, tensor<4x3xf32>) -> tensor<*xf32>
    onnx.yield %y, %p : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// An exporter's float-to-float Cast keeps the shape (and gets it); a Cast to
// another element type is left as typed.

// CHECK-LABEL: onnx.graph @casts(
// CHECK: onnx.node "Cast"{{.*}} -> tensor<2x4xf32>
// CHECK: onnx.node "Cast"{{.*}} -> tensor<?x4xf16>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @casts(%x: tensor<2x4xf32> {onnx.name = "x"}) -> (tensor<*xf32> {onnx.name = "y"}, tensor<?x4xf16> {onnx.name = "h"}) {
    %c = onnx.node "Cast"(%x) attrs {to = 1 : i64} {outputs = ["c"]} : (tensor<2x4xf32>) -> tensor<?x4xf32>
    %h = onnx.node "Cast"(%x) attrs {to = 10 : i64} {outputs = ["h"]} : (tensor<2x4xf32>) -> tensor<?x4xf16>
    %n = onnx.node "Neg"(%c) {outputs = ["n"]} : (tensor<?x4xf32>) -> tensor<*xf32>
    %m = onnx.node "Neg"(%h) {outputs = ["m"]} : (tensor<?x4xf16>) -> tensor<?x4xf16>
    onnx.yield %n, %m : tensor<*xf32>, tensor<?x4xf16>
  }
}

// -----

// The shape of a statically shaped graph input is a constant, and so is the
// arithmetic on it (a traced `lr.chunk(3, -1)` cuts at (3 + 2) / 3); the
// shape of a computed value stays.

// CHECK-LABEL: onnx.graph @static_input_shape(
// CHECK-SAME: %[[LR:[^:]+]]: tensor<2x10x3xf32>
// CHECK-NOT: "Shape"(%[[LR]])
// CHECK: %[[END:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>}
// CHECK: "Slice"(%[[LR]], %{{.*}}, %[[END]], %{{.*}})
// CHECK: "Shape"(%{{.*}})
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @static_input_shape(%lr: tensor<2x10x3xf32> {onnx.name = "lr"}) -> (tensor<2x10x1xf32> {onnx.name = "lr0"}, tensor<3xi64> {onnx.name = "s"}) {
    %shape = onnx.node "Shape"(%lr) {outputs = ["shape"]} : (tensor<2x10x3xf32>) -> tensor<3xi64>
    %last = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["last"]} : () -> tensor<1xi64>
    %dim = onnx.node "Gather"(%shape, %last) attrs {axis = 0 : i64} {outputs = ["dim"]} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
    %two = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["two"]} : () -> tensor<1xi64>
    %sum = onnx.node "Add"(%dim, %two) {outputs = ["sum"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %three = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>} {outputs = ["three"]} : () -> tensor<1xi64>
    %size = onnx.node "Div"(%sum, %three) {outputs = ["size"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %zero = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["zero"]} : () -> tensor<1xi64>
    %lr0 = onnx.node "Slice"(%lr, %zero, %size, %last) {outputs = ["lr0"]} : (tensor<2x10x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x10x1xf32>
    %neg = onnx.node "Neg"(%lr) {outputs = ["neg"]} : (tensor<2x10x3xf32>) -> tensor<2x10x3xf32>
    %s = onnx.node "Shape"(%neg) {outputs = ["s"]} : (tensor<2x10x3xf32>) -> tensor<3xi64>
    onnx.yield %lr0, %s : tensor<2x10x1xf32>, tensor<3xi64>
  }
}

// -----

// A Reshape whose inputs are swapped (its shape a 2-D table: not a model
// onnxruntime runs, but one the reader takes) has a result of unknown type;
// it is no tensor to type, and the node stays as it was.

// CHECK-LABEL: onnx.graph @reshape_of_unknown_type(
// CHECK: onnx.node "Reshape"(%{{.+}}, %{{.+}}) {{.*}} : (tensor<1xi64>, tensor<2x4xi64>) -> !onnx.unknown
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @reshape_of_unknown_type(%x: tensor<4x2xi64> {onnx.name = "x"}) -> (!onnx.unknown {onnx.name = "y"}) {
    %data = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["data"]} : () -> tensor<1xi64>
    %table = onnx.node "Constant"() attrs {value = dense<[[1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xi64>} {outputs = ["table"]} : () -> tensor<4x2xi64>
    %turned = onnx.node "Transpose"(%table) attrs {perm = array<i64: 1, 0>} {outputs = ["turned"]} : (tensor<4x2xi64>) -> tensor<2x4xi64>
    %y = onnx.node "Reshape"(%data, %turned) attrs {allowzero = 0 : i64} {outputs = ["y"]} : (tensor<1xi64>, tensor<2x4xi64>) -> !onnx.unknown
    onnx.yield %y : !onnx.unknown
  }
}

// -----

// Shapes that follow from static inputs, for ops exporters leave untyped
// when a batch is dynamic: an Einsum (its letters' sizes), a Split (its
// `num_outputs`, opset 18), a ConstantOfShape of a constant shape, a Cast
// to another element type, a Where (broadcast of its three inputs).

// CHECK-LABEL: onnx.graph @refined_ops(
// CHECK: onnx.node "Einsum"{{.*}} -> tensor<2x3x5xf32>
// CHECK: onnx.node "Split"{{.*}} -> (tensor<2x3x3xf32>, tensor<2x3x2xf32>)
// CHECK: onnx.node "ConstantOfShape"{{.*}} -> tensor<2x3x1xf32>
// CHECK: onnx.node "Cast"{{.*}} -> tensor<2x3x1xi1>
// CHECK: onnx.node "Where"{{.*}} -> tensor<2x3x3xf32>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 18>]} {
  onnx.graph @refined_ops(%x: tensor<2x3xf32> {onnx.name = "x"}, %w: tensor<5xf32> {onnx.name = "w"}) -> (tensor<*xf32> {onnx.name = "y"}, tensor<*xf32> {onnx.name = "r"}) {
    %e = onnx.node "Einsum"(%x, %w) attrs {equation = "bt,e->bte"} {outputs = ["e"]} : (tensor<2x3xf32>, tensor<5xf32>) -> tensor<?x?x5xf32>
    %a, %b = onnx.node "Split"(%e) attrs {axis = 2 : i64, num_outputs = 2 : i64} {outputs = ["a", "b"]} : (tensor<?x?x5xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>)
    %shape = onnx.node "Constant"() attrs {value = dense<[2, 3, 1]> : tensor<3xi64>} {outputs = ["shape"]} : () -> tensor<3xi64>
    %z = onnx.node "ConstantOfShape"(%shape) attrs {value = dense<1.0> : tensor<1xf32>} {outputs = ["z"]} : (tensor<3xi64>) -> tensor<?x?x?xf32>
    %m = onnx.node "Cast"(%z) attrs {to = 9 : i64} {outputs = ["m"]} : (tensor<?x?x?xf32>) -> tensor<?x?x?xi1>
    %s = onnx.node "Where"(%m, %a, %z) {outputs = ["s"]} : (tensor<?x?x?xi1>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<*xf32>
    %y = onnx.node "Neg"(%s) {outputs = ["y"]} : (tensor<*xf32>) -> tensor<*xf32>
    %r = onnx.node "Relu"(%b) {outputs = ["r"]} : (tensor<?x?x?xf32>) -> tensor<*xf32>
    onnx.yield %y, %r : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// F.pad as TorchScript exports it: torch's pads zero-extended, cut into
// [begin, end] pairs, reversed and transposed into ONNX's order. The integer
// arithmetic folds (the Transpose of a constant too), and the Pad then gets
// the static type its pads fix (begin + size + end per axis).

// CHECK-LABEL: onnx.graph @torchscript_pads(
// CHECK-NOT: "Transpose"
// CHECK: %[[P:.+]] = onnx.node "Constant"() attrs {value = dense<[0, 0, 1, 2, 0, 0, 3, 4]> : tensor<8xi64>}
// CHECK: onnx.node "Pad"(%{{[^,]+}}, %[[P]]{{.*}} -> tensor<2x3x9x12xf32>
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @torchscript_pads(%x: tensor<2x3x5x6xf32> {onnx.name = "x"}) -> (tensor<*xf32> {onnx.name = "y"}) {
    %torch = onnx.node "Constant"() attrs {value = dense<[2, 4, 1, 3]> : tensor<4xi64>} {outputs = ["torch"]} : () -> tensor<4xi64>
    %zeros = onnx.node "Constant"() attrs {value = dense<0> : tensor<4xi64>} {outputs = ["zeros"]} : () -> tensor<4xi64>
    %all = onnx.node "Concat"(%torch, %zeros) attrs {axis = 0 : i64} {outputs = ["all"]} : (tensor<4xi64>, tensor<4xi64>) -> tensor<8xi64>
    %pairs = onnx.node "Constant"() attrs {value = dense<[-1, 2]> : tensor<2xi64>} {outputs = ["pairs"]} : () -> tensor<2xi64>
    %cut = onnx.node "Reshape"(%all, %pairs) {outputs = ["cut"]} : (tensor<8xi64>, tensor<2xi64>) -> tensor<4x2xi64>
    %start = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["start"]} : () -> tensor<1xi64>
    %stop = onnx.node "Constant"() attrs {value = dense<-9223372036854775807> : tensor<1xi64>} {outputs = ["stop"]} : () -> tensor<1xi64>
    %axis = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["axis"]} : () -> tensor<1xi64>
    %back = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["back"]} : () -> tensor<1xi64>
    %rev = onnx.node "Slice"(%cut, %start, %stop, %axis, %back) {outputs = ["rev"]} : (tensor<4x2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x2xi64>
    %turned = onnx.node "Transpose"(%rev) attrs {perm = array<i64: 1, 0>} {outputs = ["turned"]} : (tensor<4x2xi64>) -> tensor<2x4xi64>
    %flat = onnx.node "Constant"() attrs {value = dense<-1> : tensor<1xi64>} {outputs = ["flat"]} : () -> tensor<1xi64>
    %pads = onnx.node "Reshape"(%turned, %flat) {outputs = ["pads"]} : (tensor<2x4xi64>, tensor<1xi64>) -> tensor<8xi64>
    %p = onnx.node "Pad"(%x, %pads) attrs {mode = "constant"} {outputs = ["p"]} : (tensor<2x3x5x6xf32>, tensor<8xi64>) -> tensor<?x?x?x?xf32>
    %y = onnx.node "Neg"(%p) {outputs = ["y"]} : (tensor<?x?x?x?xf32>) -> tensor<*xf32>
    onnx.yield %y : tensor<*xf32>
  }
}
