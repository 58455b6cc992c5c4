// RUN: %python %S/Inputs/make_model.py mlp %t.onnx
// RUN: ttt-opt %t.onnx | FileCheck %s
// RUN: ttt-opt %t.onnx | ttt-opt | FileCheck %s
// REQUIRES: onnx-python

// Model metadata are module attributes; inputs and outputs keep their ONNX
// names and symbolic dimensions; initializers and nodes keep their names.

// CHECK:      module attributes {
// CHECK-SAME:   onnx.doc_string = "MLP test model"
// CHECK-SAME:   onnx.ir_version = 8 : i64
// CHECK-SAME:   onnx.metadata_props = {author = "ttt", purpose = "round trip"}
// CHECK-SAME:   onnx.model_version = 3 : i64
// CHECK-SAME:   onnx.opset_import = [#onnx.opset<"", 17>]
// CHECK-SAME:   onnx.producer_name = "ttt-tests", onnx.producer_version = "1.0"
// CHECK:      onnx.graph @mlp(%[[X:.+]]: tensor<?x4xf32> {onnx.dim_params = ["batch", ""], onnx.name = "X"})
// CHECK-SAME:   -> (tensor<?x3xf32> {onnx.dim_params = ["batch", ""], onnx.name = "Y"})
// CHECK-SAME:   attributes {doc_string = "a two-layer MLP"}
// CHECK:        %[[W1:.+]] = onnx.initializer "W1" dense<{{.*}}> : tensor<4x8xf32>
// CHECK:        %[[B1:.+]] = onnx.initializer "B1" dense<{{.*}}> : tensor<8xf32>
// CHECK:        %[[W2:.+]] = onnx.initializer "W2" dense<{{.*}}> : tensor<3x8xf32>
// CHECK:        %[[B2:.+]] = onnx.initializer "B2" dense<{{.*}}> : tensor<3xf32>
// CHECK:        %[[H0:.+]] = onnx.node "MatMul"(%[[X]], %[[W1]]) {node_name = "fc1", outputs = ["h0"]}
// CHECK-SAME:     : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
// CHECK:        %[[H1:.+]] = onnx.node "Add"(%[[H0]], %[[B1]]) {node_name = "bias1", outputs = ["h1"]}
// CHECK:        %[[H2:.+]] = onnx.node "Relu"(%[[H1]]) {node_name = "relu", outputs = ["h2"]}
// CHECK:        %[[Y:.+]] = onnx.node "Gemm"(%[[H2]], %[[W2]], %[[B2]])
// CHECK-SAME:     attrs {alpha = 5.000000e-01 : f32, transB = 1 : i64}
// CHECK-SAME:     {node_name = "fc2", outputs = ["Y"]}
// CHECK-SAME:     : (tensor<?x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK:        onnx.yield %[[Y]] : tensor<?x3xf32>
