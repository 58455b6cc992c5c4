//===- DualFormReading.h - TTT-Linear's dual form off a loop ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the dual form of TTT-Linear and TTT-MLP (ttt-lm-pytorch's mini-batch
// step) off a chunk loop: a linear fast weight W (and bias b), or two with
// GELU between them, whose keys' output, through a LayerNorm with a learned
// scale and shift, is fit to a target by the squared error; within a chunk,
// token i reads W - sum_{j <= i} eta_ij k_j^T G_j with every gradient G_j
// taken at the chunk's start weights, written as
// `q W - (eta * tril(q k^T)) G`; the output is the LayerNorm of that, plus
// an optional residual window. The loop's chunks are the model's
// mini-batches, each a window holding its tokens (`[n, ..., C, D]` cut
// along n), so the layer's chunk size is C. Built as `ttt.kvb_layer`
// (linear or mlp, layernorm_mse, causal order).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_DUALFORMREADING_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_DUALFORMREADING_H

#include "FastWeightLayer.h"

namespace mlir::ttt::linalg_raise {

/// What the dual-form reader found, in the op's terms.
struct DualFormLayer {
  unsigned numStreams = 0;
  RoledWindow q, k, eta;
  /// The loss's target: a sum of windows with these coefficients, each
  /// with the roles `targetRoles`.
  SmallVector<std::pair<unsigned, double>> target;
  SmallVector<unsigned> targetRoles;
  /// A window the output adds to the LayerNorm (ttt-lm-pytorch's `XQ + `).
  std::optional<unsigned> residual;
  SmallVector<unsigned> residualRoles;
  /// In the model's operand order: W (, b), or W0 (, b0), W1 (, b1).
  SmallVector<LayerWeight> weights;
  bool bias = false;
  /// `gelu(x W0 + b0) W1 + b1` (TTT-MLP), else `x W + b`.
  bool twoLayers = false;
  /// W' = W - step * sum_j eta_last,j k_j^T G_j.
  double step = 1.0;
  double eps = 1e-6;
  /// The LayerNorm's scale and shift (`source`, the roles of its dimensions:
  /// the output features, and streams), absent where they are 1 and 0.
  std::optional<RoledWindow> gamma, beta;
  int64_t chunkSize = 0;
  SmallVector<unsigned> outputRoles;
  /// eta_ij = tokenEta[i] * lrScale * lr[j], lr read from `lrLeaf` whose
  /// dimensions have the roles `lrRoles` (time split as chunk and token).
  SmallVector<double> tokenEta;
  /// Or the per-position factor as the program computes it, its one
  /// dimension that is not a unit the token's position.
  Value tokenEtaLeaf;
  SmallVector<unsigned> tokenEtaRoles;
  Value lrLeaf;
  SmallVector<unsigned> lrRoles;
  double lrScale = 1.0;
};

/// Reads the dual form off `loop` (TTT-Linear's, or TTT-MLP's two layers
/// with GELU in between); `isDualForm` says whether its output is
/// a LayerNorm of what reads its state (then `why` is about this reading).
FailureOr<DualFormLayer> readDualFormLayer(ChunkLoopOp loop, bool &isDualForm,
                                           std::string &why);

/// Replaces `loop` by the `ttt.kvb_layer` of `layer`.
void buildDualFormLayer(RewriterBase &rewriter, ChunkLoopOp loop,
                        const DualFormLayer &layer);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_DUALFORMREADING_H
