//===- SwiGLUReading.h - a SwiGLU layer off a loop --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LaCT's fast weights are a SwiGLU network, `W1 (silu(W0 x) * (W2 x))`.
// This reader finds that model in what a chunk loop's output computes (the
// sigmoid is the one leaf that is no sum of products), gives every
// dimension of every operand its role in it, and then proves each weight's
// update to be the dot loss's descent step: the gradient the model implies,
// written as an einsum polynomial over the body's own values, must equal
// the update the body computes, term for term. Muon (Newton-Schulz steps)
// and the weight norm to the initial column norms are read around it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_SWIGLUREADING_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_SWIGLUREADING_H

#include "ElementwiseReadings.h"
#include "FastWeightLayer.h"
#include "NewtonSchulzReading.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/IR/PatternMatch.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::ttt::linalg_raise {

/// A SwiGLU fast-weight layer read off a chunk loop.
struct SwiGLULayer {
  /// The state indices of W0 (gate), W1 (out) and W2 (up).
  std::array<unsigned, 3> weights{};
  /// The role of each dimension of each weight, in its state's order.
  std::array<SmallVector<unsigned>, 3> weightRoles;
  unsigned numStreams = 0;
  RoledWindow q, k, v;
  /// Each weight's per-token learning rates.
  std::array<std::optional<RoledWindow>, 3> lr;
  /// For W0 and W2: the window of the keys times their rates, where the
  /// program multiplied them before the loop.
  std::array<std::optional<RoledWindow>, 3> keysWithRates;
  UpdateOrder order = UpdateOrder::apply_then_update;
  /// The dot loss's constant factor and the step that adds the update.
  double lossScale = 1.0, step = 1.0;
  std::optional<NewtonSchulzReading> muon;
  /// Muon's result added to the update it orthogonalized, not to the
  /// weights (`W' = U + s NS(U)`, LaCT's minimal bidirectional layer).
  bool addsToUpdate = false;
  /// LaCT's momentum: per weight a state `M' = mu M + U` (mu the chunk's
  /// mean of per-token coefficients, times `momentumScale`) that moves the
  /// weight in place of U; the states, in the weights' order.
  std::optional<RoledWindow> momentum;
  double momentumScale = 1.0;
  SmallVector<unsigned> momentumStates;
  /// Every weight renormalized to its initial column norms, with this eps.
  std::optional<double> weightNormEps;
  /// The roles of each weight's state's dimensions: its weightRoles, the
  /// matrix's two swapped where the state holds the weight transposed.
  std::array<SmallVector<unsigned>, 3> stateRoles;
  /// The roles of the output's dimensions.
  SmallVector<unsigned> outputRoles;
};

/// Whether the loop's output is a SwiGLU network of three of its states
/// (then `isSwiGLU` is set even when the rest cannot be read); the layer,
/// or failure with the reason.
FailureOr<SwiGLULayer> readSwiGLULayer(ChunkLoopOp loop, bool &isSwiGLU,
                                       std::string &why);

/// Replaces `loop` by the `ttt.kvb_layer` of `layer`.
void buildSwiGLULayer(RewriterBase &rewriter, ChunkLoopOp loop,
                      const SwiGLULayer &layer);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_SWIGLUREADING_H
