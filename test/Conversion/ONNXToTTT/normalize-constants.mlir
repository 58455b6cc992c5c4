// Integer shape arithmetic on constants folds into Constants, whatever storage
// the constants use, and never past what int64 holds.
// RUN: ttt-opt %s --ttt-normalize-onnx --split-input-file | FileCheck %s

// An index initializer kept as a resource blob (as the reader keeps every
// tensor over 1 KiB) is read like a dense one.

// CHECK-LABEL: onnx.graph @blob_indices(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>
// CHECK: %[[SHAPE:.+]] = onnx.node "Constant"() attrs {value = dense<[3, 2]> : tensor<2xi64>}
// CHECK-NOT: "Slice"
// CHECK: %[[Y:.+]] = onnx.node "Reshape"(%[[X]], %[[SHAPE]])
// CHECK: onnx.yield %[[Y]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @blob_indices(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<3x2xf32> {onnx.name = "y"}) {
    %idx = onnx.initializer "idx" dense_resource<idx> : tensor<4xi64>
    %st = onnx.initializer "st" dense<0> : tensor<1xi64>
    %en = onnx.initializer "en" dense<2> : tensor<1xi64>
    %s = onnx.node "Slice"(%idx, %st, %en) {outputs = ["s"]} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %y = onnx.node "Reshape"(%x, %s) {outputs = ["y"]} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
    onnx.yield %y : tensor<3x2xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      idx: "0x080000000300000000000000020000000000000005000000000000000700000000000000"
    }
  }
#-}

// -----

// INT64_MIN / -1 and INT64_MAX + 1 overflow: left for the model's kernels to
// define, not folded (nor a SIGFPE in the compiler).

// CHECK-LABEL: onnx.graph @overflow(
// CHECK: onnx.node "Div"
// CHECK: onnx.node "Add"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @overflow() -> (tensor<1xi64> {onnx.name = "q"}, tensor<1xi64> {onnx.name = "s"}) {
    %min = onnx.initializer "min" dense<-9223372036854775808> : tensor<1xi64>
    %max = onnx.initializer "max" dense<9223372036854775807> : tensor<1xi64>
    %m1 = onnx.initializer "m1" dense<-1> : tensor<1xi64>
    %one = onnx.initializer "one" dense<1> : tensor<1xi64>
    %q = onnx.node "Div"(%min, %m1) {outputs = ["q"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %s = onnx.node "Add"(%max, %one) {outputs = ["s"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    onnx.yield %q, %s : tensor<1xi64>, tensor<1xi64>
  }
}

// -----

// Squeezing an axis longer than 1 is no fold (the elements would not fit the
// shape the fold writes).

// CHECK-LABEL: onnx.graph @squeeze_long_axis(
// CHECK: onnx.node "Squeeze"
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @squeeze_long_axis() -> (tensor<2xi64> {onnx.name = "s"}) {
    %c = onnx.initializer "c" dense<[[2, 3], [3, 2]]> : tensor<2x2xi64>
    %ax = onnx.initializer "ax" dense<0> : tensor<1xi64>
    %s = onnx.node "Squeeze"(%c, %ax) {outputs = ["s"]} : (tensor<2x2xi64>, tensor<1xi64>) -> tensor<2xi64>
    onnx.yield %s : tensor<2xi64>
  }
}

// -----

// A step past int64 ends the slice after its first element.

// CHECK-LABEL: onnx.graph @huge_step(
// CHECK: %[[C:.+]] = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>}
// CHECK: onnx.yield %[[C]]
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @huge_step() -> (tensor<1xi64> {onnx.name = "s"}) {
    %a = onnx.initializer "a" dense<[2, 3, 4]> : tensor<3xi64>
    %st = onnx.initializer "st" dense<1> : tensor<1xi64>
    %en = onnx.initializer "en" dense<3> : tensor<1xi64>
    %axes = onnx.initializer "axes" dense<0> : tensor<1xi64>
    %step = onnx.initializer "step" dense<9223372036854775807> : tensor<1xi64>
    %s = onnx.node "Slice"(%a, %st, %en, %axes, %step) {outputs = ["s"]} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    onnx.yield %s : tensor<1xi64>
  }
}
