//===- Simplify.cpp - the ttt-simplify pass -------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exact folds of a layer's attributes and operands, plus the paper's
// model-changing variants (V1-V6), each behind its own option and announced
// by a remark. The layer op is rebuilt once with every change applied.
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/IR/TTTOps.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTSIMPLIFY
#include "ttt/Dialect/TTT/Transforms/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// Every operand and attribute of a kvb_layer, editable before rebuilding.
struct LayerParts {
  Value q, k, v, lr, tokenEta, momentum, gamma, beta;
  SmallVector<Value> weights;
  FastWeightModelAttr model;
  LossAttr loss;
  UpdateAttr update;
  ScheduleAttr schedule;
  bool keepFinalWeights;
  /// Set by collapse-mlp: the column of a per-weight `lr` that the one
  /// remaining weight keeps (sliced only once every check has passed).
  std::optional<unsigned> lrColumn;

  explicit LayerParts(KVBLayerOp op)
      : q(op.getQ()), k(op.getK()), v(op.getV()), lr(op.getLr()),
        tokenEta(op.getTokenEta()), momentum(op.getMomentum()),
        gamma(op.getLnGamma()), beta(op.getLnBeta()), weights(op.getWeights()),
        model(op.getModel()), loss(op.getLoss()),
        update(op.getUpdateOrDefault()), schedule(op.getSchedule()),
        keepFinalWeights(!op.getFinalWeights().empty()) {}

  void setUpdate(std::optional<Sign> sign, std::optional<double> lrScale,
                 std::optional<NewtonSchulzAttr> ns,
                 std::optional<WeightNormKind> norm,
                 std::optional<ClipKind> clip = std::nullopt) {
    update = UpdateAttr::get(
        update.getContext(), sign.value_or(update.getSign()),
        lrScale ? APFloat(*lrScale) : update.getLrScale(),
        clip.value_or(update.getClip()), ns ? *ns : update.getOrthogonalize(),
        norm.value_or(update.getWeightNorm()), update.getWeightNormEps(),
        ns && !*ns ? UpdateBase::weights : update.getBase());
  }
};

/// The splat value of a constant tensor, if it is one.
std::optional<double> splatValue(Value value) {
  DenseElementsAttr dense;
  if (!value || !matchPattern(value, m_Constant(&dense)) || !dense.isSplat() ||
      !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

struct TTTSimplifyPass : ttt::impl::TTTSimplifyBase<TTTSimplifyPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<KVBLayerOp> layers;
    getOperation()->walk([&](KVBLayerOp op) { layers.push_back(op); });
    for (KVBLayerOp op : layers)
      if (failed(simplify(op)))
        return signalPassFailure();
  }

  /// A model-changing simplification, announced once the layer is rebuilt.
  struct Change {
    StringRef what, variant;
  };
  static void announce(KVBLayerOp op, const Change &change) {
    op.emitRemark("ttt-simplify: model changed: ")
        << change.what << " (the paper's " << change.variant
        << "); the layer computes a different function and must be retrained";
  }

  // Every check comes before the first change to the IR, so that a refused
  // layer is left exactly as it was.
  LogicalResult simplify(KVBLayerOp op) {
    LayerParts parts(op);
    OpBuilder b(op);
    MLIRContext *ctx = op.getContext();
    unsigned out = parts.model.getOutputWeightIndex();
    SmallVector<Change> changes;
    auto changed = [&](StringRef what, StringRef variant) {
      changes.push_back({what, variant});
    };

    // --- Model-changing variants, only on request. ---
    if (freezeInner) {
      SmallVector<int64_t> keep;
      for (int64_t i : parts.model.getTrained())
        if (static_cast<unsigned>(i) == out ||
            parts.model.getOutputBiasIndex() == static_cast<unsigned>(i))
          keep.push_back(i);
      if (keep.empty())
        keep.push_back(out);
      if (keep != SmallVector<int64_t>(parts.model.getTrained())) {
        parts.model = FastWeightModelAttr::get(ctx, parts.model.getKind(), keep,
                                               parts.model.getBias(),
                                               parts.model.getActivation());
        changed("only the output layer trains", "Variant 1");
      }
    }
    if (dropWeightNorm &&
        parts.update.getWeightNorm() != WeightNormKind::none) {
      parts.setUpdate({}, {}, {}, WeightNormKind::none);
      changed("weight normalization removed", "Variant 2");
    }
    if (collapseMLP && parts.model.getKind() != ModelKind::linear) {
      Value w = parts.weights[out];
      auto type = cast<RankedTensorType>(w.getType());
      int64_t rows = type.getDimSize(type.getRank() - 2);
      if (rows != op.getInputDim())
        return op.emitError("ttt-simplify: collapse-mlp needs the output "
                            "weight to map the input width (")
               << op.getInputDim() << ") to the output width, but it has "
               << rows << " rows";
      if (parts.lr &&
          cast<RankedTensorType>(parts.lr.getType()).getDimSize(3) > 1)
        parts.lrColumn = out;
      parts.weights = {w};
      parts.model = FastWeightModelAttr::get(ctx, ModelKind::linear, {0},
                                             /*bias=*/false, Activation::silu);
      changed("the fast-weight network is one linear layer initialised "
              "with the old output layer",
              "Variant 3");
    }
    if (dropTokenLR && parts.lr) {
      parts.lr = Value();
      changed("per-token learning rates removed", "Variant 4");
    }
    if (dropMomentum && parts.momentum) {
      parts.momentum = Value();
      changed("momentum removed", "Variant 5");
    }
    if (dropMuon && parts.update.getOrthogonalize()) {
      parts.setUpdate({}, {}, NewtonSchulzAttr(), {});
      changed("Newton-Schulz orthogonalization (Muon) removed", "Variant 6");
    } else if (dropMuon && parts.update.getClip() != ClipKind::none) {
      // ViT^3 has no Muon; the paper's Variant 6 removes the gradient's
      // normalization it has instead.
      parts.setUpdate({}, {}, {}, {}, ClipKind::none);
      changed("gradient clipping removed, the normalization of the update a "
              "layer without Muon has",
              "Variant 6");
    }

    // --- Exact folds. ---
    // The update is odd in the gradient (clip, momentum and Newton-Schulz
    // all are), so ascent is descent with the step negated.
    if (parts.update.getSign() == Sign::ascent)
      parts.setUpdate(Sign::descent,
                      -parts.update.getLrScale().convertToDouble(), {}, {});
    if (std::optional<double> m = splatValue(parts.momentum); m && *m == 0.0)
      parts.momentum = Value();
    if (std::optional<double> rate = splatValue(parts.lr);
        rate && !parts.lrColumn) {
      parts.setUpdate({}, parts.update.getLrScale().convertToDouble() * *rate,
                      {}, {});
      parts.lr = Value();
    }
    if (llvm::all_of(op.getFinalWeights(),
                     [](Value r) { return r.use_empty(); }))
      parts.keepFinalWeights = false;
    // A static sequence inside one update-then-apply chunk is one full-batch
    // step; a first chunk's momentum buffer is zero, so M = U.
    int64_t tokens = cast<RankedTensorType>(parts.k.getType()).getDimSize(2);
    if (parts.schedule.getKind() == ScheduleKind::chunked &&
        parts.schedule.getOrder() == UpdateOrder::update_then_apply &&
        !ShapedType::isDynamic(tokens) && tokens <= parts.schedule.getSize() &&
        (!parts.momentum || parts.schedule.getInnerSteps() == 1)) {
      parts.momentum = Value();
      parts.schedule = ScheduleAttr::get(ctx, ScheduleKind::full_batch, 0,
                                         UpdateOrder::apply_then_update,
                                         parts.schedule.getInnerSteps());
    }

    // Final weights that are read must map one to one onto the new ones.
    bool finalWeightsRead = llvm::any_of(
        op.getFinalWeights(), [](Value r) { return !r.use_empty(); });
    if (finalWeightsRead && parts.weights.size() != op.getWeights().size())
      return op.emitError("ttt-simplify: collapse-mlp changes the weights, so "
                          "their final values cannot replace the old ones");

    SmallVector<Type> finalTypes;
    if (parts.keepFinalWeights)
      for (Value w : parts.weights) {
        auto type = cast<RankedTensorType>(w.getType());
        auto qType = op.getQ().getType();
        finalTypes.push_back(
            RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                                   type.getDimSize(type.getRank() - 2),
                                   type.getDimSize(type.getRank() - 1)},
                                  type.getElementType()));
      }
    // Keep the attribute absent when it says nothing.
    UpdateAttr update = parts.update;
    if (update == op.getUpdateOrDefault() && !op.getUpdateAttr())
      update = UpdateAttr();
    tensor::ExtractSliceOp lrSlice;
    if (parts.lr && parts.lrColumn) {
      SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
      offsets[3] = b.getIndexAttr(*parts.lrColumn);
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(b, op.getLoc(), parts.lr);
      sizes[3] = b.getIndexAttr(1);
      lrSlice = tensor::ExtractSliceOp::create(
          b, op.getLoc(), parts.lr, offsets, sizes,
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
      parts.lr = lrSlice;
    }
    auto rebuilt = KVBLayerOp::create(
        b, op.getLoc(), op.getOutput().getType(), finalTypes, parts.q, parts.k,
        parts.v, parts.weights, parts.lr, parts.tokenEta, parts.momentum,
        parts.gamma, parts.beta, parts.model, parts.loss, update,
        parts.schedule);
    auto discard = [&] {
      rebuilt.erase();
      if (lrSlice)
        lrSlice.erase();
    };
    if (failed(mlir::verify(rebuilt))) {
      discard();
      return op.emitError("ttt-simplify: the simplified layer is invalid");
    }
    if (OperationEquivalence::isEquivalentTo(
            op, rebuilt, OperationEquivalence::exactValueMatch, nullptr,
            OperationEquivalence::IgnoreLocations)) {
      discard();
      return success();
    }
    for (const Change &change : changes)
      announce(op, change);
    op.getOutput().replaceAllUsesWith(rebuilt.getOutput());
    if (parts.keepFinalWeights)
      for (auto [from, to] :
           llvm::zip(op.getFinalWeights(), rebuilt.getFinalWeights()))
        from.replaceAllUsesWith(to);
    op.erase();
    return success();
  }
};

} // namespace

ArrayRef<SimplifyVariant> mlir::ttt::getSimplifyVariants() {
  // The option names of Passes.td; the member pointers tie each one to the
  // generated options.
  static constexpr SimplifyVariant variants[] = {
      {"freeze-inner", &TTTSimplifyOptions::freezeInner},
      {"drop-weight-norm", &TTTSimplifyOptions::dropWeightNorm},
      {"collapse-mlp", &TTTSimplifyOptions::collapseMLP},
      {"drop-token-lr", &TTTSimplifyOptions::dropTokenLR},
      {"drop-momentum", &TTTSimplifyOptions::dropMomentum},
      {"drop-muon", &TTTSimplifyOptions::dropMuon},
  };
  return variants;
}
