// RUN: ttt-opt %s | ttt-opt | FileCheck %s
// RUN: ttt-opt %s --mlir-print-op-generic | ttt-opt | FileCheck %s

// The onnx dialect prints and parses back every construct the reader makes.

// CHECK: onnx.functions = [#onnx.function<"com.local", "F", "\0A\01F\12\00">]
// CHECK-LABEL: onnx.graph @everything
// CHECK-SAME:    (%[[X:.+]]: tensor<?x4xf32> {onnx.dim_params = ["N", ""], onnx.name = "X"},
// CHECK-SAME:     %[[C:.+]]: tensor<i1> {onnx.name = "C"},
// CHECK-SAME:     %[[D:.+]]: tensor<2xf32> {onnx.default = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, onnx.name = "D"})
// CHECK-SAME:    -> (tensor<?x4xf32> {onnx.name = "Y"}, !onnx.unknown {onnx.name = "U"}, tensor<2xf32> {onnx.name = "Z"})
module attributes {onnx.ir_version = 8 : i64,
                   onnx.functions = [#onnx.function<"com.local", "F", "\0A\01F\12\00">],
                   onnx.opset_import = [#onnx.opset<"", 17>, #onnx.opset<"com.example", 1>],
                   onnx.producer_name = "hand", onnx.metadata_props = {k = "v"}} {
  onnx.graph @everything(%X: tensor<?x4xf32> {onnx.name = "X", onnx.dim_params = ["N", ""]},
                         %C: tensor<i1> {onnx.name = "C"},
                         %D: tensor<2xf32> {onnx.name = "D", onnx.default = dense<[1.0, 2.0]> : tensor<2xf32>})
      -> (tensor<?x4xf32> {onnx.name = "Y"}, !onnx.unknown {onnx.name = "U"}, tensor<2xf32> {onnx.name = "Z"}) {
    // CHECK: %[[W:.+]] = onnx.initializer "W" dense<5.000000e-01> : tensor<4x4xf32>
    %W = onnx.initializer "W" dense<0.5> : tensor<4x4xf32>
    // CHECK: %[[NONE:.+]] = onnx.none
    %none = onnx.none
    // CHECK: %[[H:.+]] = onnx.node "MatMul"(%[[X]], %[[W]]) {node_name = "mm", outputs = ["h"]}
    %h = onnx.node "MatMul"(%X, %W) {node_name = "mm", outputs = ["h"]}
        : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    // CHECK: %[[Y:.+]], %omitted = onnx.node "Dropout"(%[[H]], %[[NONE]]) {outputs = ["Y", ""]}
    // CHECK-SAME: : (tensor<?x4xf32>, none) -> (tensor<?x4xf32>, none)
    %Y, %mask = onnx.node "Dropout"(%h, %none) {outputs = ["Y", ""]}
        : (tensor<?x4xf32>, none) -> (tensor<?x4xf32>, none)
    // CHECK: onnx.node "Op"(%[[Y]]) domain "com.example"
    // CHECK-SAME: attrs {f = 1.500000e+00 : f32, fs = array<f32: 1.000000e+00>, i = 3 : i64, is = array<i64: 1, 2>, s = "x", ss = ["a", "b"], t = dense<1> : tensor<2xi64>, ts = [dense<1.000000e+00> : tensor<f32>]}
    // CHECK-SAME: -> !onnx.unknown
    %U = onnx.node "Op"(%Y) domain "com.example"
        attrs {f = 1.5 : f32, fs = array<f32: 1.0>, i = 3 : i64, is = array<i64: 1, 2>,
               s = "x", ss = ["a", "b"], t = dense<1> : tensor<2xi64>,
               ts = [dense<1.0> : tensor<f32>]}
        {outputs = ["U"]} : (tensor<?x4xf32>) -> !onnx.unknown
    // CHECK: onnx.node "If"(%[[C]])
    // CHECK-SAME: graphs {
    // CHECK: onnx.yield %[[D]] : tensor<2xf32>
    // CHECK-NEXT: }, {
    %Z = onnx.node "If"(%C)
        attrs {then_branch = #onnx.graph<region = 0, name = "then", inputs = [], outputs = ["D"]>,
               else_branch = #onnx.graph<region = 1, name = "else", inputs = [], outputs = ["e"]>}
        {outputs = ["Z"]} : (tensor<i1>) -> tensor<2xf32> graphs {
      onnx.yield %D : tensor<2xf32>
    }, {
      %e = onnx.node "Neg"(%D) {outputs = ["e"]} : (tensor<2xf32>) -> tensor<2xf32>
      onnx.yield %e : tensor<2xf32>
    }
    // CHECK: onnx.node "Seq"() domain "com.example" {outputs = ["s"]} : () -> !onnx.seq<tensor<*xf32>>
    %s = onnx.node "Seq"() domain "com.example" {outputs = ["s"]} : () -> !onnx.seq<tensor<*xf32>>
    // CHECK: onnx.node "Opt"() domain "com.example" {outputs = ["o"]} : () -> !onnx.opt<tensor<2xf32>>
    %o = onnx.node "Opt"() domain "com.example" {outputs = ["o"]} : () -> !onnx.opt<tensor<2xf32>>
    onnx.yield %Y, %U, %Z : tensor<?x4xf32>, !onnx.unknown, tensor<2xf32>
  }
}
