//===- NewtonSchulzReading.h - Muon's orthogonalization, read --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Muon orthogonalizes a fast weight's update by Newton-Schulz steps: the
// update divided by its Frobenius norm (plus eps), then, per step,
// `X = a X + (b A + c A A) X` with `A = X X^T`. Its result is no sum of
// products of the update (a norm divides it), so the einsum reader sees a
// leaf; this reader proves that a value is that function of another, one
// step at a time, each step read as a polynomial of the step before.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_NEWTONSCHULZREADING_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_NEWTONSCHULZREADING_H

#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::ttt::linalg_raise {

struct NewtonSchulzReading {
  /// The update the steps orthogonalize.
  Value input;
  /// (a, b, c) of each step, in order.
  SmallVector<double> coeffs;
  int64_t steps = 0;
  /// What the Frobenius norm is shifted by before it divides.
  double eps = 0.0;
  /// The narrower float type the steps compute in (the update cast to it,
  /// the result cast back, as LaCT ships Muon in bf16); null if none.
  Type compute;
};

/// `output` as Newton-Schulz steps of a matrix (per stream), or nullopt.
/// Only the untransposed form is read (rows <= columns, LaCT's square fast
/// weights). Steps computed in bf16 or f16 are read between the cast of the
/// update to that type and the cast of their result back.
std::optional<NewtonSchulzReading> readNewtonSchulz(Value output);

/// The value near `value` (among what it reads, a few ops up) that is
/// Newton-Schulz steps of `input`, and its reading.
std::optional<std::pair<Value, NewtonSchulzReading>>
findNewtonSchulzOf(Value value, Value input);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_NEWTONSCHULZREADING_H
