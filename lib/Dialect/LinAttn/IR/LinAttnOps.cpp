//===- LinAttnOps.cpp - linattn ops ---------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"
#include "ttt/Support/ShapeChecker.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::linattn;
using mlir::ttt::dimOf;
using mlir::ttt::mergeDim;
using mlir::ttt::ShapeChecker;

static constexpr const char *kTokens = "[batch, heads, seq, features]";
static constexpr const char *kStates = "[batch, heads, chunks, F, Dv]";
static constexpr const char *kInitial =
    "[heads, F, Dv] or [batch, heads, F, Dv]";

/// Checks that `value` is `[B, H, ...]` for the stream dims `batch`, `heads`.
static LogicalResult checkStreams(ShapeChecker &check, Value value,
                                  StringRef name, int64_t batch,
                                  int64_t heads) {
  if (failed(check.dim(value, name, 0, batch, "the batch")) ||
      failed(check.dim(value, name, 1, heads, "the number of heads")))
    return failure();
  return success();
}

/// Checks an initial state `[H, F, Dv]` / `[B, H, F, Dv]`.
static LogicalResult checkInitial(ShapeChecker &check, Value init,
                                  int64_t batch, int64_t heads, int64_t f,
                                  int64_t dv) {
  if (failed(check.rank(init, "initial", {3, 4}, kInitial)))
    return failure();
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  if ((rank == 4 &&
       failed(check.dim(init, "initial", 0, batch, "the batch"))) ||
      failed(
          check.dim(init, "initial", rank - 3, heads, "the number of heads")) ||
      failed(check.dim(init, "initial", rank - 2, f, "the feature size F")) ||
      failed(check.dim(init, "initial", rank - 1, dv, "the value size Dv")))
    return failure();
  return success();
}

static LogicalResult checkChunkSize(Operation *op, int64_t size) {
  if (size < 1)
    return op->emitOpError() << "'chunk_size' must be at least 1, got " << size;
  return success();
}

/// The number of chunks of `seq` tokens: ceil(seq / chunk), one without a
/// chunk size (the whole sequence), dynamic when seq is.
static int64_t numChunks(int64_t seq, std::optional<int64_t> chunk) {
  if (!chunk)
    return 1;
  if (ShapedType::isDynamic(seq))
    return ShapedType::kDynamic;
  return (seq + *chunk - 1) / *chunk;
}

/// Checks a per-token scale: `[B, H, T]`, or `[B, H, T, n]` of which
/// `column` is used.
static LogicalResult checkScale(Operation *op, ShapeChecker &check, Value scale,
                                StringRef name, int64_t batch, int64_t heads,
                                int64_t seq, int64_t column, Type elementType) {
  if (failed(check.rank(scale, name, {3, 4},
                        "[batch, heads, seq] or [batch, heads, seq, n]")) ||
      failed(checkStreams(check, scale, name, batch, heads)) ||
      failed(check.dim(scale, name, 2, seq, "the sequence length")) ||
      failed(check.elementTypes(elementType, {scale}, "the tokens")))
    return failure();
  int64_t rank = cast<RankedTensorType>(scale.getType()).getRank();
  if (rank == 3 && column != 0)
    return op->emitOpError() << "'scale_column' needs a [batch, heads, seq, "
                                "n] scale, got a rank-3 one";
  int64_t columns = rank == 4 ? dimOf(scale, 3) : 1;
  if (column < 0 || (!ShapedType::isDynamic(columns) && column >= columns))
    return op->emitOpError()
           << "'scale_column' " << column << " is not a column of " << name
           << " (" << columns << " columns)";
  return success();
}

/// A `scale_column` other than 0 needs a scale to pick from.
static LogicalResult checkColumnHasScale(Operation *op, Value scale,
                                         int64_t column) {
  if (!scale && column != 0)
    return op->emitOpError() << "'scale_column' needs a scale operand";
  return success();
}

//===----------------------------------------------------------------------===//
// FeatureMapOp
//===----------------------------------------------------------------------===//

LogicalResult FeatureMapOp::verify() {
  ShapeChecker check(getOperation());
  Value x = getInput();
  if (failed(check.rank(x, "input", {4}, kTokens)) ||
      failed(check.rank(getResult(), "result", {4}, kTokens)) ||
      failed(check.staticDim(x, "input", 3, "the feature size")))
    return failure();
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  SmallVector<Value> typed(getWeights());
  typed.push_back(getResult());
  if (failed(check.elementTypes(elementType, typed, "input")))
    return failure();

  size_t numWeights = getWeights().size();
  FeatureMapKind kind = getKind();
  if (kind == FeatureMapKind::identity && numWeights != 0)
    return emitOpError() << "the identity feature map takes no weights, got "
                         << numWeights;
  if (kind == FeatureMapKind::mlp && numWeights != 1 && numWeights != 2)
    return emitOpError() << "the mlp feature map takes W0 and optionally b0, "
                            "got "
                         << numWeights << " weights";
  if (kind == FeatureMapKind::swiglu && numWeights != 2)
    return emitOpError() << "the swiglu feature map takes W0 (gate) and W2 "
                            "(up), got "
                         << numWeights << " weights";
  if (getActivation() != Activation::silu && kind != FeatureMapKind::mlp)
    return emitOpError() << "'activation' only applies to the mlp feature map";

  int64_t d = dimOf(x, 3);
  int64_t features = d;
  for (auto [i, w] : llvm::enumerate(getWeights())) {
    std::string name = ("weight #" + Twine(i)).str();
    if (failed(check.rank(w, name, {3, 4},
                          "[heads, rows, cols] or [batch, heads, rows, cols]")))
      return failure();
    int64_t rank = cast<RankedTensorType>(w.getType()).getRank();
    if ((rank == 4 &&
         failed(check.dim(w, name, 0, dimOf(x, 0), "the batch"))) ||
        failed(
            check.dim(w, name, rank - 3, dimOf(x, 1), "the number of heads")) ||
        failed(check.staticDim(w, name, rank - 1, "the feature size")))
      return failure();
    bool isBias = kind == FeatureMapKind::mlp && i == 1;
    int64_t rows = isBias ? 1 : d;
    if (failed(check.dim(w, name, rank - 2, rows,
                         isBias ? "a bias row" : "the input feature size")))
      return failure();
    int64_t cols = dimOf(w, rank - 1);
    if (i == 0)
      features = cols;
    else if (failed(check.dim(w, name, rank - 1, features,
                              "the feature size of weight #0")))
      return failure();
  }
  if (getAppendOne())
    ++features;
  if (failed(checkStreams(check, getResult(), "result", dimOf(x, 0),
                          dimOf(x, 1))) ||
      failed(check.dim(getResult(), "result", 2, dimOf(x, 2),
                       "the sequence length")) ||
      failed(check.dim(getResult(), "result", 3, features,
                       getAppendOne() ? "the feature size plus the appended one"
                                      : "the feature size")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  ShapeChecker check(getOperation());
  Value q = getQ(), k = getK(), v = getV();
  if (failed(check.rank(q, "q", {4}, kTokens)) ||
      failed(check.rank(k, "k", {4}, kTokens)) ||
      failed(check.rank(v, "v", {4}, kTokens)) ||
      failed(check.rank(getOutput(), "output", {4}, kTokens)))
    return failure();
  Type elementType = cast<RankedTensorType>(q.getType()).getElementType();
  SmallVector<Value> typed{k, v, getOutput()};
  for (Value opt : {getInitial(), getDecay()})
    if (opt)
      typed.push_back(opt);
  if (failed(check.elementTypes(elementType, typed, "q")) ||
      failed(checkColumnHasScale(getOperation(), getScale(), getScaleColumn())))
    return failure();

  int64_t batch = mergeDim(mergeDim(dimOf(q, 0), dimOf(k, 0)), dimOf(v, 0));
  int64_t heads = mergeDim(mergeDim(dimOf(q, 1), dimOf(k, 1)), dimOf(v, 1));
  int64_t seq = mergeDim(dimOf(k, 2), dimOf(v, 2));
  for (auto [value, name] :
       {std::pair{q, "q"}, {k, "k"}, {v, "v"}, {getOutput(), "output"}})
    if (failed(checkStreams(check, value, name, batch, heads)))
      return failure();
  if (failed(check.staticDim(q, "q", 3, "the feature size F")) ||
      failed(check.staticDim(v, "v", 3, "the value size Dv")) ||
      failed(check.dim(k, "k", 3, dimOf(q, 3), "the feature size F of q")) ||
      failed(check.dim(v, "v", 2, seq, "the sequence length of k")) ||
      failed(check.dim(getOutput(), "output", 2, dimOf(q, 2),
                       "the query sequence length")) ||
      failed(check.dim(getOutput(), "output", 3, dimOf(v, 3),
                       "the value size Dv")))
    return failure();

  Mask mask = getMask();
  bool chunkMask = mask == Mask::chunk_strict || mask == Mask::chunk_inclusive;
  if (chunkMask != getChunkSize().has_value())
    return emitOpError() << "'chunk_size' "
                         << (chunkMask ? "is required by"
                                       : "has no meaning for")
                         << " the " << stringifyMask(mask) << " mask";
  if (chunkMask && failed(checkChunkSize(getOperation(), *getChunkSize())))
    return failure();
  if (mask != Mask::full &&
      failed(check.dim(q, "q", 2, seq,
                       "the sequence length (only the full mask lets queries "
                       "and keys differ in length)")))
    return failure();
  if (Value init = getInitial())
    if (failed(
            checkInitial(check, init, batch, heads, dimOf(q, 3), dimOf(v, 3))))
      return failure();
  if (Value decay = getDecay()) {
    if (mask == Mask::full)
      return emitOpError() << "the full mask has no order, so it takes no "
                              "decay";
    if (failed(check.rank(decay, "decay", {3},
                          mask == Mask::token_causal
                              ? "[batch, heads, seq]"
                              : "[batch, heads, chunks]")) ||
        failed(checkStreams(check, decay, "decay", batch, heads)))
      return failure();
    if (mask == Mask::token_causal &&
        failed(check.dim(decay, "decay", 2, seq, "the sequence length")))
      return failure();
  }
  if (mask == Mask::token_causal && getMean())
    return emitOpError() << "the token_causal mask sums over no set of "
                            "tokens, so it takes no 'mean'";
  if (Value scale = getScale())
    if (failed(checkScale(getOperation(), check, scale, "scale", batch, heads,
                          seq, getScaleColumn(), elementType)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ChunkReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ChunkReduceOp::verify() {
  ShapeChecker check(getOperation());
  Value k = getK(), v = getV(), result = getResult();
  std::optional<int64_t> chunk = getChunkSize();
  if ((chunk && failed(checkChunkSize(getOperation(), *chunk))) ||
      failed(
          checkColumnHasScale(getOperation(), getScale(), getScaleColumn())) ||
      failed(check.rank(k, "k", {4}, kTokens)) ||
      failed(check.rank(v, "v", {4}, kTokens)) ||
      failed(check.rank(result, "result", {5}, kStates)))
    return failure();
  Type elementType = cast<RankedTensorType>(k.getType()).getElementType();
  if (failed(check.elementTypes(elementType, {v, result}, "k")))
    return failure();
  int64_t batch = mergeDim(dimOf(k, 0), dimOf(v, 0));
  int64_t heads = mergeDim(dimOf(k, 1), dimOf(v, 1));
  int64_t seq = mergeDim(dimOf(k, 2), dimOf(v, 2));
  if (failed(checkStreams(check, k, "k", batch, heads)) ||
      failed(checkStreams(check, v, "v", batch, heads)) ||
      failed(checkStreams(check, result, "result", batch, heads)) ||
      failed(check.dim(v, "v", 2, seq, "the sequence length of k")) ||
      failed(check.staticDim(k, "k", 3, "the feature size F")) ||
      failed(check.staticDim(v, "v", 3, "the value size Dv")) ||
      failed(
          check.dim(result, "result", 3, dimOf(k, 3), "the feature size F")) ||
      failed(check.dim(result, "result", 4, dimOf(v, 3), "the value size Dv")))
    return failure();
  if (failed(check.dim(result, "result", 2, numChunks(seq, chunk),
                       chunk ? "the number of chunks ceil(seq / chunk_size)"
                             : "one chunk (no chunk_size: the whole "
                               "sequence)")))
    return failure();
  if (Value scale = getScale())
    if (failed(checkScale(getOperation(), check, scale, "scale", batch, heads,
                          seq, getScaleColumn(), elementType)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ChunkMeanOp
//===----------------------------------------------------------------------===//

LogicalResult ChunkMeanOp::verify() {
  ShapeChecker check(getOperation());
  Value x = getInput(), result = getResult();
  if (failed(checkChunkSize(getOperation(), getChunkSize())) ||
      failed(check.rank(x, "input", {3}, "[batch, heads, seq]")) ||
      failed(check.rank(result, "result", {3}, "[batch, heads, chunks]")))
    return failure();
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  if (failed(check.elementTypes(elementType, {result}, "input")) ||
      failed(checkStreams(check, result, "result", dimOf(x, 0), dimOf(x, 1))))
    return failure();
  if (failed(check.dim(result, "result", 2,
                       numChunks(dimOf(x, 2), getChunkSize()),
                       "the number of chunks ceil(seq / chunk_size)")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ScanOp
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::verify() {
  ShapeChecker check(getOperation());
  Value g = getInputs();
  if (failed(check.rank(g, "inputs", {5}, kStates)) ||
      failed(check.rank(getResult(), "result", {5}, kStates)))
    return failure();
  Type elementType = cast<RankedTensorType>(g.getType()).getElementType();
  SmallVector<Value> typed{getResult()};
  for (Value opt : {getInitial(), getDecay(), getTransition()})
    if (opt)
      typed.push_back(opt);
  if (failed(check.elementTypes(elementType, typed, "inputs")))
    return failure();
  int64_t batch = dimOf(g, 0), heads = dimOf(g, 1), chunks = dimOf(g, 2);
  int64_t f = dimOf(g, 3), dv = dimOf(g, 4);
  for (int64_t d = 0; d < 5; ++d)
    if (failed(check.dim(getResult(), "result", d, dimOf(g, d),
                         "the matching dimension of 'inputs'")))
      return failure();
  if (failed(check.staticDim(g, "inputs", 3, "the feature size F")) ||
      failed(check.staticDim(g, "inputs", 4, "the value size Dv")))
    return failure();

  ScanKind kind = getKind();
  if ((kind == ScanKind::decayed) != static_cast<bool>(getDecay()))
    return emitOpError() << (kind == ScanKind::decayed
                                 ? "a decayed scan needs a 'decay' operand"
                                 : "'decay' is only used by a decayed scan");
  bool affine = kind == ScanKind::affine || kind == ScanKind::residual_affine;
  if (affine != static_cast<bool>(getTransition()))
    return emitOpError() << (affine
                                 ? "an affine scan needs a 'transition' operand"
                                 : "'transition' is only used by an affine "
                                   "scan");
  if (Value decay = getDecay()) {
    if (failed(check.rank(decay, "decay", {3}, "[batch, heads, chunks]")) ||
        failed(checkStreams(check, decay, "decay", batch, heads)) ||
        failed(check.dim(decay, "decay", 2, chunks, "the number of chunks")))
      return failure();
  }
  if (Value a = getTransition()) {
    if (failed(
            check.rank(a, "transition", {5}, "[batch, heads, chunks, F, F]")) ||
        failed(checkStreams(check, a, "transition", batch, heads)) ||
        failed(check.dim(a, "transition", 2, chunks, "the number of chunks")) ||
        failed(check.dim(a, "transition", 3, f, "the feature size F")) ||
        failed(check.dim(a, "transition", 4, f, "the feature size F")))
      return failure();
  }
  if (Value init = getInitial())
    if (failed(checkInitial(check, init, batch, heads, f, dv)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// StateTransformOp
//===----------------------------------------------------------------------===//

LogicalResult StateTransformOp::verify() {
  ShapeChecker check(getOperation());
  if (failed(check.rank(getInputs(), "inputs", {5}, kStates)))
    return failure();
  if (getInputs().getType() != getResult().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " must equal the inputs' type "
                         << getInputs().getType();
  int64_t steps = getSteps();
  if (steps < 0)
    return emitOpError() << "'steps' must not be negative, got " << steps;
  size_t numCoeffs = getCoeffs().size();
  if (numCoeffs != 3 && static_cast<int64_t>(numCoeffs) != 3 * steps)
    return emitOpError() << "'coeffs' must hold one (a, b, c) triple or one "
                            "per step (3 or "
                         << 3 * steps << " numbers), got " << numCoeffs;
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError() << "'eps' must be positive";
  return success();
}

//===----------------------------------------------------------------------===//
// ChunkApplyOp
//===----------------------------------------------------------------------===//

LogicalResult ChunkApplyOp::verify() {
  ShapeChecker check(getOperation());
  Value q = getQ(), s = getStates(), out = getOutput();
  std::optional<int64_t> chunk = getChunkSize();
  if ((chunk && failed(checkChunkSize(getOperation(), *chunk))) ||
      failed(checkColumnHasScale(getOperation(), getIntraScale(),
                                 getScaleColumn())) ||
      failed(check.rank(q, "q", {4}, kTokens)) ||
      failed(check.rank(s, "states", {5}, kStates)) ||
      failed(check.rank(out, "output", {4}, kTokens)))
    return failure();
  if (static_cast<bool>(getIntraK()) != static_cast<bool>(getIntraV()))
    return emitOpError() << "'intra' needs both k and v";
  if (!getIntraK() && (getIntraScale() || getIntraMean() ||
                       !getIntraFactor().isExactlyValue(1.0)))
    return emitOpError() << "'intra_scale', 'intra_factor' and 'intra_mean' "
                            "scale the intra-chunk term: they need 'intra'";
  if (getIntraK() && !chunk)
    return emitOpError() << "the intra-chunk term needs a 'chunk_size'";
  Type elementType = cast<RankedTensorType>(q.getType()).getElementType();
  SmallVector<Value> typed{s, out};
  if (getIntraK()) {
    typed.push_back(getIntraK());
    typed.push_back(getIntraV());
  }
  if (failed(check.elementTypes(elementType, typed, "q")))
    return failure();
  int64_t batch = mergeDim(dimOf(q, 0), dimOf(s, 0));
  int64_t heads = mergeDim(dimOf(q, 1), dimOf(s, 1));
  int64_t seq = dimOf(q, 2);
  if (failed(checkStreams(check, q, "q", batch, heads)) ||
      failed(checkStreams(check, s, "states", batch, heads)) ||
      failed(checkStreams(check, out, "output", batch, heads)) ||
      failed(check.staticDim(q, "q", 3, "the feature size F")) ||
      failed(
          check.dim(s, "states", 3, dimOf(q, 3), "the feature size F of q")) ||
      failed(check.dim(out, "output", 2, seq, "the sequence length of q")) ||
      failed(check.dim(out, "output", 3, dimOf(s, 4), "the value size Dv")))
    return failure();
  if (failed(check.dim(s, "states", 2, numChunks(seq, chunk),
                       chunk ? "the number of chunks ceil(seq / chunk_size)"
                             : "one state (no chunk_size: every query reads "
                               "it)")))
    return failure();
  if (Value k = getIntraK()) {
    Value v = getIntraV();
    if (failed(check.rank(k, "intra k", {4}, kTokens)) ||
        failed(check.rank(v, "intra v", {4}, kTokens)) ||
        failed(checkStreams(check, k, "intra k", batch, heads)) ||
        failed(checkStreams(check, v, "intra v", batch, heads)) ||
        failed(check.dim(k, "intra k", 2, seq, "the sequence length of q")) ||
        failed(check.dim(v, "intra v", 2, seq, "the sequence length of q")) ||
        failed(check.dim(k, "intra k", 3, dimOf(q, 3), "the feature size F")) ||
        failed(check.dim(v, "intra v", 3, dimOf(s, 4), "the value size Dv")))
      return failure();
  }
  if (Value scale = getIntraScale())
    if (failed(checkScale(getOperation(), check, scale, "intra scale", batch,
                          heads, seq, getScaleColumn(), elementType)))
      return failure();
  return success();
}

#include "ttt/Dialect/LinAttn/IR/LinAttnEnums.cpp.inc"

#define GET_OP_CLASSES
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.cpp.inc"
