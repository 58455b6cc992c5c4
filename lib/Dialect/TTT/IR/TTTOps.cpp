//===- TTTOps.cpp - ttt layer ops -----------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/IR/TTTOps.h"
#include "ttt/Support/ShapeChecker.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::ttt;

//===----------------------------------------------------------------------===//
// KVBLayerOp
//===----------------------------------------------------------------------===//

UpdateAttr KVBLayerOp::getUpdateOrDefault() {
  if (auto update = getUpdateAttr())
    return update;
  return UpdateAttr::get(getContext(), Sign::descent, APFloat(1.0),
                         ClipKind::none, NewtonSchulzAttr(),
                         WeightNormKind::none, APFloat(1e-5),
                         UpdateBase::weights);
}

int64_t KVBLayerOp::getInputDim() { return dimOf(getQ(), 3); }
int64_t KVBLayerOp::getOutputDim() { return dimOf(getV(), 3); }

/// The expected [rows, cols] of every weight of `model`; `hidden` is the
/// hidden width read off the first weight (dynamic if unknown).
static SmallVector<std::pair<int64_t, int64_t>>
expectedWeightShapes(FastWeightModelAttr model, int64_t din, int64_t dout,
                     int64_t hidden) {
  switch (model.getKind()) {
  case ModelKind::linear:
    if (model.getBias())
      return {{din, dout}, {1, dout}};
    return {{din, dout}};
  case ModelKind::mlp:
    if (model.getBias())
      return {{din, hidden}, {1, hidden}, {hidden, dout}, {1, dout}};
    return {{din, hidden}, {hidden, dout}};
  case ModelKind::swiglu:
    return {{din, hidden}, {hidden, dout}, {din, hidden}};
  case ModelKind::glu:
    return {{din, dout}, {din, dout}};
  }
  llvm_unreachable("unknown model kind");
}

LogicalResult KVBLayerOp::verify() {
  ShapeChecker check(getOperation());
  FastWeightModelAttr model = getModel();
  ScheduleAttr schedule = getSchedule();
  UpdateAttr update = getUpdateOrDefault();
  bool chunked = schedule.getKind() == ScheduleKind::chunked;
  bool causal = chunked && schedule.getOrder() == UpdateOrder::causal;

  const char *qkvLayout = "[batch, heads, seq, features]";
  Value q = getQ(), k = getK(), v = getV();
  if (failed(check.rank(q, "q", {4}, qkvLayout)) ||
      failed(check.rank(k, "k", {4}, qkvLayout)) ||
      failed(check.rank(v, "v", {4}, qkvLayout)))
    return failure();

  Type elementType = cast<RankedTensorType>(q.getType()).getElementType();
  SmallVector<Value> typed{k, v};
  llvm::append_range(typed, getWeights());
  for (Value opt :
       {getLr(), getTokenEta(), getMomentum(), getLnGamma(), getLnBeta()})
    if (opt)
      typed.push_back(opt);
  llvm::append_range(typed, getOperation()->getResults());
  if (failed(check.elementTypes(elementType, typed, "q")))
    return failure();

  int64_t batch = mergeDim(mergeDim(dimOf(q, 0), dimOf(k, 0)), dimOf(v, 0));
  int64_t heads = mergeDim(mergeDim(dimOf(q, 1), dimOf(k, 1)), dimOf(v, 1));
  int64_t seq = mergeDim(dimOf(k, 2), dimOf(v, 2));
  for (auto [value, name] : {std::pair{q, "q"}, {k, "k"}, {v, "v"}}) {
    if (failed(check.dim(value, name, 0, batch, "the batch")) ||
        failed(check.dim(value, name, 1, heads, "the number of heads")))
      return failure();
  }
  if (failed(check.dim(v, "v", 2, seq, "the key/value sequence length")))
    return failure();
  if (chunked && failed(check.dim(q, "q", 2, seq,
                                  "the sequence length (q, k and v must have "
                                  "the same length unless the schedule is "
                                  "full_batch)")))
    return failure();
  if (failed(check.staticDim(q, "q", 3, "the input feature size")) ||
      failed(check.staticDim(k, "k", 3, "the input feature size")) ||
      failed(check.staticDim(v, "v", 3, "the output feature size")))
    return failure();
  int64_t din = dimOf(q, 3), dout = dimOf(v, 3);
  if (failed(check.dim(k, "k", 3, din, "the input feature size of q")))
    return failure();

  // Weights.
  unsigned numWeights = model.getNumWeights();
  if (getWeights().size() != numWeights)
    return emitOpError() << "a " << stringifyModelKind(model.getKind())
                         << (model.getBias() ? " model with bias" : " model")
                         << " takes " << numWeights << " weights, got "
                         << getWeights().size();
  const char *weightLayout =
      "[heads, rows, cols] or [batch, heads, rows, cols]";
  for (auto [i, w] : llvm::enumerate(getWeights())) {
    std::string name = ("weight #" + Twine(i)).str();
    if (failed(check.rank(w, name, {3, 4}, weightLayout)))
      return failure();
    int64_t rank = cast<RankedTensorType>(w.getType()).getRank();
    if (rank == 4 && failed(check.dim(w, name, 0, batch, "the batch")))
      return failure();
    if (failed(check.dim(w, name, rank - 3, heads, "the number of heads")) ||
        failed(check.staticDim(w, name, rank - 2, "a weight's row count")) ||
        failed(check.staticDim(w, name, rank - 1, "a weight's column count")))
      return failure();
  }
  Value first = getWeights().front();
  int64_t firstRank = cast<RankedTensorType>(first.getType()).getRank();
  int64_t hidden = dimOf(first, firstRank - 1);
  auto expected = expectedWeightShapes(model, din, dout, hidden);
  for (auto [i, w] : llvm::enumerate(getWeights())) {
    auto type = cast<RankedTensorType>(w.getType());
    int64_t rows = type.getDimSize(type.getRank() - 2);
    int64_t cols = type.getDimSize(type.getRank() - 1);
    if (rows != expected[i].first || cols != expected[i].second)
      return emitOpError() << "weight #" << i << " (" << model.getWeightRole(i)
                           << " of the " << stringifyModelKind(model.getKind())
                           << " model) must be " << expected[i].first << "x"
                           << expected[i].second << " (input x output), got "
                           << rows << "x" << cols;
  }

  // Per-token learning rates.
  if (Value lr = getLr()) {
    if (failed(
            check.rank(lr, "lr", {4}, "[batch, heads, seq, 1 or #weights]")) ||
        failed(check.dim(lr, "lr", 0, batch, "the batch")) ||
        failed(check.dim(lr, "lr", 1, heads, "the number of heads")) ||
        failed(check.dim(lr, "lr", 2, seq, "the key/value sequence length")))
      return failure();
    int64_t columns = dimOf(lr, 3);
    if (columns != 1 && columns != static_cast<int64_t>(numWeights))
      return emitOpError() << "'lr' must have 1 column (shared) or one per "
                              "weight ("
                           << numWeights << "), got " << columns;
  }

  if (Value eta = getTokenEta()) {
    if (!causal)
      return emitOpError() << "'token_eta' (per-position step sizes) only "
                              "applies to the causal order; use a chunked "
                              "schedule with order = causal or drop it";
    if (failed(check.rank(eta, "token_eta", {1}, "[chunk size]")) ||
        failed(check.staticDim(eta, "token_eta", 0, "the chunk size")) ||
        failed(check.dim(eta, "token_eta", 0, schedule.getSize(),
                         "the chunk size")))
      return failure();
  }

  if (Value m = getMomentum()) {
    if (!chunked || causal)
      return emitOpError() << "momentum needs a chunked schedule with order "
                              "apply_then_update or update_then_apply; it is "
                              "undefined for "
                           << (chunked ? "the causal order"
                                       : "a full_batch schedule");
    if (failed(check.rank(m, "momentum", {3}, "[batch, heads, seq]")) ||
        failed(check.dim(m, "momentum", 0, batch, "the batch")) ||
        failed(check.dim(m, "momentum", 1, heads, "the number of heads")) ||
        failed(
            check.dim(m, "momentum", 2, seq, "the key/value sequence length")))
      return failure();
  }

  // LayerNorm parameters go with the layernorm_mse loss and nothing else.
  bool wantsLayerNorm = getLoss().getKind() == LossKind::layernorm_mse;
  if (wantsLayerNorm != static_cast<bool>(getLnGamma()))
    return emitOpError() << (wantsLayerNorm
                                 ? "the layernorm_mse loss needs "
                                   "'layernorm(gamma, beta)' operands"
                                 : "'layernorm(gamma, beta)' operands are "
                                   "only used by the layernorm_mse loss");
  if (wantsLayerNorm) {
    for (auto [value, name] :
         {std::pair{getLnGamma(), "gamma"}, {getLnBeta(), "beta"}}) {
      if (failed(check.rank(value, name, {1, 2}, "[heads, Dout] or [Dout]")))
        return failure();
      int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
      if (failed(check.dim(value, name, rank - 1, dout,
                           "the output feature size")) ||
          (rank == 2 &&
           failed(check.dim(value, name, 0, heads, "the number of heads"))))
        return failure();
    }
  }

  if (causal) {
    const char *why = " is undefined for the causal order, whose tokens read "
                      "partial sums of raw gradients";
    if (update.getClip() != ClipKind::none)
      return emitOpError() << "gradient clipping" << why;
    if (update.getOrthogonalize())
      return emitOpError() << "orthogonalization (Muon)" << why;
    if (update.getWeightNorm() != WeightNormKind::none)
      return emitOpError() << "weight normalization" << why;
  }

  // Results.
  int64_t qSeq = dimOf(q, 2);
  auto outType = cast<RankedTensorType>(getOutput().getType());
  if (outType.getRank() != 4)
    return emitOpError() << "result 'o' must have shape [batch, heads, "
                            "query seq, Dout], got "
                         << outType;
  if (failed(check.dim(getOutput(), "o", 0, batch, "the batch")) ||
      failed(check.dim(getOutput(), "o", 1, heads, "the number of heads")) ||
      failed(
          check.dim(getOutput(), "o", 2, qSeq, "the query sequence length")) ||
      failed(check.dim(getOutput(), "o", 3, dout, "the output feature size")))
    return failure();
  if (!getFinalWeights().empty()) {
    if (getFinalWeights().size() != numWeights)
      return emitOpError() << "expects either no final-weight results or one "
                              "per weight ("
                           << numWeights << "), got "
                           << getFinalWeights().size();
    for (auto [i, pair] :
         llvm::enumerate(llvm::zip(getFinalWeights(), getWeights()))) {
      auto [result, w] = pair;
      std::string name = ("final weight #" + Twine(i)).str();
      auto wType = cast<RankedTensorType>(w.getType());
      if (failed(check.rank(result, name, {4}, "[batch, heads, rows, cols]")) ||
          failed(check.dim(result, name, 0, batch, "the batch")) ||
          failed(check.dim(result, name, 1, heads, "the number of heads")) ||
          failed(check.dim(result, name, 2,
                           wType.getDimSize(wType.getRank() - 2),
                           "the weight's row count")) ||
          failed(check.dim(result, name, 3,
                           wType.getDimSize(wType.getRank() - 1),
                           "the weight's column count")))
        return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DWConvLayerOp
//===----------------------------------------------------------------------===//

UpdateAttr DWConvLayerOp::getUpdateOrDefault() {
  if (auto update = getUpdateAttr())
    return update;
  return UpdateAttr::get(getContext(), Sign::descent, APFloat(1.0),
                         ClipKind::none, NewtonSchulzAttr(),
                         WeightNormKind::none, APFloat(1e-5),
                         UpdateBase::weights);
}

LogicalResult DWConvLayerOp::verify() {
  ShapeChecker check(getOperation());
  const char *layout = "[batch, channels, height, width]";
  Value q = getQ(), k = getK(), v = getV(), w = getKernel();
  if (failed(check.rank(q, "q", {4}, layout)) ||
      failed(check.rank(k, "k", {4}, layout)) ||
      failed(check.rank(v, "v", {4}, layout)) ||
      failed(check.rank(w, "kernel", {3, 4},
                        "[channels, kh, kw] or [batch, channels, kh, kw]")))
    return failure();
  Type elementType = cast<RankedTensorType>(q.getType()).getElementType();
  SmallVector<Value> typed{k, v, w};
  llvm::append_range(typed, getOperation()->getResults());
  if (failed(check.elementTypes(elementType, typed, "q")))
    return failure();

  int64_t batch = mergeDim(mergeDim(dimOf(q, 0), dimOf(k, 0)), dimOf(v, 0));
  if (failed(check.staticDim(q, "q", 1, "the channel count")))
    return failure();
  int64_t channels = dimOf(q, 1);
  int64_t height = mergeDim(mergeDim(dimOf(q, 2), dimOf(k, 2)), dimOf(v, 2));
  int64_t width = mergeDim(mergeDim(dimOf(q, 3), dimOf(k, 3)), dimOf(v, 3));
  for (auto [value, name] : {std::pair{q, "q"}, {k, "k"}, {v, "v"}}) {
    if (failed(check.dim(value, name, 0, batch, "the batch")) ||
        failed(check.dim(value, name, 1, channels, "the channel count")) ||
        failed(check.dim(value, name, 2, height, "the height")) ||
        failed(check.dim(value, name, 3, width, "the width")))
      return failure();
  }
  int64_t rank = cast<RankedTensorType>(w.getType()).getRank();
  if ((rank == 4 && failed(check.dim(w, "kernel", 0, batch, "the batch"))) ||
      failed(check.dim(w, "kernel", rank - 3, channels, "the channel count")) ||
      failed(check.staticDim(w, "kernel", rank - 2, "the kernel height")) ||
      failed(check.staticDim(w, "kernel", rank - 1, "the kernel width")))
    return failure();
  int64_t kh = dimOf(w, rank - 2), kw = dimOf(w, rank - 1);
  if (kh % 2 == 0 || kw % 2 == 0)
    return emitOpError() << "the kernel must have odd height and width (for "
                            "'same' zero padding), got "
                         << kh << "x" << kw;

  LossKind loss = getLoss().getKind();
  if (loss == LossKind::layernorm_mse)
    return emitOpError() << "the layernorm_mse loss is not defined for a "
                            "convolution fast weight; use dot or mse";
  UpdateAttr update = getUpdateOrDefault();
  if (update.getOrthogonalize())
    return emitOpError() << "orthogonalization (Muon) is not defined for a "
                            "depth-wise kernel";
  if (update.getWeightNorm() != WeightNormKind::none)
    return emitOpError() << "weight normalization is not defined for a "
                            "depth-wise kernel";
  if (update.getClip() == ClipKind::output_channels)
    return emitOpError() << "a depth-wise kernel clips per channel: use clip = "
                            "frobenius";
  if (getInnerSteps() < 1)
    return emitOpError() << "'inner_steps' must be at least 1, got "
                         << getInnerSteps();

  Value out = getOutput();
  if (failed(check.rank(out, "o", {4}, layout)) ||
      failed(check.dim(out, "o", 0, batch, "the batch")) ||
      failed(check.dim(out, "o", 1, channels, "the channel count")) ||
      failed(check.dim(out, "o", 2, dimOf(q, 2), "the height of q")) ||
      failed(check.dim(out, "o", 3, dimOf(q, 3), "the width of q")))
    return failure();
  if (Value fin = getFinalKernel()) {
    if (failed(check.rank(fin, "final kernel", {4},
                          "[batch, channels, kh, kw]")) ||
        failed(check.dim(fin, "final kernel", 0, batch, "the batch")) ||
        failed(
            check.dim(fin, "final kernel", 1, channels, "the channel count")) ||
        failed(check.dim(fin, "final kernel", 2, kh, "the kernel height")) ||
        failed(check.dim(fin, "final kernel", 3, kw, "the kernel width")))
      return failure();
  }
  return success();
}

#define GET_OP_CLASSES
#include "ttt/Dialect/TTT/IR/TTTOps.cpp.inc"
