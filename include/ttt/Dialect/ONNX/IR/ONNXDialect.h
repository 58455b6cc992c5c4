//===- ONNXDialect.h - onnx dialect -----------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXDIALECT_H
#define TTT_DIALECT_ONNX_IR_ONNXDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ttt/Dialect/ONNX/IR/ONNXOpsDialect.h.inc"

#endif // TTT_DIALECT_ONNX_IR_ONNXDIALECT_H
