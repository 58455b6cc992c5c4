//===- MomentumReading.h - LaCT's momentum, read ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LaCT keeps a momentum per fast weight, `M' = mean_t(m_t) M + U`: the
// chunk's mean of per-token coefficients decays the momentum, the loss's
// step U is added, and the weight moves by M'. Both readers of chunk loops
// (the linear fast weight's and the SwiGLU network's) split M' the same way.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_MOMENTUMREADING_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_MOMENTUMREADING_H

#include "EinsumPolynomial.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include <string>

namespace mlir::ttt::linalg_raise {

/// `M' = a * (sum_t m_t) M + U`, read.
struct MomentumDecay {
  /// a, the loop sequence the coefficients m are windows of, and m's factor
  /// as the reading of M' labels it.
  double coeff = 0.0;
  unsigned sequence = 0;
  Factor rates;
  /// U: the terms that do not read M.
  SmallVector<Term> rest;
};

/// `update`, the reading of `momentum`'s next value, as the decay of
/// `momentum` by a sum of per-token coefficients plus the rest; or the reason
/// it is not one.
FailureOr<MomentumDecay> readMomentumDecay(ChunkLoopOp loop,
                                           const Polynomial &update,
                                           Value momentum, std::string &why);

/// Whether every window of `loop` is one whole chunk long, so that a sum over
/// a window is the chunk size times its mean.
bool windowsAreWholeChunks(ChunkLoopOp loop);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_MOMENTUMREADING_H
