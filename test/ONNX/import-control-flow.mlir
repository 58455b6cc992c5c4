// RUN: %python %S/Inputs/make_model.py loop %t.loop.onnx
// RUN: ttt-opt %t.loop.onnx | FileCheck %s --check-prefix=LOOP
// RUN: %python %S/Inputs/make_model.py if_model %t.if.onnx
// RUN: ttt-opt %t.if.onnx | FileCheck %s --check-prefix=IF
// RUN: %python %S/Inputs/make_model.py scan %t.scan.onnx
// RUN: ttt-opt %t.scan.onnx | FileCheck %s --check-prefix=SCAN
// REQUIRES: onnx-python

// Subgraph attributes are regions of the node; #onnx.graph names the
// subgraph's inputs (block arguments) and outputs (yield operands). A body
// uses values of the enclosing graph directly (%X below). The omitted Loop
// condition is an onnx.none operand.

// LOOP:      onnx.graph @loop(%[[M:.+]]: tensor<i64> {onnx.name = "M"}, %[[X:.+]]: tensor<4xf32> {onnx.name = "X"}, %[[S0:.+]]: tensor<4xf32> {onnx.name = "S0"})
// LOOP-SAME:   -> (tensor<4xf32> {onnx.name = "S_final"}, tensor<?x4xf32> {onnx.name = "S_all"})
// LOOP:        %[[NONE:.+]] = onnx.none
// LOOP:        %[[FINAL:.+]], %[[ALL:.+]] = onnx.node "Loop"(%[[M]], %[[NONE]], %[[S0]])
// LOOP-SAME:     attrs {body = #onnx.graph<region = 0, name = "loop_body", inputs = ["i", "cond_in", "s_in"], outputs = ["cond_out", "s_out", "s_scan"]>}
// LOOP-SAME:     {node_name = "loop", outputs = ["S_final", "S_all"]}
// LOOP-SAME:     : (tensor<i64>, none, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) graphs {
// LOOP-NEXT:   ^bb0(%[[I:.+]]: tensor<i64>, %[[COND:.+]]: tensor<i1>, %[[S:.+]]: tensor<4xf32>):
// LOOP-NEXT:     %[[HALF:.+]] = onnx.initializer "half" dense<5.000000e-01> : tensor<f32>
// LOOP-NEXT:     %[[COND_OUT:.+]] = onnx.node "Identity"(%[[COND]])
// LOOP-NEXT:     %[[DECAYED:.+]] = onnx.node "Mul"(%[[S]], %[[HALF]])
// LOOP-NEXT:     %[[S_OUT:.+]] = onnx.node "Add"(%[[DECAYED]], %[[X]])
// LOOP-NEXT:     %[[EMIT:.+]] = onnx.node "Identity"(%[[S_OUT]])
// LOOP-NEXT:     onnx.yield %[[COND_OUT]], %[[S_OUT]], %[[EMIT]] : tensor<i1>, tensor<4xf32>, tensor<4xf32>
// LOOP-NEXT:   }
// LOOP-NEXT:   onnx.yield %[[FINAL]], %[[ALL]] : tensor<4xf32>, tensor<?x4xf32>

// IF:      %[[Y:.+]] = onnx.node "If"(%{{[^)]*}})
// IF-SAME:   attrs {else_branch = #onnx.graph<region = 0, name = "else_branch", inputs = [], outputs = ["else_out"]>,
// IF-SAME:          then_branch = #onnx.graph<region = 1, name = "then_branch", inputs = [], outputs = ["then_out"]>}
// IF-SAME:   : (tensor<i1>) -> tensor<3xf32> graphs {
// IF:        onnx.node "Mul"
// IF:        onnx.yield %{{.+}} : tensor<3xf32>
// IF-NEXT:  }, {
// IF:        onnx.node "Add"
// IF:        onnx.yield %{{.+}} : tensor<3xf32>
// IF-NEXT:  }
// IF:      onnx.yield %[[Y]] : tensor<3xf32>

// SCAN:      onnx.node "Scan"
// SCAN-SAME:   attrs {body = #onnx.graph<region = 0, name = "scan_body", inputs = ["s_in", "x_t"], outputs = ["s_out", "y_t"]>, num_scan_inputs = 1 : i64}
// SCAN-SAME:   : (tensor<4xf32>, tensor<?x4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) graphs {
// SCAN-NEXT: ^bb0(%{{.+}}: tensor<4xf32>, %{{.+}}: tensor<4xf32>):
