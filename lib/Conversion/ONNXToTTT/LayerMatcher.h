//===- LayerMatcher.h - a found layer's ttt.kvb_layer form ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the attributes of a `ttt.kvb_layer` off a found layer's chunk steps:
// the fast-weight model of the query path, the update of the trained weight
// (gradient of the dot or MSE loss, per-token learning rate column, mean
// over the chunk, momentum, Newton-Schulz, step size, weight norm) and the
// update/apply order. A SwiGLU layer may train any of its weights (LaCT's
// W0, W1 and W2), each by the gradient of the same loss. Commutative
// operands, layout nodes and constant folding by the exporter do not
// matter; every chunk must compute the same update.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_LAYERMATCHER_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_LAYERMATCHER_H

#include "LayerFinder.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

namespace mlir::ttt::raise {

/// How a chunk's keys and values move the trained weight; every chunk of a
/// layer must follow the same rule.
struct UpdateRule {
  Value v, lr, momentum;
  /// The learning-rate column the update reads, if it slices one.
  std::optional<int64_t> lrColumn;
  /// Whether the momentum's time (or chunk) axis is its second-to-last one
  /// (`[B, T, H]`, `[B*H, T, 1]`, per chunk `[B, N, H]`) rather than its
  /// last.
  bool momentumTimeBeforeLast = false;
  /// Whether the momentum holds one value per chunk (`[B, H, N]`, chunk c
  /// reading index c of its last axis) rather than one per token.
  bool momentumPerChunk = false;
  /// Whether the model stores the weight transposed (output x input) and
  /// applies its transpose; the update is read as the model stores it.
  bool transposedWeight = false;
  LossKind loss = LossKind::dot;
  Reduction reduction = Reduction::sum;
  Sign sign = Sign::descent;
  double lrScale = 1.0;
  /// The loss scale: a constant factor of the term a Newton-Schulz step
  /// orthogonalizes (outside, a factor is the step size).
  double lossScale = 1.0;
  /// Newton-Schulz coefficients, (a, b, c) per step, and epsilon. The model
  /// may orthogonalize the update or its transpose: each quintic step and the
  /// Frobenius norm commute with transposition, so both are one function.
  SmallVector<double> nsCoeffs;
  double nsEps = 0.0;
  /// Whether the columns are renormalized to their initial norms after the
  /// step, and the epsilon of the division.
  bool weightNorm = false;
  double wnEps = 0.0;
  /// Whether the gradient is clipped per output column, `G / (|G| + 1)`
  /// (ViT^3); a constant factor inside the clip is the loss scale.
  bool clipColumns = false;

  bool operator==(const UpdateRule &other) const;
  bool operator!=(const UpdateRule &other) const { return !(*this == other); }
  /// True if two weights of one layer follow the same rule: everything but
  /// the learning-rate column and the Newton-Schulz orientation, which
  /// belong to each weight, is equal.
  bool sharedBy(const UpdateRule &other) const;
};

/// The operands and attributes of the `ttt.kvb_layer` a layer computes.
struct LayerConfig {
  ModelKind model = ModelKind::linear;
  SmallVector<int64_t> trained;
  /// Initial weights in the model's operand order.
  SmallVector<Value> weights;
  Value q, k;
  UpdateRule rule;
  UpdateOrder order = UpdateOrder::apply_then_update;
  int64_t chunkSize = 0;
  /// Whether the layer is one step on every key and value, then applied to
  /// every query (LaCT-NVS): a `full_batch` schedule, no chunks.
  bool fullBatch = false;
  /// The layer's output is the layer op's output transposed by this (empty:
  /// not transposed): a full-batch output computed in another layout.
  SmallVector<int64_t> outputPerm;
  /// Whether the trained weight's initial value is the stored one of a
  /// weight applied transposed (update then apply), which the layer op
  /// takes transposed.
  bool transposeInitial = false;
  /// TTT-Linear's dual form: the linear model has a trained bias (weight 1),
  /// the loss is `layernorm_mse` with these LayerNorm parameters, the causal
  /// steps are scaled by the per-position factors `tokenEta`.
  bool bias = false;
  /// The activation of an `mlp` model (TTT-MLP's tanh GELU).
  Activation activation = Activation::silu;
  Value tokenEta, lnGamma, lnBeta;
  /// The numbers of `token_eta`, when the model holds them as a folded
  /// constant of another shape (no `tokenEta` then).
  SmallVector<double> tokenEtaValues;
  double lnEps = 1e-6;
  /// The loss binds the keys to `rule.v - k` (TTT-Linear's reconstruction
  /// target `XV - XK`).
  bool valuesMinusKeys = false;
  /// The rates `rule.lr` are `[B, H, T]` (time last), one per token, which
  /// the layer op takes as `[B, H, T, 1]`.
  bool ratesTimeLast = false;
  /// The layer's output is the queries plus the layer op's output.
  bool residualQuery = false;
};

/// The kvb_layer form of `layer`, or the reason there is none.
FailureOr<LayerConfig> matchLayer(const FoundLayer &layer, std::string &why);

/// The kvb_layer form of a dual-form layer that trains a linear weight and
/// its bias (ttt-lm-pytorch's TTT-Linear), or two of each with a tanh GELU
/// between them (TTT-MLP), on the LayerNorm-MSE loss; or the reason there is
/// none.
FailureOr<LayerConfig> matchLayerNormDualForm(const FoundLayer &layer,
                                              std::string &why);

/// The operands and attributes of the `ttt.dwconv_layer` a layer computes
/// (ViT^3's depth-wise convolution branch).
struct DWConvConfig {
  /// `[B, C, h, w]` queries, keys and values; the start kernel (one
  /// `kh x kw` kernel per channel, in any layout of size-1 axes).
  Value q, k, v, kernel;
  double lossScale = 1.0;
  Sign sign = Sign::descent;
  double lrScale = 1.0;
  /// Whether the step is clipped per sample and channel, `G / (|G|_F + 1)`.
  bool clip = false;
};

/// True if a full-batch layer's output convolves the queries (the raise
/// reads it as a `ttt.dwconv_layer`, not a `ttt.kvb_layer`).
bool convolvesQueries(const FoundLayer &layer);

/// The dwconv_layer form of `layer`, or the reason there is none.
FailureOr<DWConvConfig> matchDWConvLayer(const FoundLayer &layer,
                                         std::string &why);

/// Builds the `ttt.dwconv_layer` for `config` before `layer.assembly`;
/// sets `output` to its output in the layer output's shape.
DWConvLayerOp buildDWConvLayer(OpBuilder &builder, const FoundLayer &layer,
                               const DWConvConfig &config,
                               SmallVectorImpl<Operation *> &created,
                               Value &output);

/// Builds the `ttt.kvb_layer` for `config` before `layer.assembly`, with
/// the nodes that give its operands the layer op's ranks (appended to
/// `created`); sets `output` to its output as the layer's output. Null if a
/// weight cannot be given the op's shape.
KVBLayerOp buildLayer(OpBuilder &builder, const FoundLayer &layer,
                      const LayerConfig &config,
                      SmallVectorImpl<Operation *> &created, Value &output);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_LAYERMATCHER_H
