//===- GeluReadings.h - GELU (tanh form) read off linalg --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// GELU's tanh approximation, `gelu(z) = z/2 (1 + tanh(c (z + 0.044715 z^3)))`
// with c = sqrt(2/pi), and its derivative, read off linalg on tensors: as
// one payload (ONNX's Gelu) or as ops over tensors, the tanh a leaf whose
// argument is that polynomial of z. Constants are compared to the float32
// rounding of the formula's (1e-6 relative), as programs write them.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_GELUREADINGS_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_GELUREADINGS_H

#include "mlir/IR/Value.h"

namespace mlir::ttt::linalg_raise {

/// The coefficients of GELU's tanh approximation and of its derivative,
/// `gelu'(z) = (1 + t)/2 + z/2 (1 - t^2) (c + 3 * 0.044715 c z^2)`.
constexpr double kGeluC = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
/// How close a program's constant must be to the formula's (the float32
/// rounding of it).
constexpr double kGeluRtol = 1e-6;

/// z when `value` is gelu_tanh(z) elementwise, else null.
Value geluTanhInput(Value value);

/// Whether `value` is `tanh(c (z + 0.044715 z^3))` elementwise.
bool isGeluTanh(Value value, Value z);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_GELUREADINGS_H
