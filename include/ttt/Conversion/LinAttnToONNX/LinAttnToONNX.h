//===- LinAttnToONNX.h - linattn ops as standard ONNX nodes -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_LINATTNTOONNX_LINATTNTOONNX_H
#define TTT_CONVERSION_LINATTNTOONNX_LINATTNTOONNX_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::ttt {

/// Whether `op` (a linattn op, or one of the tensor/arith ops that
/// ttt-to-linattn leaves around them inside an `onnx.graph`) can be rewritten
/// into default-domain ONNX nodes (opset 17) by `linattn-to-onnx`. When it
/// cannot, `why` says what blocks it.
bool canExportToONNX(Operation *op, std::string &why);

/// Adds the patterns of `linattn-to-onnx`: each rewrites one supported op
/// inside an `onnx.graph` into `onnx.node` ops.
void populateLinAttnToONNXPatterns(RewritePatternSet &patterns);

} // namespace mlir::ttt

#endif // TTT_CONVERSION_LINATTNTOONNX_LINATTNTOONNX_H
