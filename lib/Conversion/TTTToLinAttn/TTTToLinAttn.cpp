//===- TTTToLinAttn.cpp - TTT layers that are linear attention ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites the layers that LayerAnalysis proves to be linear attention
// (Theorems 5.1-5.3, docs/Theory.md sections 2-4; the recipe is section 6)
// into linattn ops:
//
//   q^ = phi(q), k^ = phi(k)                    feature_map (static kernel)
//   G_c = c * sum eta_t k^_t^T v_t              chunk_reduce (c folds the loss
//                                               scale, sign and step size)
//   U_c = mu_c U_{c-1} + G_c                    scan decayed (momentum)
//   D_c = lr * NS(U_c)                          state_transform (Muon)
//   S_c = W_out + sum_{j<c or j<=c} D_j         scan additive (order -> mask)
//   O_c = Q^_c S_c                              chunk_apply
//
// MSE layers become a residual affine scan S_c = S + T_c S + G_c with
// T_c = c K^T D K; a full-batch step without state transforms becomes one
// linattn.attention with the full mask. Anything else stays untouched, with a
// remark that says why.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"
#include "ttt/Conversion/Utils/TensorMath.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"
#include "ttt/Dialect/TTT/Analysis/FormChoice.h"
#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTTOLINATTN
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {

class LayerRewriter {
public:
  LayerRewriter(PatternRewriter &rewriter, KVBLayerOp op,
                const LayerFacts &facts)
      : b(rewriter), loc(op.getLoc()), op(op), facts(facts),
        model(op.getModel()), update(op.getUpdateOrDefault()),
        schedule(op.getSchedule()),
        type(cast<FloatType>(op.getQ().getType().getElementType())),
        tm(rewriter, op.getLoc(), type) {}

  Value rewrite();

private:
  /// phi(x): the frozen inner layers, plus a constant 1 for a trained bias.
  Value features(Value x);
  /// The learning rates, [B, H, T, n], or null; the output weight's are
  /// column rateColumn().
  Value tokenRates() { return op.getLr(); }
  uint64_t rateColumn();
  /// W_out (with its bias row appended): the initial state S0.
  Value initialState();
  /// +1 for descent on the dot product (values add), -1 for ascent.
  double valueSign() const {
    return update.getSign() == Sign::descent ? 1.0 : -1.0;
  }
  RankedTensorType statesType(int64_t features, int64_t values);

  Value rewriteChunked();
  Value rewriteAffine();
  Value rewriteFullBatch();

  PatternRewriter &b;
  Location loc;
  KVBLayerOp op;
  const LayerFacts &facts;
  FastWeightModelAttr model;
  UpdateAttr update;
  ScheduleAttr schedule;
  FloatType type;
  TensorMath tm;
};

} // namespace

RankedTensorType LayerRewriter::statesType(int64_t features, int64_t values) {
  auto q = op.getQ().getType();
  return RankedTensorType::get({q.getDimSize(0), q.getDimSize(1),
                                ShapedType::kDynamic, features, values},
                               type);
}

Value LayerRewriter::features(Value x) {
  auto xType = cast<RankedTensorType>(x.getType());
  linattn::FeatureMapKind kind = linattn::FeatureMapKind::identity;
  SmallVector<Value> weights;
  int64_t width = xType.getDimSize(3);
  auto act = linattn::Activation::silu;
  switch (model.getKind()) {
  case ModelKind::linear:
    break;
  case ModelKind::mlp:
    kind = linattn::FeatureMapKind::mlp;
    weights.push_back(op.getWeights()[0]);
    if (model.getBias())
      weights.push_back(op.getWeights()[1]);
    act = static_cast<linattn::Activation>(model.getActivation());
    break;
  case ModelKind::swiglu:
    kind = linattn::FeatureMapKind::swiglu;
    weights = {op.getWeights()[0], op.getWeights()[2]};
    break;
  case ModelKind::glu:
    llvm_unreachable("glu layers are never rewritten");
  }
  if (!weights.empty()) {
    auto w = cast<RankedTensorType>(weights[0].getType());
    width = w.getDimSize(w.getRank() - 1);
  }
  if (facts.biasFeature)
    ++width;
  if (kind == linattn::FeatureMapKind::identity && !facts.biasFeature)
    return x;
  auto resultType = RankedTensorType::get(
      {xType.getDimSize(0), xType.getDimSize(1), xType.getDimSize(2), width},
      type);
  return linattn::FeatureMapOp::create(b, loc, resultType, x, weights, kind,
                                       act, facts.biasFeature);
}

uint64_t LayerRewriter::rateColumn() {
  Value lr = op.getLr();
  if (!lr || cast<RankedTensorType>(lr.getType()).getDimSize(3) == 1)
    return 0;
  return model.getOutputWeightIndex();
}

Value LayerRewriter::initialState() {
  Value w = op.getWeights()[model.getOutputWeightIndex()];
  if (!facts.biasFeature)
    return w;
  // [.., F, E] and the bias [.., 1, E] stacked to [.., F + 1, E].
  Value bias = op.getWeights()[*model.getOutputBiasIndex()];
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t rank = wType.getRank();
  SmallVector<OpFoldResult> sizes = tm.sizes(w);
  SmallVector<OpFoldResult> stacked(sizes);
  stacked[rank - 2] = b.getIndexAttr(wType.getDimSize(rank - 2) + 1);
  Value init = tensor::EmptyOp::create(b, loc, stacked, type);
  SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0));
  init = tm.insert(w, init, zeros, sizes);
  SmallVector<OpFoldResult> at(zeros);
  at[rank - 2] = b.getIndexAttr(wType.getDimSize(rank - 2));
  return tm.insert(bias, init, at, tm.sizes(bias));
}

Value LayerRewriter::rewriteChunked() {
  LossAttr loss = op.getLoss();
  int64_t chunk = schedule.getSize();
  Value qf = features(op.getQ()), kf = features(op.getK());
  int64_t width = cast<RankedTensorType>(kf.getType()).getDimSize(3);
  int64_t values = op.getOutputDim();
  RankedTensorType states = statesType(width, values);
  Value eta = tokenRates();
  NewtonSchulzAttr ns = update.getOrthogonalize();
  double lrScale = update.getLrScale().convertToDouble();
  // Without Muon the step size is linear and folds into the contributions;
  // n identical inner steps add n times the same update.
  double factor = valueSign() * loss.getScale().convertToDouble() *
                  (ns ? 1.0 : lrScale * schedule.getInnerSteps());
  bool mean = loss.getReduction() == Reduction::mean;
  uint64_t column = rateColumn();
  IntegerAttr chunkAttr = b.getI64IntegerAttr(chunk);
  Value g =
      linattn::ChunkReduceOp::create(b, loc, states, kf, op.getV(), eta, column,
                                     chunkAttr, APFloat(factor), mean);
  if (Value m = op.getMomentum()) {
    auto mType = cast<RankedTensorType>(m.getType());
    auto meanType = RankedTensorType::get(
        {mType.getDimSize(0), mType.getDimSize(1), ShapedType::kDynamic}, type);
    Value mu = linattn::ChunkMeanOp::create(b, loc, meanType, m, chunk);
    g = linattn::ScanOp::create(b, loc, states, g, Value(), mu, Value(),
                                linattn::ScanKind::decayed,
                                linattn::ScanMode::inclusive);
  }
  if (ns) {
    SmallVector<double> coeffs(ns.getCoeffs().asArrayRef());
    g = linattn::StateTransformOp::create(b, loc, states, g, ns.getSteps(),
                                          coeffs, ns.getEps(),
                                          APFloat(lrScale));
  }
  bool causal = schedule.getOrder() == UpdateOrder::causal;
  auto mode = schedule.getOrder() == UpdateOrder::update_then_apply
                  ? linattn::ScanMode::inclusive
                  : linattn::ScanMode::exclusive;
  Value s = linattn::ScanOp::create(b, loc, states, g, initialState(), Value(),
                                    Value(), linattn::ScanKind::additive, mode);
  // Token i of a causal chunk also reads the steps of tokens 1..i, scaled
  // as the chunk's state contribution is.
  return linattn::ChunkApplyOp::create(
      b, loc, op.getOutput().getType(), qf, s, causal ? kf : Value(),
      causal ? op.getV() : Value(), causal ? eta : Value(), causal ? column : 0,
      chunkAttr, APFloat(causal ? factor : 1.0), causal && mean);
}

Value LayerRewriter::rewriteAffine() {
  LossAttr loss = op.getLoss();
  int64_t chunk = schedule.getSize();
  Value qf = features(op.getQ()), kf = features(op.getK());
  int64_t width = cast<RankedTensorType>(kf.getType()).getDimSize(3);
  Value eta = tokenRates();
  // S + lr * sign * s * sum eta k^T (k S - v): T_c = c K^T D K, G_c = -c K^T D
  // V.
  double sign = update.getSign() == Sign::descent ? -1.0 : 1.0;
  double c = sign * loss.getScale().convertToDouble() *
             update.getLrScale().convertToDouble();
  bool mean = loss.getReduction() == Reduction::mean;
  uint64_t column = rateColumn();
  IntegerAttr chunkAttr = b.getI64IntegerAttr(chunk);
  Value transition =
      linattn::ChunkReduceOp::create(b, loc, statesType(width, width), kf, kf,
                                     eta, column, chunkAttr, APFloat(c), mean);
  RankedTensorType states = statesType(width, op.getOutputDim());
  Value g = linattn::ChunkReduceOp::create(
      b, loc, states, kf, op.getV(), eta, column, chunkAttr, APFloat(-c), mean);
  auto mode = schedule.getOrder() == UpdateOrder::update_then_apply
                  ? linattn::ScanMode::inclusive
                  : linattn::ScanMode::exclusive;
  Value s = linattn::ScanOp::create(b, loc, states, g, initialState(), Value(),
                                    transition,
                                    linattn::ScanKind::residual_affine, mode);
  return linattn::ChunkApplyOp::create(b, loc, op.getOutput().getType(), qf, s,
                                       Value(), Value(), Value(), 0, chunkAttr,
                                       APFloat(1.0), /*intra_mean=*/false);
}

Value LayerRewriter::rewriteFullBatch() {
  LossAttr loss = op.getLoss();
  Value qf = features(op.getQ()), kf = features(op.getK());
  double factor = valueSign() * loss.getScale().convertToDouble() *
                  update.getLrScale().convertToDouble();
  return linattn::AttentionOp::create(
      b, loc, op.getOutput().getType(), qf, kf, op.getV(), initialState(),
      Value(), tokenRates(), rateColumn(), linattn::Mask::full, IntegerAttr(),
      APFloat(factor), loss.getReduction() == Reduction::mean);
}

Value LayerRewriter::rewrite() {
  if (facts.lowering == ExactLowering::SingleStep)
    return rewriteFullBatch();
  if (facts.lowering == ExactLowering::AffineScan)
    return rewriteAffine();
  return rewriteChunked();
}

namespace {
struct RewriteLinearAttentionLayer : OpRewritePattern<KVBLayerOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KVBLayerOp op,
                                PatternRewriter &rewriter) const override {
    LayerFacts facts = analyzeLayer(op);
    if (!facts.rewritable)
      return rewriter.notifyMatchFailure(op, explainLayer(facts));
    if (hasEmptySequence(op))
      return rewriter.notifyMatchFailure(op, kEmptySequence);
    if (cast<FloatType>(op.getQ().getType().getElementType()).getWidth() < 32)
      return rewriteInF32(op, rewriter);
    LayerRewriter layer(rewriter, op, facts);
    Value o = layer.rewrite();
    rewriter.replaceAllUsesWith(op.getOutput(), o);
    rewriter.eraseOp(op);
    return success();
  }

  /// A 16-bit layer: its recurrent form computes in f32 and rounds the
  /// output once, so its parallel form does too (a chunk state summed in 16
  /// bits would lose what the reference keeps): the operands widened, the
  /// layer rewritten in f32, the output rounded.
  static LogicalResult rewriteInF32(KVBLayerOp op, PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    IRMapping widened;
    for (Value operand : op->getOperands()) {
      if (widened.contains(operand))
        continue;
      auto type = cast<RankedTensorType>(operand.getType());
      widened.map(operand, arith::ExtFOp::create(rewriter, loc, type.clone(f32),
                                                 operand));
    }
    auto wide = cast<KVBLayerOp>(rewriter.clone(*op, widened));
    for (Value result : wide->getResults())
      result.setType(cast<RankedTensorType>(result.getType()).clone(f32));
    LayerFacts facts = analyzeLayer(wide);
    if (!facts.rewritable) {
      rewriter.eraseOp(wide);
      return rewriter.notifyMatchFailure(op, explainLayer(facts));
    }
    LayerRewriter layer(rewriter, wide, facts);
    Value o = layer.rewrite();
    Value narrow =
        arith::TruncFOp::create(rewriter, loc, op.getOutput().getType(), o);
    rewriter.replaceAllUsesWith(op.getOutput(), narrow);
    rewriter.eraseOp(wide);
    rewriter.eraseOp(op);
    return success();
  }
};

struct TTTToLinAttnPass : ttt::impl::TTTToLinAttnBase<TTTToLinAttnPass> {
  using TTTToLinAttnBase::TTTToLinAttnBase;
  void runOnOperation() override {
    if (form != "parallel" && form != "recurrent" && form != "auto") {
      emitError(getOperation()->getLoc())
          << "ttt-to-linattn: unknown form '" << form
          << "' (expected parallel, recurrent or auto)";
      return signalPassFailure();
    }
    unsigned targetCores = cores ? unsigned(cores) : getHostCores();
    // Remarks first, while every layer is still in place; the layers that
    // keep their recurrent form by choice are marked for the pattern.
    SmallVector<Operation *> layers;
    getOperation()->walk([&](KVBLayerOp op) {
      LayerFacts facts = analyzeLayer(op);
      if (!facts.rewritable) {
        op.emitRemark("ttt-to-linattn: left unchanged; ")
            << explainLayer(facts);
        return;
      }
      if (hasEmptySequence(op)) {
        op.emitRemark("ttt-to-linattn: left unchanged; ") << kEmptySequence;
        return;
      }
      if (form == "recurrent") {
        op.emitRemark("ttt-to-linattn: recurrent form kept (form=recurrent)");
        return;
      }
      if (form == "auto") {
        FormChoice choice = chooseForm(op, targetCores);
        op.emitRemark("ttt-to-linattn: ")
            << (choice.parallel ? "parallel" : "recurrent")
            << " form chosen (form=auto): " << choice.reason;
        if (!choice.parallel)
          return;
      }
      layers.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<RewriteLinearAttentionLayer>(&getContext());
    // Only the layers and what their rewrite creates: the rest of the program
    // (an imported ONNX graph, say) stays exactly as it is, dead ops included.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyOpPatternsGreedily(layers, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
