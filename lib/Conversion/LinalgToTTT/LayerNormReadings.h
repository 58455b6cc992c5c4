//===- LayerNormReadings.h - LayerNorm read off linalg ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LayerNorm over one axis, `(x - mean(x)) / sqrt(var(x) + eps)` with the
// biased variance, read off linalg on tensors: the centring as a sum of
// products, the variance as the mean of a product of two centrings of the
// same x (exporters compute the mean once per use), the division and the
// root as the ops they are.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_LAYERNORMREADINGS_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_LAYERNORMREADINGS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::ttt::linalg_raise {

/// How far a program's constant may be from the formula's where the
/// program rounded it to float32 (a mean's `1/D`, GELU's coefficients).
constexpr double kFloat32Rounding = 1e-6;

/// `x - mean(x)` over `axis` of x, broadcast back along it.
struct Centered {
  Value x;
  unsigned axis = 0;
};

std::optional<Centered> readCentered(Value value);

/// `(x - mean(x)) / stddev` with `stddev = sqrt(mean((x - mean(x))^2) +
/// eps)`, all over `axis`.
struct Normalized {
  Value x;
  unsigned axis = 0;
  double eps = 0.0;
  Value stddev;
};

std::optional<Normalized> readNormalized(Value value);

/// Whether `generic` reads its input 1 once per row of its input 0 over
/// `axis` (a statistic of the row, broadcast along it), and input 0 in
/// place.
bool dividesRows(linalg::GenericOp generic, unsigned axis);

/// The eps of `stddev` when it is `sqrt(mean((x - mean(x))^2) + eps)` over
/// the axis of `centered`, kept as a dimension of size 1.
std::optional<double> readStdDev(Value stddev, const Centered &centered);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_LAYERNORMREADINGS_H
