// RUN: %python %S/Inputs/make_model.py mlp %t.opset.onnx opset999
// RUN: not ttt-opt %t.opset.onnx 2>&1 | FileCheck %s --check-prefix=OPSET
// RUN: %python %S/Inputs/make_model.py loop %t.loop.onnx loop-body-inputs
// RUN: not ttt-opt %t.loop.onnx -o %t.out.onnx 2>&1 | FileCheck %s --check-prefix=LOOP
// RUN: not test -e %t.out.onnx
// RUN: %python %S/Inputs/make_model.py mlp %t.undef.onnx undefined-input
// RUN: not ttt-opt %t.undef.onnx 2>&1 | FileCheck %s --check-prefix=UNDEF
// RUN: %python %S/Inputs/make_model.py mlp %t.trunc.onnx truncate
// RUN: not ttt-opt %t.trunc.onnx 2>&1 | FileCheck %s --check-prefix=TRUNC
// REQUIRES: onnx-python

// Bad models get one line that names the file and, where one is at fault,
// the node (with its domain, op type and opset).

// OPSET: error: {{.*}}.opset.onnx: opset 999 of domain 'ai.onnx' is out of range: this build's ONNX library knows opsets 1 to 28
// OPSET-NOT: error

// LOOP: error: {{.*}}.loop.onnx: node 'loop' (ai.onnx::Loop, opset 17): its body takes 2 inputs, but a Loop with 1 loop-carried value needs 3: the iteration number, the condition and the loop-carried values
// LOOP-NOT: error

// UNDEF: error: {{.*}}.undef.onnx: node 'bias1' (ai.onnx::Add, opset 17): input 'nowhere' is not defined by a graph input, an initializer or an earlier node

// TRUNC: error: {{.*}}.trunc.onnx: not a valid ONNX model (cannot parse it as a protobuf ModelProto: it is truncated, corrupt or not an ONNX file)
