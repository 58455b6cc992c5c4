//===- LayerAnalysis.h - when is a TTT layer linear attention ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Decides, from a layer's structure (never from its name), what
// docs/Theory.md sections 2-4 allow: is the output layer linear in the fast
// weights, is the feature map static, how does the state update depend on the
// state, and so which lowering is exact. Every negative answer carries the
// reason, worded for a user ("row weight normalization after each
// update ...").
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_ANALYSIS_LAYERANALYSIS_H
#define TTT_DIALECT_TTT_ANALYSIS_LAYERANALYSIS_H

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include <string>

namespace mlir::ttt {

/// How the chunk-to-chunk update of the state depends on the state.
enum class StateUpdate {
  /// S_c = S_{c-1} + D_c with D_c independent of S (dot-product loss).
  Additive,
  /// S_c = (I + T_c) S_{c-1} + G_c (MSE loss, gradient frozen per chunk).
  Affine,
  /// Anything else: weight norm, LayerNorm, trained inner layers, ...
  NonAffine,
};

/// The best lowering that keeps the layer's function exactly.
enum class ExactLowering {
  /// Chunk states by a prefix sum (after a decayed scan for momentum).
  PrefixSum,
  /// Chunk states by a scan of affine maps.
  AffineScan,
  /// One full-batch step: reduce to one state, transform it, apply it.
  SingleStep,
  /// Only a sequential loop over chunks is exact.
  ChunkSequential,
};

struct LayerFacts {
  bool outputLinear = false; ///< f = phi(x) W_out (+ b_out)
  bool staticKernel = false; ///< phi does not train
  bool biasFeature = false;  ///< the trained output bias is a constant feature
  StateUpdate update = StateUpdate::NonAffine;
  ExactLowering lowering = ExactLowering::ChunkSequential;
  /// ttt-to-linattn can emit the linear-attention form.
  bool rewritable = false;
  /// What was proven, one phrase each.
  SmallVector<std::string> proven;
  /// What blocks a better exact lowering, one phrase each.
  SmallVector<std::string> blockers;
  /// What keeps ttt-to-linattn from rewriting although the math allows it.
  SmallVector<std::string> unsupported;
};

/// Analyses one layer op.
LayerFacts analyzeLayer(KVBLayerOp op);

/// True if the layer's sequence length is statically 0. Its output is empty
/// whatever the form; the parallel form's slices of an empty sequence would
/// not verify (MLIR's static bounds checks reject offset 0 into a size-0
/// dimension), so such layers are left in their form, which runs as is.
inline bool hasEmptySequence(KVBLayerOp op) {
  return cast<RankedTensorType>(op.getQ().getType()).getDimSize(2) == 0;
}

/// Why hasEmptySequence layers are not rewritten.
inline constexpr const char *kEmptySequence =
    "the sequence is empty (T = 0): there is nothing to parallelize, and the "
    "layer runs as it is";
LayerFacts analyzeLayer(DWConvLayerOp op);

StringRef stringifyExactLowering(ExactLowering lowering);
StringRef stringifyStateUpdate(StateUpdate update);

/// The one-line explanation `--ttt-explain` prints for a layer.
std::string explainLayer(const LayerFacts &facts);

} // namespace mlir::ttt

#endif // TTT_DIALECT_TTT_ANALYSIS_LAYERANALYSIS_H
