//===- ONNXTypes.h - onnx value types ---------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXTYPES_H
#define TTT_DIALECT_ONNX_IR_ONNXTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "ttt/Dialect/ONNX/IR/ONNXOpsTypes.h.inc"

namespace mlir::ttt::onnx {

/// True if a value of type `actual` may stand where ONNX declares `declared`:
/// equal types, either one `!onnx.unknown`, or tensors (also inside
/// sequences and optionals) of one element type with compatible shapes.
bool areCompatibleTypes(Type declared, Type actual);

/// True for the tensor element types ONNX tensors can have in this dialect:
/// f16, bf16, f32, f64, i1, i8..i64 (signless = signed), ui8..ui64 and
/// complex<f32>, complex<f64>.
bool isSupportedElementType(Type type);

} // namespace mlir::ttt::onnx

#endif // TTT_DIALECT_ONNX_IR_ONNXTYPES_H
