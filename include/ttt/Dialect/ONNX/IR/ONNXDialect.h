//===- ONNXDialect.h - onnx dialect -----------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXDIALECT_H
#define TTT_DIALECT_ONNX_IR_ONNXDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ttt/Dialect/ONNX/IR/ONNXOpsDialect.h.inc"

#include <optional>

namespace mlir::ttt::onnx {

/// The default-domain opset version imported by the module that is or holds
/// `op`, or std::nullopt when none is recorded.
std::optional<int64_t> getDefaultOpset(Operation *op);

} // namespace mlir::ttt::onnx

#endif // TTT_DIALECT_ONNX_IR_ONNXDIALECT_H
