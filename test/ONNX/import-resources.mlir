// RUN: %python %S/Inputs/make_model.py big_weights %t.onnx
// RUN: ttt-opt %t.onnx | FileCheck %s
// RUN: ttt-opt %t.onnx -o %t.mlir
// RUN: ttt-opt %t.mlir -o %t.again.onnx
// RUN: ttt-opt %t.onnx -o %t.direct.onnx
// RUN: cmp %t.again.onnx %t.direct.onnx
// REQUIRES: onnx-python

// Tensors above 1 KiB become resource blobs, printed once at the end of the
// module; printing and parsing them back loses nothing.

// CHECK: onnx.initializer "W" dense_resource<W> : tensor<64x64xf32>
// CHECK: onnx.initializer "b" dense<[{{.*}}]> : tensor<64xf32>
// CHECK: dialect_resources: {
// CHECK:   builtin: {
// CHECK:     W: "0x04000000
