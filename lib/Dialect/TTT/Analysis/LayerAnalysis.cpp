//===- LayerAnalysis.cpp - when is a TTT layer linear attention -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ttt;

StringRef mlir::ttt::stringifyExactLowering(ExactLowering lowering) {
  switch (lowering) {
  case ExactLowering::PrefixSum:
    return "prefix sum over chunk states";
  case ExactLowering::AffineScan:
    return "affine scan over chunk states";
  case ExactLowering::SingleStep:
    return "single full-batch step (reduce, transform, apply)";
  case ExactLowering::ChunkSequential:
    return "chunk-sequential loop";
  }
  llvm_unreachable("unknown lowering");
}

StringRef mlir::ttt::stringifyStateUpdate(StateUpdate update) {
  switch (update) {
  case StateUpdate::Additive:
    return "additive";
  case StateUpdate::Affine:
    return "affine";
  case StateUpdate::NonAffine:
    return "non-affine";
  }
  llvm_unreachable("unknown update");
}

/// "W0 (gate), W2 (up)" for the trained weights of `model` outside `keep`.
static std::string trainedInnerWeights(FastWeightModelAttr model,
                                       ArrayRef<unsigned> keep) {
  SmallVector<std::string> names;
  for (int64_t i : model.getTrained())
    if (!llvm::is_contained(keep, static_cast<unsigned>(i)))
      names.push_back(model.getWeightRole(i).str());
  return llvm::join(names, ", ");
}

LayerFacts mlir::ttt::analyzeLayer(KVBLayerOp op) {
  LayerFacts facts;
  FastWeightModelAttr model = op.getModel();
  UpdateAttr update = op.getUpdateOrDefault();
  ScheduleAttr schedule = op.getSchedule();
  LossKind loss = op.getLoss().getKind();
  bool fullBatch = schedule.getKind() == ScheduleKind::full_batch;
  bool causal = !fullBatch && schedule.getOrder() == UpdateOrder::causal;
  unsigned out = model.getOutputWeightIndex();
  std::optional<unsigned> outBias = model.getOutputBiasIndex();
  auto block = [&](std::string why) {
    facts.blockers.push_back(std::move(why));
  };
  auto unsupported = [&](std::string why) {
    facts.unsupported.push_back(std::move(why));
  };

  // Theorem 5.1's only assumption: the output layer is linear in its weights.
  std::string outName = model.getWeightRole(out).str();
  if (model.getKind() == ModelKind::glu) {
    block("the output (x Wa) * silu(x Wg) gates every output channel, so it is "
          "not a linear map of fixed features");
  } else {
    facts.outputLinear = true;
    facts.proven.push_back("output layer " + outName + " is linear" +
                           (outBias ? " with its bias as a constant feature"
                                    : std::string(" and bias-free")));
  }

  // Static kernel: only the output layer (and its bias) trains.
  SmallVector<unsigned> outputWeights{out};
  if (outBias)
    outputWeights.push_back(*outBias);
  std::string inner = trainedInnerWeights(model, outputWeights);
  if (facts.outputLinear) {
    if (!inner.empty()) {
      block(inner + (StringRef(inner).contains(',') ? " are" : " is") +
            " trained, so the features of q and k depend on the history "
            "(dynamic kernel)");
    } else if (!model.isTrained(out)) {
      block("the output layer " + outName + " does not train");
    } else {
      facts.staticKernel = true;
      facts.proven.push_back(
          model.getKind() == ModelKind::linear
              ? std::string("the feature map is the identity (only the "
                            "output layer trains)")
              : "the feature map is static (only " + outName + " trains)");
      if (outBias) {
        if (model.isTrained(*outBias)) {
          facts.biasFeature = true;
        } else {
          unsupported("the output bias is fixed while " + outName +
                      " trains (a constant offset the rewrite does not "
                      "emit yet)");
        }
      }
    }
  }

  // How the update depends on the state.
  bool stateFree = facts.staticKernel && loss == LossKind::dot;
  bool affine = facts.staticKernel && loss == LossKind::mse;
  if (loss == LossKind::layernorm_mse)
    block("LayerNorm inside the loss makes the gradient non-linear in the "
          "state");
  if (update.getWeightNorm() == WeightNormKind::output_channels)
    block("row weight normalization after each update rescales the state by "
          "its own norms (non-linear in the state)");
  if (affine && update.getOrthogonalize())
    block("Newton-Schulz (Muon) of a state-dependent MSE gradient is "
          "non-linear in the state");
  if (affine && update.getClip() != ClipKind::none)
    block("clipping a state-dependent MSE gradient is non-linear in the state");
  bool cleanState = facts.blockers.empty();
  if (stateFree && cleanState) {
    facts.update = StateUpdate::Additive;
    facts.proven.push_back("the state update is additive (the dot-product "
                           "gradient does not depend on the state)");
  } else if (affine && cleanState) {
    facts.update = StateUpdate::Affine;
    facts.proven.push_back("the state update is affine in the state (MSE "
                           "gradient frozen per chunk)");
  }
  if (update.getSign() == Sign::ascent)
    facts.proven.push_back("gradient ascent folds into the value scale");
  if (op.getLr())
    facts.proven.push_back("per-token learning rates fold into the values");

  // Pick the exact lowering.
  if (fullBatch) {
    facts.lowering = ExactLowering::SingleStep;
    facts.proven.push_back("one full-batch step: the state is materialized "
                           "once, so any transform of it is exact");
  } else if (facts.update == StateUpdate::Additive) {
    facts.lowering = ExactLowering::PrefixSum;
    if (op.getMomentum())
      facts.proven.push_back("momentum is a decayed scan of chunk updates");
    if (update.getOrthogonalize())
      facts.proven.push_back("Muon acts on each chunk's state-independent "
                             "update (parallel over chunks)");
  } else if (facts.update == StateUpdate::Affine) {
    facts.lowering = ExactLowering::AffineScan;
  }

  // What the rewrite implements of the exact lowerings.
  if (facts.lowering == ExactLowering::PrefixSum) {
    if (update.getClip() != ClipKind::none)
      unsupported("clipping each chunk's update is not expressed in linattn "
                  "yet");
    if (schedule.getInnerSteps() > 1 &&
        (op.getMomentum() || update.getOrthogonalize()))
      unsupported("several inner steps with momentum or Muon");
    if (causal && op.getTokenEta())
      unsupported("per-position step sizes (token_eta) weight the intra-chunk "
                  "term per query");
  } else if (facts.lowering == ExactLowering::AffineScan) {
    if (causal)
      unsupported("the causal order of an affine (MSE) layer reads "
                  "state-dependent values inside the chunk");
    if (op.getMomentum())
      unsupported("momentum of an affine update (a two-state affine scan)");
    if (schedule.getInnerSteps() > 1)
      unsupported("several inner steps of an affine update");
  } else if (facts.lowering == ExactLowering::SingleStep) {
    if (!facts.staticKernel || loss != LossKind::dot ||
        update.getOrthogonalize() || update.getClip() != ClipKind::none ||
        update.getWeightNorm() != WeightNormKind::none)
      unsupported("this full-batch step transforms its state (or its "
                  "features); the recurrent lowering already is the exact "
                  "reduce-transform-apply form");
    if (schedule.getInnerSteps() > 1)
      unsupported("several inner steps");
  }
  if (update.getBase() == UpdateBase::update)
    unsupported("its step replaces the weights by the update plus its "
                "Newton-Schulz result (W' = U + s NS(U)), which no linattn "
                "form computes");
  if (NewtonSchulzAttr ns = update.getOrthogonalize(); ns && ns.getCompute())
    unsupported("Muon computes in a 16-bit type, which the linattn form's "
                "Newton-Schulz does not");
  if (facts.biasFeature && update.getOrthogonalize())
    unsupported("Muon orthogonalizes the output weight and its bias "
                "separately, which the stacked [W; b] state would not");
  if (facts.biasFeature && op.getLr() &&
      cast<RankedTensorType>(op.getLr().getType()).getDimSize(3) != 1)
    unsupported("the output weight and its bias have separate learning-rate "
                "columns");
  if (cast<FloatType>(op.getQ().getType().getElementType()).getWidth() < 32)
    facts.proven.push_back("a 16-bit layer is computed in f32 and rounded "
                           "once at the end, in either form");
  for (Value result : op.getFinalWeights())
    if (!result.use_empty()) {
      unsupported("the final fast weights are used");
      break;
    }
  facts.rewritable = facts.lowering != ExactLowering::ChunkSequential &&
                     facts.unsupported.empty();
  return facts;
}

LayerFacts mlir::ttt::analyzeLayer(DWConvLayerOp op) {
  LayerFacts facts;
  facts.outputLinear = true;
  facts.staticKernel = true;
  facts.lowering = ExactLowering::SingleStep;
  facts.proven.push_back("a depth-wise convolution is per-channel linear "
                         "attention with 9-dimensional keys");
  facts.proven.push_back("one full-batch step: the kernel is materialized "
                         "once, so any transform of it is exact");
  facts.unsupported.push_back("the recurrent lowering already is the exact "
                              "reduce-transform-apply form");
  return facts;
}

std::string mlir::ttt::explainLayer(const LayerFacts &facts) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "exact lowering: " << stringifyExactLowering(facts.lowering);
  if (!facts.proven.empty())
    os << "; proven: " << llvm::join(facts.proven, "; ");
  if (!facts.blockers.empty())
    os << "; blocked by: " << llvm::join(facts.blockers, "; ");
  if (facts.rewritable)
    os << "; ttt-to-linattn rewrites it";
  else if (!facts.unsupported.empty())
    os << "; not rewritten: " << llvm::join(facts.unsupported, "; ");
  else
    os << "; not rewritten: only the chunk-sequential loop is exact";
  return text;
}
