//===- FastWeightLayer.h - a layer read off a loop, as an op ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a reader of a chunk loop's math found, in the terms of
// `ttt.kvb_layer`: which states are the model's weights and what each of
// their dimensions is, which windows are the queries, keys, values and
// rates, and the loss, update and schedule. One builder turns it into the
// op, whatever the model (the SwiGLU and GLU readers share it): it brings
// every operand to the op's layout (streams merged into heads, then time
// and features) and the results back to the program's.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_FASTWEIGHTLAYER_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_FASTWEIGHTLAYER_H

#include "NewtonSchulzReading.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace mlir::ttt::linalg_raise {

/// A loop sequence and the role of each of its dimensions.
struct RoledWindow {
  unsigned sequence = 0;
  SmallVector<unsigned> roles;
  /// A tensor outside the loop to take instead of the sequence (rates the
  /// program multiplied into the keys before the loop).
  Value source;
};

/// One weight of the model: its state, the role of each of its dimensions
/// in the state's order, and the roles of its input and output features.
struct LayerWeight {
  unsigned state = 0;
  SmallVector<unsigned> roles;
  unsigned input = 0, output = 0;
};

/// A fast-weight layer read off a chunk loop, in the op's terms.
struct FastWeightLayer {
  FastWeightModelAttr model;
  /// In the model's operand order.
  SmallVector<LayerWeight> weights;
  unsigned numStreams = 0;
  RoledWindow q, k, v;
  /// Per weight, its per-token learning rates (all or none).
  SmallVector<std::optional<RoledWindow>> lr;
  /// Per-token momentum coefficients (their chunk mean, times the scale).
  std::optional<RoledWindow> momentum;
  double momentumScale = 1.0;
  UpdateOrder order = UpdateOrder::apply_then_update;
  /// The dot loss's constant factor (negative: ascent) and the step.
  double lossScale = 1.0, step = 1.0;
  ClipKind clip = ClipKind::none;
  std::optional<NewtonSchulzReading> muon;
  /// Muon's result added to the update it orthogonalized, not to the
  /// weights (`W' = U + s NS(U)`, LaCT's minimal bidirectional layer).
  bool addsToUpdate = false;
  std::optional<double> weightNormEps;
  /// The roles of the output's dimensions.
  SmallVector<unsigned> outputRoles;
};

/// The ops of the loop body that make `value` from `base` and constants
/// alone, or failure if it reads anything else (a state, a window).
FailureOr<llvm::SetVector<Operation *>> madeOf(Value value, Value base);

/// Replaces `loop` by the `ttt.kvb_layer` of `layer`. The loop's first
/// output is the network's; the others, made of it alone, are computed
/// again from the op's.
void buildFastWeightLayer(RewriterBase &rewriter, ChunkLoopOp loop,
                          const FastWeightLayer &layer);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_FASTWEIGHTLAYER_H
