//===- NormalizeViews.cpp - chunks as Slices of a source tensor -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every way of cutting a chunk out of a tensor becomes a Slice on one axis of
// it, and layout changes move in front of the cuts, so that chunks of one
// tensor are Slices of one value however they were taken.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// `Slice(x, [start], [end], [axis])` of result type `type`.
static Value createSlice(PatternRewriter &rewriter, Location loc, Value x,
                         int64_t start, int64_t end, int64_t axis, Type type) {
  onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(type));
  Value starts = b.i64s({start});
  Value ends = b.i64s({end});
  Value axes = b.i64s({axis});
  return b.node("Slice", {x, starts, ends, axes}, type);
}

/// `Slice(x, [i * size], [i * size + size], [axis])` for a 0-D integer
/// `index` computed at run time.
static Value createSliceAt(PatternRewriter &rewriter, Location loc, Value x,
                           Value index, int64_t size, int64_t axis, Type type) {
  onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(type));
  auto scalar = cast<ShapedType>(index.getType());
  if (!scalar.getElementType().isInteger(64))
    index = b.node("Cast", {index}, scalar.clone(rewriter.getI64Type()),
                   {b.attr("to", int64_t(7))});
  Value step = b.i64Scalar(size);
  Value start = b.node("Mul", {index, step}, index.getType());
  Value end = b.node("Add", {start, step}, index.getType());
  Value one = b.i64s({1});
  Value starts = b.node("Reshape", {start, one}, b.ints(1));
  Value ends = b.node("Reshape", {end, one}, b.ints(1));
  Value axes = b.i64s({axis});
  return b.node("Slice", {x, starts, ends, axes}, type);
}

/// A constant single-axis Slice of a constant single-axis Slice: the inner
/// Slice and both cuts (axis, start, end).
struct CutOfCutParts {
  onnx::NodeOp inner;
  std::tuple<int64_t, int64_t, int64_t> outerCut, innerCut;
};
static std::optional<CutOfCutParts> cutOfCut(onnx::NodeOp outer) {
  auto outerCut = singleAxisCut(outer);
  onnx::NodeOp inner =
      outerCut ? nodeOf(outer.getInputs()[0], "Slice") : nullptr;
  auto innerCut = inner ? singleAxisCut(inner) : std::nullopt;
  if (!innerCut)
    return std::nullopt;
  return CutOfCutParts{inner, *outerCut, *innerCut};
}

namespace {
/// Split(x) -> one Slice per piece.
struct SplitToSlices : NodePattern {
  explicit SplitToSlices(MLIRContext *context)
      : NodePattern(context, "Split", /*manyResults=*/true) {}

  LogicalResult matchNode(onnx::NodeOp split,
                          PatternRewriter &rewriter) const override {
    Value x = split.getInputs()[0];
    auto type = dyn_cast<RankedTensorType>(x.getType());
    if (!type)
      return rewriter.notifyMatchFailure(split, "unranked input");
    int64_t axis = intAttr(split, "axis").value_or(0);
    if (axis < 0)
      axis += type.getRank();
    if (axis < 0 || axis >= type.getRank())
      return rewriter.notifyMatchFailure(split, "axis out of range");
    int64_t pieces = split->getNumResults();
    std::optional<SmallVector<int64_t>> sizes;
    if (split.getInputs().size() > 1)
      sizes = intConstant(split.getInputs()[1]);
    else if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(
                 split.getONNXAttr("split")))
      sizes = SmallVector<int64_t>(attr.asArrayRef());
    else if (!type.isDynamicDim(axis) && type.getDimSize(axis) % pieces == 0)
      sizes = SmallVector<int64_t>(pieces, type.getDimSize(axis) / pieces);
    if (!sizes || static_cast<int64_t>(sizes->size()) != pieces)
      return rewriter.notifyMatchFailure(split, "sizes are not constant");
    SmallVector<Value> slices;
    int64_t start = 0;
    for (auto [size, result] : llvm::zip(*sizes, split->getResults())) {
      slices.push_back(createSlice(rewriter, split.getLoc(), x, start,
                                   start + size, axis, result.getType()));
      start += size;
    }
    rewriter.replaceOp(split, slices);
    return success();
  }
};

/// Slice(Slice(x, one column of the last axis), another axis) -> the column
/// of Slice(x, that axis): slices of two axes commute, and a column cut
/// outermost names the column of one tensor (LaCT-NVS's `lr.chunk(3, -1)`
/// pieces, each then cut to the input views' tokens, are columns of one cut
/// of lr).
struct CutOfColumn : NodePattern {
  explicit CutOfColumn(MLIRContext *context) : NodePattern(context, "Slice") {}

  LogicalResult matchNode(onnx::NodeOp outer,
                          PatternRewriter &rewriter) const override {
    std::optional<CutOfCutParts> cuts = cutOfCut(outer);
    std::optional<int64_t> rank = rankOf(outer.getInputs()[0]);
    if (!cuts || !rank)
      return rewriter.notifyMatchFailure(outer, "not a cut of a cut");
    onnx::NodeOp inner = cuts->inner;
    auto [axis, start, end] = cuts->outerCut;
    auto [column, first, last] = cuts->innerCut;
    if (column != *rank - 1 || last != first + 1 || first < 0 || axis == column)
      return rewriter.notifyMatchFailure(outer, "not a cut of a column");
    auto resultType = dyn_cast<RankedTensorType>(outer->getResult(0).getType());
    auto sourceType =
        dyn_cast<RankedTensorType>(inner.getInputs()[0].getType());
    if (!resultType || !sourceType || resultType.getRank() != *rank ||
        sourceType.getRank() != *rank)
      return rewriter.notifyMatchFailure(outer, "unranked");
    SmallVector<int64_t> shape(sourceType.getShape());
    shape[axis] = resultType.getDimSize(axis);
    Location loc = outer.getLoc();
    Value cut = createSlice(rewriter, loc, inner.getInputs()[0], start, end,
                            axis, sourceType.clone(shape));
    rewriter.replaceOp(outer, createSlice(rewriter, loc, cut, first, last,
                                          column, resultType));
    return success();
  }
};

/// Slice(Slice(x, [s1, e1) of axis a), [s2, e2) of a) -> Slice(x, [s1 + s2,
/// s1 + min(e2, e1 - s1)) of a), constant bounds of a static axis: the whole
/// chunks of a sequence viewed as [N, C] (`x[:, :, :N * C].reshape(..)`,
/// read by index) are windows of the sequence itself, like the shorter last
/// chunk cut after them.
struct CutOfCut : NodePattern {
  explicit CutOfCut(MLIRContext *context) : NodePattern(context, "Slice") {}

  LogicalResult matchNode(onnx::NodeOp outer,
                          PatternRewriter &rewriter) const override {
    std::optional<CutOfCutParts> cuts = cutOfCut(outer);
    if (!cuts || std::get<0>(cuts->outerCut) != std::get<0>(cuts->innerCut))
      return rewriter.notifyMatchFailure(outer,
                                         "not a cut of a cut of its axis");
    onnx::NodeOp inner = cuts->inner;
    auto [axis, start, end] = cuts->outerCut;
    auto [first, last] =
        std::pair(std::get<1>(cuts->innerCut), std::get<2>(cuts->innerCut));
    auto source = dyn_cast<RankedTensorType>(inner.getInputs()[0].getType());
    if (!source || axis >= source.getRank() || source.isDynamicDim(axis))
      return rewriter.notifyMatchFailure(outer, "an axis of run-time size");
    int64_t length = source.getDimSize(axis);
    last = std::min(last, length);
    if (first < 0 || start < 0 || first > last || start > end)
      return rewriter.notifyMatchFailure(outer, "bounds counted from the end");
    int64_t cut = last - first;
    end = std::min(end, cut);
    if (start > end)
      return rewriter.notifyMatchFailure(outer, "an empty cut");
    rewriter.replaceOp(outer, createSlice(rewriter, outer.getLoc(),
                                          inner.getInputs()[0], first + start,
                                          first + end, axis,
                                          outer->getResult(0).getType()));
    return success();
  }
};

/// Transpose(Slice(x, axis a)) -> Slice(Transpose(x), the axis a moved to).
struct TransposeOfSlice : NodePattern {
  explicit TransposeOfSlice(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp slice = nodeOf(transpose.getInputs()[0], "Slice");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    if (!slice || !perm || slice.getInputs().size() < 4)
      return rewriter.notifyMatchFailure(transpose, "not of a Slice");
    // The transpose of a chunk's innermost axes is how a contraction reads
    // it (k_c^T v_c): only the layout change that keeps the feature axis
    // moves, and a perm that does both (BTHD -> BHDT) is split into the two.
    int64_t n = perm->size();
    SmallVector<int64_t> layout = *perm;
    bool inner = false;
    if (n >= 2 && layout.back() != n - 1) {
      std::swap(layout[n - 1], layout[n - 2]);
      inner = true;
    }
    // A chunk of per-token coefficients ([B, T, H] cut, then turned to
    // [B, H, C]) that is only averaged (a momentum per token) has no
    // feature axis to keep: the whole transpose moves, and the chunk is a
    // cut of the turned tensor. (A row of rates that scales a score matrix
    // stays `lr_c^T`.)
    bool identity = llvm::equal(layout, llvm::seq<int64_t>(0, n));
    if (inner && identity && !transpose->use_empty() &&
        llvm::all_of(transpose->getUsers(), [](Operation *user) {
          auto node = dyn_cast<onnx::NodeOp>(user);
          return node && (node.getOpType() == "ReduceMean" ||
                          node.getOpType() == "ReduceSum");
        })) {
      layout = *perm;
      inner = identity = false;
    }
    if (layout.back() != n - 1 && inner)
      return rewriter.notifyMatchFailure(transpose, "moves the feature axis");
    if (identity)
      return rewriter.notifyMatchFailure(transpose, "moves the feature axis");
    auto inputs = slice.getInputs();
    std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
    std::optional<int64_t> rank = rankOf(inputs[0]);
    if (!axes || axes->size() != 1 || !rank ||
        *rank != static_cast<int64_t>(perm->size()))
      return rewriter.notifyMatchFailure(transpose, "not a one-axis Slice");
    if (inputs.size() > 4) {
      std::optional<SmallVector<int64_t>> steps = intConstant(inputs[4]);
      if (!steps || steps->size() != 1 || (*steps)[0] != 1)
        return rewriter.notifyMatchFailure(transpose, "a strided Slice");
    }
    int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + *rank : (*axes)[0];
    int64_t moved = llvm::find(layout, axis) - layout.begin();
    Location loc = transpose.getLoc();
    // The turned sequence sits next to the sequence, not in the Loop body
    // that cuts it: the raise reads the sequence outside the loop.
    Value source;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointAfterValue(inputs[0]);
      source = createTranspose(rewriter, loc, inputs[0], layout);
    }
    Type type = transpose->getResult(0).getType();
    onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(type));
    Value newAxes = b.i64s({moved});
    SmallVector<int64_t> swap = swapInnerPerm(n);
    Type cutType = inner ? permutedType(type, swap) : type;
    Value cut =
        b.node("Slice", {source, inputs[1], inputs[2], newAxes}, cutType);
    if (inner)
      cut = b.node("Transpose", {cut}, type, {b.attr("perm", swap)});
    rewriter.replaceOp(transpose, cut);
    return success();
  }
};

/// Slice(x^T) on the last axis -> (Slice(x) on the one before)^T: research
/// code that works feature-major (`q.transpose(1, 2)[:, :, s:e]`, LaCT's
/// reference function) takes the chunks of the transposed sequence, which
/// are the transposes of the sequence's chunks.
struct SliceOfInnerTranspose : NodePattern {
  explicit SliceOfInnerTranspose(MLIRContext *context)
      : NodePattern(context, "Slice") {}

  LogicalResult matchNode(onnx::NodeOp slice,
                          PatternRewriter &rewriter) const override {
    auto inputs = slice.getInputs();
    onnx::NodeOp transpose = nodeOf(inputs[0], "Transpose");
    std::optional<SmallVector<int64_t>> perm =
        transpose ? transposePerm(transpose) : std::nullopt;
    int64_t n = perm ? perm->size() : 0;
    if (n < 2 || !llvm::equal(*perm, swapInnerPerm(n)) || inputs.size() < 4)
      return rewriter.notifyMatchFailure(slice, "not a Slice of x^T");
    // Only chunks that products read feature-major turn round; a chunk of
    // transposed per-token coefficients stays a cut of its own time axis.
    if (slice->use_empty() ||
        !llvm::all_of(slice->getUsers(), [](Operation *user) {
          auto node = dyn_cast<onnx::NodeOp>(user);
          return node && node.getOpType() == "MatMul";
        }))
      return rewriter.notifyMatchFailure(slice, "not read by products");
    std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
    if (!axes || axes->size() != 1 || ((*axes)[0] != -1 && (*axes)[0] != n - 1))
      return rewriter.notifyMatchFailure(slice, "not a cut of the last axis");
    if (inputs.size() > 4) {
      std::optional<SmallVector<int64_t>> steps = intConstant(inputs[4]);
      if (!steps || steps->size() != 1 || (*steps)[0] != 1)
        return rewriter.notifyMatchFailure(slice, "a strided Slice");
    }
    Location loc = slice.getLoc();
    Type type = slice->getResult(0).getType();
    if (!isa<RankedTensorType>(type))
      return rewriter.notifyMatchFailure(slice, "an unranked result");
    onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(type));
    Value newAxes = b.i64s({n - 2});
    Value cut = b.node(
        "Slice", {transpose.getInputs()[0], inputs[1], inputs[2], newAxes},
        permutedType(type, swapInnerPerm(n)));
    rewriter.replaceOp(
        slice, b.node("Transpose", {cut}, type, {b.attr("perm", *perm)}));
    return success();
  }
};

/// Transpose(Transpose(x)) -> one Transpose, or x; not where
/// keepsTurnedLayout: `(k turned to [B, H, T, D])^T` is the transposed keys
/// of the sequence the layout transpose makes (a full-batch step reads the
/// whole sequence).
struct TransposeOfTranspose : NodePattern {
  explicit TransposeOfTranspose(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp inner = nodeOf(transpose.getInputs()[0], "Transpose");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    std::optional<SmallVector<int64_t>> first =
        inner ? transposePerm(inner) : std::nullopt;
    if (!perm || !first || first->size() != perm->size())
      return rewriter.notifyMatchFailure(transpose, "not of a Transpose");
    if (keepsTurnedLayout(inner, *perm))
      return rewriter.notifyMatchFailure(
          transpose, "the inner-axes swap of a layout transpose");
    rewriter.replaceOp(transpose,
                       createTranspose(rewriter, transpose.getLoc(),
                                       transpose.getInputs()[0], *perm));
    return success();
  }
};
/// Transpose(x, P) of a graph input x that moves its last (feature) axis to
/// the second-to-last place, other axes too -> Transpose(Transpose(x, Q),
/// swap) with Q = P with its last two entries swapped: the transpose of x in
/// its sequence layout (a full-batch step's `k^T` of keys given [B, T, H, D]).
struct TurnedInputTranspose : NodePattern {
  explicit TurnedInputTranspose(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    if (transpose.getInputs().size() != 1 ||
        !isa<BlockArgument>(transpose.getInputs()[0]) || !perm ||
        perm->size() < 3 || !isPermutation(*perm))
      return rewriter.notifyMatchFailure(transpose,
                                         "not a Transpose of a graph input");
    int64_t n = perm->size();
    if ((*perm)[n - 2] != n - 1 || (*perm)[n - 1] == n - 2)
      return rewriter.notifyMatchFailure(
          transpose, "does not turn the feature axis before another axis");
    SmallVector<int64_t> layout(*perm);
    std::swap(layout[n - 1], layout[n - 2]);
    Location loc = transpose.getLoc();
    Value x = transpose.getInputs()[0];
    onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(x.getType()));
    Value sequence = b.node("Transpose", {x}, permutedType(x.getType(), layout),
                            {b.attr("perm", ArrayRef<int64_t>(layout))});
    rewriter.replaceOp(
        transpose, createTranspose(rewriter, loc, sequence, swapInnerPerm(n)));
    return success();
  }
};

/// Reshape or Expand of a static tensor to its own shape -> the tensor.
/// The dims `Shape(x)[start:end]` reads when x has a static type.
static std::optional<SmallVector<int64_t>> staticShapeDims(Value value) {
  onnx::NodeOp slice = nodeOf(value, "Slice");
  onnx::NodeOp shape = nodeOf(slice ? slice.getInputs()[0] : value, "Shape");
  if (!shape || shape.getInputs().size() != 1 ||
      (shape.getAttrsAttr() && !shape.getAttrsAttr().empty()))
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(shape.getInputs()[0].getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> dims(type.getShape());
  if (!slice)
    return dims;
  auto inputs = slice.getInputs();
  std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
  std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1 ||
      inputs.size() > 4)
    return std::nullopt;
  if (inputs.size() == 4) {
    std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))
      return std::nullopt;
  }
  int64_t rank = dims.size();
  auto clamp = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t start = clamp((*starts)[0]), end = clamp((*ends)[0]);
  if (start >= end)
    return SmallVector<int64_t>();
  return SmallVector<int64_t>(dims.begin() + start, dims.begin() + end);
}

/// raise::shapeConstant.
std::optional<SmallVector<int64_t>> readShapeConstant(Value value) {
  if (std::optional<SmallVector<int64_t>> dims = intConstant(value))
    return dims;
  if (std::optional<SmallVector<int64_t>> dims = staticShapeDims(value))
    return dims;
  onnx::NodeOp concat = nodeOf(value, "Concat");
  if (!concat)
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (Value part : concat.getInputs()) {
    auto type = dyn_cast<RankedTensorType>(part.getType());
    if (type && type.hasStaticShape() && type.getNumElements() == 0)
      continue;
    std::optional<SmallVector<int64_t>> piece = intConstant(part);
    if (!piece)
      piece = staticShapeDims(part);
    if (!piece)
      return std::nullopt;
    llvm::append_range(dims, *piece);
  }
  return dims;
}

/// The shape operand and type of the reshape of x that `reshape` (x ->
/// `to`) splits axis `axis` of into [N, C] alone, when it also reshapes the
/// static dims after that axis (keeping their element count): leading dims
/// copied, the axis whole, then `to`'s trailing dims.
static std::optional<std::pair<SmallVector<int64_t>, RankedTensorType>>
splitTrailingDims(onnx::NodeOp reshape, int64_t axis) {
  auto source = dyn_cast<RankedTensorType>(reshape.getInputs()[0].getType());
  std::optional<SmallVector<int64_t>> to =
      readShapeConstant(reshape.getInputs()[1]);
  if (!source || !to || axis < 0 || axis >= source.getRank() ||
      static_cast<int64_t>(to->size()) < axis + 2 ||
      static_cast<int64_t>(to->size()) == source.getRank() + 1)
    return std::nullopt;
  int64_t fromElements = 1, toElements = 1;
  for (int64_t d = axis + 1; d < source.getRank(); ++d) {
    if (source.isDynamicDim(d))
      return std::nullopt;
    fromElements *= source.getDimSize(d);
  }
  for (int64_t d : ArrayRef<int64_t>(*to).drop_front(axis + 2)) {
    if (d <= 0)
      return std::nullopt;
    toElements *= d;
  }
  if (fromElements != toElements)
    return std::nullopt;
  SmallVector<int64_t> mid(axis, 0);
  SmallVector<int64_t> midShape(source.getShape().take_front(axis));
  mid.push_back(source.isDynamicDim(axis) ? -1 : source.getDimSize(axis));
  midShape.push_back(source.getDimSize(axis));
  for (int64_t d : ArrayRef<int64_t>(*to).drop_front(axis + 2)) {
    mid.push_back(d);
    midShape.push_back(d);
  }
  return std::make_pair(
      mid, RankedTensorType::get(midShape, source.getElementType()));
}

/// (N, C) if `reshape` only splits axis `axis` of its source into
/// [N, C] (N is 0 when it is not static): by static shapes, or by a
/// constant target that copies the leading dims (0), infers N (-1) and
/// names the trailing ones.
static std::optional<std::pair<int64_t, int64_t>>
splitOfAxis(onnx::NodeOp reshape, int64_t axis,
            RankedTensorType splitSource = {}) {
  auto source =
      splitSource
          ? splitSource
          : dyn_cast<RankedTensorType>(reshape.getInputs()[0].getType());
  if (!source)
    return std::nullopt;
  int64_t rank = source.getRank();
  std::optional<SmallVector<int64_t>> to =
      readShapeConstant(reshape.getInputs()[1]);
  bool zeroCopies = !reshape.getONNXAttr("allowzero");
  if (!to) {
    auto split = dyn_cast<RankedTensorType>(reshape->getResult(0).getType());
    if (!split || !split.hasStaticShape())
      return std::nullopt;
    to = SmallVector<int64_t>(split.getShape());
    zeroCopies = false;
  }
  if (static_cast<int64_t>(to->size()) != rank + 1 || axis < 0 || axis >= rank)
    return std::nullopt;
  ArrayRef<int64_t> from = source.getShape();
  auto isStatic = [&](int64_t d) { return !source.isDynamicDim(d); };
  int64_t count = (*to)[axis], size = (*to)[axis + 1];
  if (size <= 0)
    return std::nullopt;
  for (int64_t d = 0; d < rank; ++d) {
    bool same;
    if (d < axis)
      same =
          ((*to)[d] == 0 && zeroCopies) || (isStatic(d) && (*to)[d] == from[d]);
    else if (d > axis)
      same = isStatic(d) && (*to)[d + 1] == from[d];
    else
      same = count == -1 || (isStatic(d) && count * size == from[d]);
    if (!same)
      return std::nullopt;
  }
  if (count == -1)
    count = isStatic(axis) && from[axis] % size == 0 ? from[axis] / size : 0;
  return std::make_pair(count, size);
}

/// Gather(Reshape(x -> [.., N, C, ..]), i) on the N axis -> the i-th Slice of
/// C elements of x. A constant i gives a constant window; the iteration
/// counter of a Loop (or any integer) gives the window [i * C, i * C + C),
/// which the Loop-bounds check then reads.
struct GatherOfReshapeToSlice : NodePattern {
  explicit GatherOfReshapeToSlice(MLIRContext *context)
      : NodePattern(context, "Gather") {}

  LogicalResult matchNode(onnx::NodeOp gather,
                          PatternRewriter &rewriter) const override {
    if (gather.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(gather, "not two inputs");
    onnx::NodeOp reshape = nodeOf(gather.getInputs()[0], "Reshape");
    Value indexValue = gather.getInputs()[1];
    auto index = dyn_cast<ShapedType>(indexValue.getType());
    if (!reshape || !index || !index.hasRank() || index.getRank() != 0 ||
        !index.getElementType().isInteger())
      return rewriter.notifyMatchFailure(gather, "not one index of a reshape");
    Value x = reshape.getInputs()[0];
    int64_t axis = intAttr(gather, "axis").value_or(0);
    std::optional<int64_t> splitRank = rankOf(reshape->getResult(0));
    if (std::optional<SmallVector<int64_t>> target =
            readShapeConstant(reshape.getInputs()[1]))
      splitRank = target->size();
    if (splitRank && axis < 0)
      axis += *splitRank;
    std::optional<std::pair<int64_t, int64_t>> split =
        splitRank ? splitOfAxis(reshape, axis) : std::nullopt;
    Location loc = gather.getLoc();
    // torch's `x.reshape(B, N, C, H, D)` of `[B, T, H * D]` also splits the
    // features: the chunk is cut from `x.reshape(B, T, H, D)`.
    std::optional<std::pair<SmallVector<int64_t>, RankedTensorType>> mid;
    if (!split && splitRank) {
      mid = splitTrailingDims(reshape, axis);
      if (mid)
        split = splitOfAxis(reshape, axis, mid->second);
    }
    if (!split)
      return rewriter.notifyMatchFailure(gather,
                                         "the reshape does more than split "
                                         "one axis");
    auto [count, size] = *split;
    Type type = gather->getResult(0).getType();
    if (mid) {
      onnx::OnnxBuilder b(rewriter, loc, mid->second.getElementType());
      Value shape = b.i64s(mid->first);
      x = b.node("Reshape", {x, shape}, mid->second);
    }
    if (std::optional<SmallVector<int64_t>> value = intConstant(indexValue)) {
      int64_t i =
          (*value)[0] < 0 && count > 0 ? (*value)[0] + count : (*value)[0];
      if (i < 0 || (count > 0 && i >= count))
        return rewriter.notifyMatchFailure(gather, "index out of range");
      rewriter.replaceOp(gather, createSlice(rewriter, loc, x, i * size,
                                             (i + 1) * size, axis, type));
      return success();
    }
    rewriter.replaceOp(
        gather, createSliceAt(rewriter, loc, x, indexValue, size, axis, type));
    return success();
  }
};

/// True if `gather` takes one index (a 0-D index tensor) of its data.
static bool takesOneIndex(onnx::NodeOp gather) {
  if (gather.getInputs().size() != 2)
    return false;
  auto index = dyn_cast<ShapedType>(gather.getInputs()[1].getType());
  return index && index.hasRank() && index.getRank() == 0;
}

/// Gather(Transpose(x, p), i, axis a) of one index -> Transpose(Gather(x, i,
/// axis p[a]), q), q the rest of p: the cut moves in front of the layout
/// change, onto the tensor the chunks are views of (ttt-lm-pytorch takes
/// mini-batch i of a `[N, B, H, C, D]` permutation).
struct GatherOfTranspose : NodePattern {
  explicit GatherOfTranspose(MLIRContext *context)
      : NodePattern(context, "Gather") {}

  LogicalResult matchNode(onnx::NodeOp gather,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp transpose = nodeOf(gather.getInputs()[0], "Transpose");
    if (!transpose || !takesOneIndex(gather))
      return rewriter.notifyMatchFailure(gather,
                                         "not one index of a Transpose");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    int64_t rank = perm ? perm->size() : 0;
    int64_t axis = intAttr(gather, "axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (!perm || axis < 0 || axis >= rank || !isPermutation(*perm))
      return rewriter.notifyMatchFailure(gather, "no permutation");
    int64_t cut = (*perm)[axis];
    SmallVector<int64_t> rest;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        rest.push_back((*perm)[i] > cut ? (*perm)[i] - 1 : (*perm)[i]);
    Value x = transpose.getInputs()[0];
    Type cutType = x.getType();
    if (auto ranked = dyn_cast<RankedTensorType>(cutType)) {
      SmallVector<int64_t> shape(ranked.getShape());
      shape.erase(shape.begin() + cut);
      cutType = RankedTensorType::get(shape, ranked.getElementType());
    }
    Location loc = gather.getLoc();
    onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(cutType));
    Value chunk = b.node("Gather", {x, gather.getInputs()[1]}, cutType,
                         {b.attr("axis", cut)});
    rewriter.replaceOp(gather, createTranspose(rewriter, loc, chunk, rest));
    return success();
  }
};

/// One index `i` of axis `axis` of a broadcast operand `x` of a result of
/// rank `rank`: x itself when it has no such axis, x without that axis when
/// it is 1 there (the operand was broadcast), or Gather(x, i); null when x's
/// shape is not known well enough.
static Value gatherOperand(PatternRewriter &rewriter, Location loc, Value x,
                           Value index, int64_t axis, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type)
    return nullptr;
  int64_t at = axis - (rank - type.getRank());
  if (at < 0)
    return x;
  SmallVector<int64_t> shape(type.getShape());
  int64_t size = shape[at];
  shape.erase(shape.begin() + at);
  auto cut = RankedTensorType::get(shape, type.getElementType());
  onnx::OnnxBuilder b(rewriter, loc, type.getElementType());
  if (size == 1) {
    if (!cut.hasStaticShape())
      return nullptr;
    Value target = b.i64s(shape);
    return b.node("Reshape", {x, target}, cut);
  }
  if (ShapedType::isDynamic(size))
    return nullptr;
  return b.node("Gather", {x, index}, cut, {b.attr("axis", at)});
}

/// Gather(x op y, i, axis) of one index -> Gather(x, i) op Gather(y, i) for
/// an elementwise op (an operand broadcast along the axis loses it), and
/// Gather(Expand(x, s), i) -> Expand(Gather(x, i), s without the axis):
/// ttt-lm-pytorch computes `eta = token_eta * lr` for all mini-batches
/// `[B, H, N, C, C]` and takes mini-batch i of it.
struct GatherOfElementwise : NodePattern {
  GatherOfElementwise(MLIRContext *context, StringRef opType)
      : NodePattern(context, "Gather"), opType(opType.str()) {}

  LogicalResult matchNode(onnx::NodeOp gather,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp op = nodeOf(gather.getInputs()[0], opType);
    auto type = op ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                   : RankedTensorType();
    if (!op || !takesOneIndex(gather) || !type ||
        !isa<FloatType>(type.getElementType()) || op.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(gather,
                                         "not one index of a float " + opType);
    int64_t rank = type.getRank();
    int64_t axis = intAttr(gather, "axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return rewriter.notifyMatchFailure(gather, "axis out of range");
    Value i = gather.getInputs()[1];
    Location loc = gather.getLoc();
    Type resultType = gather->getResult(0).getType();
    onnx::OnnxBuilder b(rewriter, loc, type.getElementType());
    if (opType == "Expand") {
      std::optional<SmallVector<int64_t>> shape =
          shapeConstant(op.getInputs()[1]);
      auto source = dyn_cast<RankedTensorType>(op.getInputs()[0].getType());
      if (!shape || static_cast<int64_t>(shape->size()) != rank || !source ||
          source.getRank() > rank)
        return rewriter.notifyMatchFailure(gather, "shape not constant");
      Value x = gatherOperand(rewriter, loc, op.getInputs()[0], i, axis, rank);
      if (!x)
        return rewriter.notifyMatchFailure(gather, "operand shape unknown");
      shape->erase(shape->begin() + axis);
      Value target = b.i64s(*shape);
      rewriter.replaceOp(gather, b.node("Expand", {x, target}, resultType));
      return success();
    }
    for (Value operand : op.getInputs()) {
      auto operandType = dyn_cast<RankedTensorType>(operand.getType());
      if (!operandType || operandType.getRank() > rank)
        return rewriter.notifyMatchFailure(gather, "operand shape unknown");
      int64_t at = axis - (rank - operandType.getRank());
      if (at >= 0 && operandType.isDynamicDim(at))
        return rewriter.notifyMatchFailure(gather, "operand shape unknown");
      if (at >= 0 && operandType.getDimSize(at) == 1 &&
          !operandType.hasStaticShape())
        return rewriter.notifyMatchFailure(gather, "operand shape unknown");
    }
    Value lhs = gatherOperand(rewriter, loc, op.getInputs()[0], i, axis, rank);
    Value rhs = gatherOperand(rewriter, loc, op.getInputs()[1], i, axis, rank);
    rewriter.replaceOp(gather, b.node(opType, {lhs, rhs}, resultType));
    return success();
  }

private:
  std::string opType;
};

/// Gather(Reshape(x), i, axis) where the reshape keeps every dim up to and
/// including the axis -> Reshape(Gather(x, i, axis)).
struct GatherOfTrailingReshape : NodePattern {
  explicit GatherOfTrailingReshape(MLIRContext *context)
      : NodePattern(context, "Gather") {}

  LogicalResult matchNode(onnx::NodeOp gather,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp reshape = nodeOf(gather.getInputs()[0], "Reshape");
    auto from =
        reshape ? dyn_cast<RankedTensorType>(reshape.getInputs()[0].getType())
                : RankedTensorType();
    auto to = reshape
                  ? dyn_cast<RankedTensorType>(reshape->getResult(0).getType())
                  : RankedTensorType();
    auto result = dyn_cast<RankedTensorType>(gather->getResult(0).getType());
    if (!reshape || !takesOneIndex(gather) || !from || !to ||
        !from.hasStaticShape() || !to.hasStaticShape() || !result ||
        !result.hasStaticShape())
      return rewriter.notifyMatchFailure(gather, "not one index of a static "
                                                 "reshape");
    int64_t axis = intAttr(gather, "axis").value_or(0);
    if (axis < 0)
      axis += to.getRank();
    if (axis < 0 || axis >= std::min(from.getRank(), to.getRank()) ||
        from.getShape().take_front(axis + 1) !=
            to.getShape().take_front(axis + 1) ||
        from.getShape() == to.getShape())
      return rewriter.notifyMatchFailure(gather, "the reshape changes the "
                                                 "dims up to the axis");
    SmallVector<int64_t> shape(from.getShape());
    shape.erase(shape.begin() + axis);
    Location loc = gather.getLoc();
    onnx::OnnxBuilder b(rewriter, loc, from.getElementType());
    Value chunk =
        b.node("Gather", {reshape.getInputs()[0], gather.getInputs()[1]},
               RankedTensorType::get(shape, from.getElementType()),
               {b.attr("axis", axis)});
    Value target = b.i64s(result.getShape());
    rewriter.replaceOp(gather, b.node("Reshape", {chunk, target}, result));
    return success();
  }
};

/// The axis of x that `reshape` splits into two (and does nothing else),
/// for a static reshape.
static std::optional<int64_t> splitAxis(onnx::NodeOp reshape) {
  auto from = dyn_cast<RankedTensorType>(reshape.getInputs()[0].getType());
  auto to = dyn_cast<RankedTensorType>(reshape->getResult(0).getType());
  if (!from || !to || !from.hasStaticShape() || !to.hasStaticShape() ||
      to.getRank() != from.getRank() + 1)
    return std::nullopt;
  for (int64_t axis = 0; axis < from.getRank(); ++axis)
    if (from.getShape().take_front(axis) == to.getShape().take_front(axis) &&
        from.getShape().drop_front(axis + 1) ==
            to.getShape().drop_front(axis + 2) &&
        to.getDimSize(axis) * to.getDimSize(axis + 1) == from.getDimSize(axis))
      return axis;
  return std::nullopt;
}

/// Transpose(Reshape(x -> [.., N, C, ..]), p) that keeps N and C together
/// and in order -> Reshape(Transpose(x, p'), ..): the layout change moves in
/// front of the split, so that the chunks are cut from the permuted source
/// (ttt-lm-pytorch permutes `lr.reshape(B, N, C, H)` to `[B, H, N, C]`).
struct TransposeOfSplitReshape : NodePattern {
  explicit TransposeOfSplitReshape(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp reshape = nodeOf(transpose.getInputs()[0], "Reshape");
    std::optional<int64_t> split = reshape ? splitAxis(reshape) : std::nullopt;
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    auto result = dyn_cast<RankedTensorType>(transpose->getResult(0).getType());
    if (!split || !perm || !result || !result.hasStaticShape())
      return rewriter.notifyMatchFailure(transpose, "not of a split reshape");
    if (!isPermutation(*perm) ||
        perm->size() != static_cast<size_t>(result.getRank()))
      return rewriter.notifyMatchFailure(transpose, "not a permutation");
    auto at = llvm::find(*perm, *split);
    if (at == perm->end() || at + 1 == perm->end() || *(at + 1) != *split + 1)
      return rewriter.notifyMatchFailure(transpose, "separates the split "
                                                    "axes");
    // The permutation of x's axes: the pair is one axis there.
    SmallVector<int64_t> outer;
    for (int64_t axis : *perm)
      if (axis != *split + 1)
        outer.push_back(axis > *split ? axis - 1 : axis);
    Location loc = transpose.getLoc();
    Value turned =
        createTranspose(rewriter, loc, reshape.getInputs()[0], outer);
    onnx::OnnxBuilder b(rewriter, loc, result.getElementType());
    Value shape = b.i64s(result.getShape());
    rewriter.replaceOp(transpose, b.node("Reshape", {turned, shape}, result));
    return success();
  }
};

/// Slice(Reshape(x -> [.., N, C, ..]), [i, i + 1]) on the N axis ->
/// Reshape(Slice(x, [i * C, i * C + C])): one mini-batch of a reshape into
/// mini-batches is a time window of the source.
struct SliceOfSplitAxis : NodePattern {
  explicit SliceOfSplitAxis(MLIRContext *context)
      : NodePattern(context, "Slice") {}

  LogicalResult matchNode(onnx::NodeOp slice,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp reshape = nodeOf(slice.getInputs()[0], "Reshape");
    std::optional<int64_t> split = reshape ? splitAxis(reshape) : std::nullopt;
    auto inputs = slice.getInputs();
    auto result = dyn_cast<RankedTensorType>(slice->getResult(0).getType());
    if (!split || inputs.size() < 4 || !result || !result.hasStaticShape())
      return rewriter.notifyMatchFailure(slice, "not of a split reshape");
    std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
    std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
    std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
    std::optional<SmallVector<int64_t>> steps =
        inputs.size() > 4 ? intConstant(inputs[4]) : SmallVector<int64_t>{1};
    auto to = cast<RankedTensorType>(reshape->getResult(0).getType());
    if (!starts || !ends || !axes || !steps || starts->size() != 1 ||
        ends->size() != 1 || axes->size() != 1 || steps->size() != 1 ||
        (*steps)[0] != 1)
      return rewriter.notifyMatchFailure(slice, "not one constant window");
    int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + to.getRank() : (*axes)[0];
    int64_t i = (*starts)[0], count = to.getDimSize(*split);
    if (axis != *split || i < 0 || i >= count || result.getDimSize(axis) != 1)
      return rewriter.notifyMatchFailure(slice, "not one chunk of the split");
    int64_t size = to.getDimSize(*split + 1);
    auto source = cast<RankedTensorType>(reshape.getInputs()[0].getType());
    SmallVector<int64_t> window(source.getShape());
    window[axis] = size;
    Location loc = slice.getLoc();
    onnx::OnnxBuilder b(rewriter, loc, source.getElementType());
    Value from = b.i64s({i * size});
    Value until = b.i64s({(i + 1) * size});
    Value along = b.i64s({axis});
    Value chunk =
        b.node("Slice", {reshape.getInputs()[0], from, until, along},
               RankedTensorType::get(window, source.getElementType()));
    Value shape = b.i64s(result.getShape());
    rewriter.replaceOp(slice, b.node("Reshape", {chunk, shape}, result));
    return success();
  }
};

/// SequenceAt(SplitToSequence(x, C, axis), i), the pieces of C elements
/// (the last one shorter) -> Slice(x, [i * C], [i * C + C], [axis]).
struct SequenceAtOfSplit : NodePattern {
  explicit SequenceAtOfSplit(MLIRContext *context)
      : NodePattern(context, "SequenceAt") {}

  LogicalResult matchNode(onnx::NodeOp at,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp split = nodeOf(at.getInputs()[0], "SplitToSequence");
    if (!split || at.getInputs().size() != 2 || split.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(at, "not a piece of a split");
    // One size for every piece: a scalar split (a 1-D one lists the sizes).
    auto sizeType = dyn_cast<ShapedType>(split.getInputs()[1].getType());
    std::optional<SmallVector<int64_t>> size =
        intConstant(split.getInputs()[1]);
    if (!sizeType || !sizeType.hasRank() || sizeType.getRank() != 0 || !size ||
        (*size)[0] <= 0)
      return rewriter.notifyMatchFailure(at, "not pieces of one size");
    Value index = at.getInputs()[1];
    auto indexType = dyn_cast<ShapedType>(index.getType());
    if (!indexType || !indexType.hasRank() || indexType.getRank() != 0)
      return rewriter.notifyMatchFailure(at, "not one index");
    // A negative constant counts from the end, which only a static length
    // fixes; a computed index is read by the Loop-bounds check.
    std::optional<SmallVector<int64_t>> constant = intConstant(index);
    if (constant && (*constant)[0] < 0)
      return rewriter.notifyMatchFailure(at, "counts from the end");
    int64_t axis = intAttr(split, "axis").value_or(0);
    rewriter.replaceOp(
        at, createSliceAt(rewriter, at.getLoc(), split.getInputs()[0], index,
                          (*size)[0], axis, at->getResult(0).getType()));
    return success();
  }
};

/// True if every reader of `op`'s result is a Reshape: a transpose between two
/// views (torch-mlir's einsum and batched-matmul plumbing), which moving
/// through the views cannot split from a weight's other spellings.
static bool onlyViewed(Operation *op) {
  return !op->use_empty() && llvm::all_of(op->getUsers(), [](Operation *user) {
    auto node = dyn_cast<onnx::NodeOp>(user);
    return node && node.isDefaultDomain() && node.getOpType() == "Reshape";
  });
}

/// Transpose(Reshape(x), p) where the Reshape only inserts or drops unit
/// dims, or where p only moves unit dims -> a Reshape of x (transposed by
/// what p does to its other dims), when only views read the transpose:
/// torch-mlir's einsum lowering pads each factor with unit dims and turns
/// them round before its batched matmul.
struct TransposeOfUnitDims : NodePattern {
  explicit TransposeOfUnitDims(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  static SmallVector<int64_t> nonUnit(ArrayRef<int64_t> shape) {
    SmallVector<int64_t> positions;
    for (auto [i, d] : llvm::enumerate(shape))
      if (d != 1)
        positions.push_back(i);
    return positions;
  }

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp reshape = nodeOf(transpose.getInputs()[0], "Reshape");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    auto viewed =
        dyn_cast<RankedTensorType>(transpose.getInputs()[0].getType());
    auto result = dyn_cast<RankedTensorType>(transpose->getResult(0).getType());
    // One dim of run-time size at most (a dynamic batch), which a Reshape
    // infers; it is never a unit dim.
    if (!reshape || !perm || !onlyViewed(transpose) || !viewed ||
        viewed.getNumDynamicDims() > 1 || !result ||
        result.getNumDynamicDims() > 1 ||
        perm->size() != static_cast<size_t>(viewed.getRank()))
      return rewriter.notifyMatchFailure(transpose, "not of a static Reshape");
    // Where the transpose sends the viewed tensor's non-unit dims, in order.
    SmallVector<int64_t> dims = nonUnit(viewed.getShape());
    SmallVector<int64_t> order;
    for (int64_t from : *perm)
      if (viewed.getDimSize(from) != 1)
        order.push_back(llvm::find(dims, from) - dims.begin());
    bool moves = !llvm::is_sorted(order);
    Value source = transpose.getInputs()[0];
    Value x = reshape.getInputs()[0];
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (xType && xType.getNumDynamicDims() <= 1 &&
        xType.getNumDynamicDims() == viewed.getNumDynamicDims()) {
      SmallVector<int64_t> xDims = nonUnit(xType.getShape());
      bool unitOnly = xDims.size() == dims.size();
      for (size_t i = 0; unitOnly && i < dims.size(); ++i)
        unitOnly = xType.getDimSize(xDims[i]) == viewed.getDimSize(dims[i]);
      if (unitOnly && moves) {
        // x's non-unit dims in the transpose's order, its unit dims last.
        SmallVector<int64_t> xPerm;
        for (int64_t k : order)
          xPerm.push_back(xDims[k]);
        for (int64_t i = 0; i < xType.getRank(); ++i)
          if (xType.getDimSize(i) == 1)
            xPerm.push_back(i);
        source = createTranspose(rewriter, transpose.getLoc(), x, xPerm);
        moves = false;
      }
    }
    if (moves)
      return rewriter.notifyMatchFailure(transpose, "moves non-unit dims");
    rewriter.replaceOp(
        transpose, createReshape(rewriter, transpose.getLoc(), source, result));
    return success();
  }
};

/// Transpose(Reshape(y), swap of the two innermost axes) where the Reshape
/// only merges or splits y's leading (batch) axes -> Reshape(Transpose(y,
/// swap)), when only views read the transpose: the turn moves to the tensor
/// the batch view is of (torch-mlir's `(w @ x^T)^T` turns the product in its
/// [B*H, .., ..] view).
struct InnerTransposeOfBatchView : NodePattern {
  explicit InnerTransposeOfBatchView(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp reshape = nodeOf(transpose.getInputs()[0], "Reshape");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    auto result = dyn_cast<RankedTensorType>(transpose->getResult(0).getType());
    // Static inner dims, one batch dim of run-time size at most.
    auto batchView = [](RankedTensorType type) {
      return type && type.getRank() >= 3 && type.getNumDynamicDims() <= 1 &&
             llvm::none_of(type.getShape().take_back(2), ShapedType::isDynamic);
    };
    if (!reshape || !perm || !onlyViewed(transpose) || perm->size() < 3 ||
        *perm != swapInnerPerm(perm->size()) || !batchView(result))
      return rewriter.notifyMatchFailure(transpose,
                                         "not an inner turn of a view");
    Value y = reshape.getInputs()[0];
    auto source = dyn_cast<RankedTensorType>(y.getType());
    auto viewed = cast<RankedTensorType>(reshape->getResult(0).getType());
    if (!batchView(source) || !batchView(viewed) ||
        source.getShape().take_back(2) != viewed.getShape().take_back(2))
      return rewriter.notifyMatchFailure(transpose,
                                         "the view is not of batch axes");
    Value turned = createTranspose(rewriter, transpose.getLoc(), y,
                                   swapInnerPerm(source.getRank()));
    rewriter.replaceOp(
        transpose, createReshape(rewriter, transpose.getLoc(), turned, result));
    return success();
  }
};

/// Reshape(Reshape(x), s) with a static result -> Reshape(x, s), when the
/// inner view only inserts or drops unit dims or the pair is a round trip: a
/// reshape only reads its input's elements in order, so a view of a view is a
/// view of the source (torch-mlir's collapse of an expand, the shadow of a
/// linalg program's broadcast).
struct ReshapeOfReshape : NodePattern {
  explicit ReshapeOfReshape(MLIRContext *context)
      : NodePattern(context, "Reshape") {}

  LogicalResult matchNode(onnx::NodeOp outer,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp inner = nodeOf(outer.getInputs()[0], "Reshape");
    auto type = dyn_cast<RankedTensorType>(outer->getResult(0).getType());
    // A view keeps the element count, so a round trip to a type with one
    // dim of run-time size (a chunk of run-time length) is one too; with
    // more, all but one must be copies of the source's own (a batch and a
    // chunk length: the views' targets read them from Shape).
    if (!inner || !type)
      return rewriter.notifyMatchFailure(outer, "not a view of a view");
    auto roundTrip = [&](Value source) {
      if (source.getType() != type)
        return false;
      int64_t unknown = 0;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d) &&
            !sameDimSize(outer->getResult(0), d, source, d))
          ++unknown;
      return unknown <= 1;
    };
    // A round trip through several views is their source.
    for (onnx::NodeOp view = inner; view;
         view = nodeOf(view.getInputs()[0], "Reshape"))
      if (roundTrip(view.getInputs()[0])) {
        rewriter.replaceOp(outer, view.getInputs()[0]);
        return success();
      }
    if (type.getNumDynamicDims() > 1)
      return rewriter.notifyMatchFailure(outer, "not a round trip");
    Value x = inner.getInputs()[0];
    // A view that others read too stays: the readers of a [.., N, C, ..]
    // split (Gather of a mini-batch) see it through its later views.
    // A view that splits or merges dims stays unless the pair is a round
    // trip: the readers of a [.., N, C, ..] split (a Gather of a
    // mini-batch) see it through its later views. Unit dims carry nothing.
    auto nonUnit = [](Type t) {
      SmallVector<int64_t> dims;
      if (auto ranked = dyn_cast<RankedTensorType>(t))
        for (int64_t d : ranked.getShape())
          if (d != 1)
            dims.push_back(d);
      return dims;
    };
    // Unit dims only: the other dims in order, one of run-time size at most
    // (a dynamic batch: the element count fixes it on both sides).
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    bool unitsOnly = xType && xType.getNumDynamicDims() <= 1 &&
                     nonUnit(xType) == nonUnit(inner->getResult(0).getType());
    if (x.getType() != type && !unitsOnly)
      return rewriter.notifyMatchFailure(outer, "not a round trip");
    rewriter.replaceOp(outer, createReshape(rewriter, outer.getLoc(), x, type));
    return success();
  }
};

/// NumPy broadcasting of static shapes (innermost dims aligned).
static std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<SmallVector<int64_t>> shapes) {
  size_t rank = 0;
  for (const SmallVector<int64_t> &shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (const SmallVector<int64_t> &shape : shapes)
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &d = result[rank - shape.size() + i];
      if (shape[i] != 1 && d != 1 && shape[i] != d)
        return std::nullopt;
      if (shape[i] != 1)
        d = shape[i];
    }
  return result;
}

/// The static shape of `value`, if it has one.
static std::optional<SmallVector<int64_t>> staticDims(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return SmallVector<int64_t>(type.getShape());
}

/// True if `value` is a parameter or an input (a constant, an initializer, a
/// block argument) or a view of one.
static bool isStoredTensor(Value value) {
  if (isa<BlockArgument>(value) || value.getDefiningOp<onnx::InitializerOp>())
    return true;
  if (nodeOf(value, "Constant"))
    return true;
  onnx::NodeOp view = nodeOf(value, "Reshape");
  return view && isStoredTensor(view.getInputs()[0]);
}

/// x, when `value` only broadcasts a stored tensor x (isStoredTensor):
/// `Reshape(x)` that puts unit dims in front of x's dims, or `Expand(x, s)`
/// (x broadcast to its result). Views of computed values stay: the batch
/// merges of torch-mlir's batched products read them.
static Value broadcastSource(Value value) {
  auto node = value.getDefiningOp<onnx::NodeOp>();
  if (!node || !node.isDefaultDomain() || node.getInputs().size() != 2 ||
      node->getNumResults() != 1)
    return nullptr;
  Value x = node.getInputs()[0];
  std::optional<SmallVector<int64_t>> from = staticDims(x);
  std::optional<SmallVector<int64_t>> to = staticDims(value);
  if (!from || !to || from->size() > to->size() || !isStoredTensor(x))
    return nullptr;
  if (node.getOpType() == "Reshape")
    return llvm::all_of(ArrayRef<int64_t>(*to).drop_back(from->size()),
                        [](int64_t d) { return d == 1; }) &&
                   ArrayRef<int64_t>(*to).take_back(from->size()) ==
                       ArrayRef<int64_t>(*from)
               ? x
               : nullptr;
  if (node.getOpType() == "Expand") {
    std::optional<SmallVector<int64_t>> shape = broadcastShapes({*from, *to});
    return shape && *shape == *to ? x : nullptr;
  }
  return nullptr;
}

/// True if `user` reads x in place of each of its operands `view` with the
/// same result: an op that broadcasts by itself (Add, Sub, Mul, Div; MatMul
/// on its batch dims, the view keeping the two matrix dims) whose operands'
/// broadcast stays the result's shape.
static bool readsBroadcastSource(Operation *user, Value view, Value x) {
  auto node = dyn_cast<onnx::NodeOp>(user);
  if (!node || !node.isDefaultDomain() || node->getNumResults() != 1 ||
      node->getNumRegions() != 0 ||
      !llvm::is_contained({"Add", "Sub", "Mul", "Div", "MatMul"},
                          node.getOpType()))
    return false;
  bool matmul = node.getOpType() == "MatMul";
  SmallVector<int64_t> from = *staticDims(x), viewed = *staticDims(view);
  // A view that only puts unit dims in front of x's changes no result when
  // the other operand has at least its rank: broadcasting aligns the
  // innermost dims, whatever their sizes (of run-time size too).
  if (node.getInputs().size() == 2 && viewed.size() >= from.size() &&
      ArrayRef(viewed).take_back(from.size()) == ArrayRef(from) &&
      llvm::all_of(ArrayRef(viewed).drop_back(from.size()),
                   [](int64_t d) { return d == 1; })) {
    Value other = node.getInputs()[node.getInputs()[0] == view ? 1 : 0];
    auto otherType = dyn_cast<RankedTensorType>(other.getType());
    if (other != view && otherType &&
        otherType.getRank() >= static_cast<int64_t>(viewed.size()) &&
        (!matmul || from.size() >= 2))
      return true;
  }
  std::optional<SmallVector<int64_t>> result = staticDims(node->getResult(0));
  if (!result || node.getInputs().size() != 2 ||
      (matmul && (from.size() < 2 || ArrayRef(from).take_back(2) !=
                                         ArrayRef(viewed).take_back(2))))
    return false;
  SmallVector<SmallVector<int64_t>> shapes;
  for (Value operand : node.getInputs()) {
    std::optional<SmallVector<int64_t>> shape =
        operand == view ? from : staticDims(operand);
    if (!shape || (matmul && shape->size() < 2))
      return false;
    shapes.push_back(
        matmul ? SmallVector<int64_t>(ArrayRef(*shape).drop_back(2)) : *shape);
  }
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  return shape && ArrayRef<int64_t>(*shape) ==
                      ArrayRef<int64_t>(*result).drop_back(matmul ? 2 : 0);
}

/// B(x) -> x where B only broadcasts a stored tensor x (broadcastSource) and
/// every reader broadcasts by itself with the same result
/// (readsBroadcastSource): broadcasting aligns the innermost dims, so every
/// element reads the same element of x. torch-mlir reads a parameter per
/// sample (`W [H, o, i]` added to, or multiplied with, `[B, H, o, i]`)
/// through such a view, the ONNX exporters read the parameter itself; with
/// the view gone the transposes an out x in weight's updates carry reach the
/// parameter, and the chunks read one spelling of it. A view that some
/// reader needs (a Transpose of it) stays for all of them, so that the
/// chunks keep reading one spelling of the weight.
struct DropBroadcastView : NodePattern {
  DropBroadcastView(MLIRContext *context, StringRef opType)
      : NodePattern(context, opType) {}

  LogicalResult matchNode(onnx::NodeOp view,
                          PatternRewriter &rewriter) const override {
    Value result = view->getResult(0);
    Value x = broadcastSource(result);
    if (!x || result.use_empty())
      return rewriter.notifyMatchFailure(view, "not a broadcast view read");
    for (Operation *user : result.getUsers())
      if (!readsBroadcastSource(user, result, x))
        return rewriter.notifyMatchFailure(view, "a reader needs the view");
    rewriter.replaceAllUsesWith(result, x);
    return success();
  }
};

/// The entries of a 1-d integer tensor that are constants, the others
/// nullopt: a Constant, ConstantOfShape of a known length, or a Concat of
/// such pieces and pieces of known length (`w.repeat(B, 1, 1, 1)` scripted
/// repeats by `Concat(B, 1, 1, 1)`, B read from a shape).
static constexpr int64_t kMaxShapeEntries = 1 << 16;

static std::optional<SmallVector<std::optional<int64_t>>>
partialInts(Value value) {
  SmallVector<std::optional<int64_t>> entries;
  if (std::optional<SmallVector<int64_t>> ints = intConstant(value)) {
    llvm::append_range(entries, *ints);
    return entries;
  }
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (onnx::NodeOp fill = nodeOf(value, "ConstantOfShape")) {
    auto filler =
        dyn_cast_or_null<DenseIntElementsAttr>(fill.getONNXAttr("value"));
    std::optional<int64_t> length;
    if (std::optional<SmallVector<int64_t>> dims =
            intConstant(fill.getInputs()[0]))
      length = dims->size() == 1 ? std::optional((*dims)[0]) : std::nullopt;
    else if (onnx::NodeOp shape = nodeOf(fill.getInputs()[0], "Shape"))
      if (auto of = dyn_cast<RankedTensorType>(shape.getInputs()[0].getType());
          of && of.getRank() == 1 && !of.isDynamicDim(0) &&
          shape.getInputs().size() == 1 && !shape.getONNXAttr("start") &&
          !shape.getONNXAttr("end"))
        length = of.getDimSize(0);
    // A shape vector has a few entries; a longer fill is no shape.
    if (!filler || filler.getNumElements() != 1 || !length || *length < 0 ||
        *length > kMaxShapeEntries)
      return std::nullopt;
    entries.assign(*length,
                   (*filler.getValues<APInt>().begin()).getSExtValue());
    return entries;
  }
  onnx::NodeOp concat = nodeOf(value, "Concat");
  if (!concat || !type || type.getRank() != 1)
    return std::nullopt;
  for (Value piece : concat.getInputs()) {
    if (std::optional<SmallVector<std::optional<int64_t>>> known =
            partialInts(piece)) {
      llvm::append_range(entries, *known);
      continue;
    }
    auto pieceType = dyn_cast<RankedTensorType>(piece.getType());
    if (!pieceType || pieceType.getRank() != 1 || pieceType.isDynamicDim(0) ||
        pieceType.getDimSize(0) > kMaxShapeEntries)
      return std::nullopt;
    entries.append(pieceType.getDimSize(0), std::nullopt);
  }
  if (static_cast<int64_t>(entries.size()) > kMaxShapeEntries)
    return std::nullopt;
  return entries;
}

/// Expand(x, [1, ..]) with no more ones than x has dims -> x: it broadcasts
/// nothing (`w.repeat(..)` scripted expands by ones first).
struct ExpandByOnes : NodePattern {
  explicit ExpandByOnes(MLIRContext *context)
      : NodePattern(context, "Expand") {}

  LogicalResult matchNode(onnx::NodeOp expand,
                          PatternRewriter &rewriter) const override {
    std::optional<int64_t> rank = rankOf(expand.getInputs()[0]);
    std::optional<SmallVector<std::optional<int64_t>>> shape =
        expand.getInputs().size() == 2 ? partialInts(expand.getInputs()[1])
                                       : std::nullopt;
    if (!rank || !shape || static_cast<int64_t>(shape->size()) > *rank ||
        llvm::any_of(*shape, [](std::optional<int64_t> d) { return d != 1; }))
      return rewriter.notifyMatchFailure(expand, "not an Expand by ones");
    rewriter.replaceOp(expand, expand.getInputs()[0]);
    return success();
  }
};

/// Tile(x, r) -> Expand(x, r) where every axis repeats once or is one wide
/// in x: then both make the same copies (`w.repeat(B, 1, 1, 1)` of a
/// `[1, H, d, e]` weight, scripted, B read from a shape), and the raise
/// looks through an Expand. A Tile by constant repeats is typed already,
/// and the raise reads it as it is.
struct TileOfUnitDims : NodePattern {
  explicit TileOfUnitDims(MLIRContext *context)
      : NodePattern(context, "Tile") {}

  LogicalResult matchNode(onnx::NodeOp tile,
                          PatternRewriter &rewriter) const override {
    if (tile.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(tile, "not a Tile");
    Value x = tile.getInputs()[0], repeats = tile.getInputs()[1];
    auto type = dyn_cast<RankedTensorType>(x.getType());
    std::optional<SmallVector<std::optional<int64_t>>> r = partialInts(repeats);
    if (!type || !r || static_cast<int64_t>(r->size()) != type.getRank())
      return rewriter.notifyMatchFailure(tile, "repeats not read");
    if (llvm::all_of(*r,
                     [](std::optional<int64_t> c) { return c.has_value(); }))
      return rewriter.notifyMatchFailure(tile, "constant repeats");
    // The copies' shape, which the Tile may not have been typed with.
    SmallVector<int64_t> shape(type.getShape());
    for (auto [axis, count] : llvm::enumerate(*r)) {
      if (count != 1 && type.getDimSize(axis) != 1)
        return rewriter.notifyMatchFailure(tile, "repeats a wide axis");
      if (count != 1)
        shape[axis] = count ? *count : ShapedType::kDynamic;
    }
    Type result = tile->getResult(0).getType();
    if (!isa<RankedTensorType>(result))
      result = type.clone(shape);
    onnx::OnnxBuilder b(rewriter, tile.getLoc(), type.getElementType());
    rewriter.replaceOp(tile, b.node("Expand", {x, repeats}, result));
    return success();
  }
};

struct NoOpReshape : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    StringRef type = node.getOpType();
    if (!node.isDefaultDomain() || (type != "Reshape" && type != "Expand") ||
        node.getInputs().size() != 2 || node->getNumResults() != 1)
      return failure();
    Value x = node.getInputs()[0];
    auto source = dyn_cast<RankedTensorType>(x.getType());
    // A result typed as the source's static shape is the source.
    if (source && source.hasStaticShape() &&
        node->getResult(0).getType() == source) {
      rewriter.replaceOp(node, x);
      return success();
    }
    std::optional<SmallVector<int64_t>> shape =
        readShapeConstant(node.getInputs()[1]);
    if (!source || !source.hasStaticShape() || !shape)
      return rewriter.notifyMatchFailure(node, "not static");
    ArrayRef<int64_t> dims = source.getShape();
    bool same = true;
    if (type == "Reshape") {
      // 0 copies the dim (without allowzero); one -1 takes what is left,
      // which is the source's dim when every other dim matches.
      bool zeroCopies = !node.getONNXAttr("allowzero");
      same = shape->size() == dims.size() && llvm::count(*shape, -1) <= 1;
      for (size_t i = 0; same && i < dims.size(); ++i) {
        int64_t d = (*shape)[i];
        same = d == dims[i] || d == -1 || (d == 0 && zeroCopies);
      }
    } else {
      // Expand broadcasts: a shape of ones or of the source's own dims.
      same = shape->size() <= dims.size();
      for (size_t i = 0; same && i < shape->size(); ++i) {
        int64_t d = dims[dims.size() - shape->size() + i];
        same = (*shape)[i] == 1 || (*shape)[i] == d;
      }
    }
    if (!same)
      return rewriter.notifyMatchFailure(node, "changes the shape");
    rewriter.replaceOp(node, x);
    return success();
  }
};
} // namespace

/// Gives `node`'s result the static type `refined` unless its type
/// contradicts it or already is it (a rewrite that changes nothing would
/// keep the greedy driver from converging).
static LogicalResult refineResultType(onnx::NodeOp node,
                                      RankedTensorType refined,
                                      PatternRewriter &rewriter) {
  if (node->getResult(0).getType() == refined)
    return rewriter.notifyMatchFailure(node, "typed already");
  // A value of unknown type (a node whose inputs ONNX shape inference
  // rejects) or a sequence is no tensor to type.
  auto result = dyn_cast<ShapedType>(node->getResult(0).getType());
  if (!result)
    return rewriter.notifyMatchFailure(node, "not a tensor");
  if (result.hasRank() &&
      failed(verifyCompatibleShape(result.getShape(), refined.getShape())))
    return rewriter.notifyMatchFailure(node, "contradicts its type");
  rewriter.modifyOpInPlace(node, [&] { node->getResult(0).setType(refined); });
  return success();
}

namespace {
/// A Slice of a static tensor whose bounds are constants (once folded:
/// exporters write a chunk's bounds as `Unsqueeze(c)`, which ONNX's shape
/// inference does not read) gets its static result type, so that the views
/// and products after it are read with their shapes.
struct RefineSliceType : NodePattern {
  explicit RefineSliceType(MLIRContext *context)
      : NodePattern(context, "Slice") {}

  LogicalResult matchNode(onnx::NodeOp slice,
                          PatternRewriter &rewriter) const override {
    auto inputs = slice.getInputs();
    auto source = dyn_cast<RankedTensorType>(inputs[0].getType());
    auto result = dyn_cast<ShapedType>(slice->getResult(0).getType());
    if (!source || !source.hasStaticShape() || !result ||
        (result.hasRank() && result.hasStaticShape()) || inputs.size() < 3)
      return rewriter.notifyMatchFailure(slice, "nothing to refine");
    int64_t rank = source.getRank();
    std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
    std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
    std::optional<SmallVector<int64_t>> axes;
    if (inputs.size() > 3)
      axes = intConstant(inputs[3]);
    else
      axes =
          llvm::to_vector(llvm::seq<int64_t>(0, starts ? starts->size() : 0));
    std::optional<SmallVector<int64_t>> steps =
        inputs.size() > 4
            ? intConstant(inputs[4])
            : SmallVector<int64_t>(starts ? starts->size() : 0, 1);
    if (!starts || !ends || !axes || !steps || starts->size() != ends->size() ||
        starts->size() != axes->size() || starts->size() != steps->size())
      return rewriter.notifyMatchFailure(slice, "bounds not constant");
    SmallVector<int64_t> shape(source.getShape());
    for (auto [start, end, axis, step] :
         llvm::zip(*starts, *ends, *axes, *steps)) {
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank || step <= 0)
        return rewriter.notifyMatchFailure(slice, "an axis or step it does "
                                                  "not read");
      int64_t size = shape[axis];
      int64_t from = start < 0 ? std::max<int64_t>(start + size, 0)
                               : std::min(start, size);
      int64_t to =
          end < 0 ? std::max<int64_t>(end + size, 0) : std::min(end, size);
      shape[axis] = to > from ? (to - from + step - 1) / step : 0;
    }
    return refineResultType(
        slice, RankedTensorType::get(shape, source.getElementType()), rewriter);
  }
};

/// A Tile of a ranked tensor gets the shape its repeats make (a scripted
/// `w.repeat(B, 1, 1)` is typed unranked): the repeated axes read from a
/// shape are dynamic, the others the input's times their count.
struct RefineTileType : NodePattern {
  explicit RefineTileType(MLIRContext *context)
      : NodePattern(context, "Tile") {}

  LogicalResult matchNode(onnx::NodeOp tile,
                          PatternRewriter &rewriter) const override {
    auto type = tile.getInputs().size() == 2
                    ? dyn_cast<RankedTensorType>(tile.getInputs()[0].getType())
                    : RankedTensorType();
    std::optional<SmallVector<std::optional<int64_t>>> repeats =
        type ? partialInts(tile.getInputs()[1]) : std::nullopt;
    if (!repeats || static_cast<int64_t>(repeats->size()) != type.getRank())
      return rewriter.notifyMatchFailure(tile, "repeats not read");
    SmallVector<int64_t> shape(type.getShape());
    for (auto [dim, count] : llvm::zip(shape, *repeats))
      if (!count || *count < 0 || ShapedType::isDynamic(dim))
        dim = ShapedType::kDynamic;
      else
        dim *= *count;
    return refineResultType(tile, type.clone(shape), rewriter);
  }
};

/// A Reshape whose target is partly known (`x.view(B * H, T, D)` scripted,
/// D a constant and the others read from a shape) gets the dims it knows:
/// a positive entry, or a 0 that copies a static dim of x.
struct RefineReshapeType : NodePattern {
  explicit RefineReshapeType(MLIRContext *context)
      : NodePattern(context, "Reshape") {}

  LogicalResult matchNode(onnx::NodeOp reshape,
                          PatternRewriter &rewriter) const override {
    auto source =
        reshape.getInputs().size() == 2
            ? dyn_cast<RankedTensorType>(reshape.getInputs()[0].getType())
            : RankedTensorType();
    std::optional<SmallVector<std::optional<int64_t>>> target =
        source ? partialInts(reshape.getInputs()[1]) : std::nullopt;
    if (!target)
      return rewriter.notifyMatchFailure(reshape, "target not read");
    bool allowZero = intAttr(reshape, "allowzero").value_or(0) != 0;
    SmallVector<int64_t> shape;
    for (auto [axis, entry] : llvm::enumerate(*target)) {
      int64_t dim = ShapedType::kDynamic;
      if (entry && *entry > 0)
        dim = *entry;
      else if (entry && *entry == 0 && !allowZero &&
               static_cast<int64_t>(axis) < source.getRank())
        dim = source.getDimSize(axis);
      shape.push_back(dim);
    }
    auto result = dyn_cast<RankedTensorType>(reshape->getResult(0).getType());
    if (result && llvm::count_if(result.getShape(), ShapedType::isStatic) >=
                      llvm::count_if(shape, ShapedType::isStatic))
      return rewriter.notifyMatchFailure(reshape, "typed as precisely");
    return refineResultType(reshape, source.clone(shape), rewriter);
  }
};

/// Gather(Shape(x), d) of a dim a graph input declares static -> that size
/// (the graph declares it, and onnxruntime holds inputs to it).
struct FoldStaticDimOfInput : NodePattern {
  explicit FoldStaticDimOfInput(MLIRContext *context)
      : NodePattern(context, "Gather") {}

  LogicalResult matchNode(onnx::NodeOp gather,
                          PatternRewriter &rewriter) const override {
    std::optional<ShapeDim> dim = shapeDim(gather->getResult(0));
    auto input = dim ? dyn_cast<BlockArgument>(dim->tensor) : BlockArgument();
    auto type = dyn_cast<RankedTensorType>(gather->getResult(0).getType());
    if (!input || !isa<onnx::GraphOp>(input.getOwner()->getParentOp()) ||
        !type || type.getRank() != 0 ||
        cast<RankedTensorType>(input.getType()).isDynamicDim(dim->axis))
      return rewriter.notifyMatchFailure(gather,
                                         "not a static dim of a graph input");
    int64_t size =
        cast<RankedTensorType>(input.getType()).getDimSize(dim->axis);
    onnx::OnnxBuilder b(rewriter, gather.getLoc(), type.getElementType());
    rewriter.replaceOp(gather, b.constant(DenseElementsAttr::get(
                                   type, APInt(64, size, /*isSigned=*/true))));
    return success();
  }
};

/// Slice(Shape(x), s, e) of dims a graph input declares static -> those
/// sizes (`x.shape[-1]` in a scripted export).
struct FoldStaticDimsOfInput : NodePattern {
  explicit FoldStaticDimsOfInput(MLIRContext *context)
      : NodePattern(context, "Slice") {}

  LogicalResult matchNode(onnx::NodeOp slice,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp shape = nodeOf(slice.getInputs()[0], "Shape");
    auto input = shape && shape.getInputs().size() == 1 &&
                         !shape.getONNXAttr("start") &&
                         !shape.getONNXAttr("end")
                     ? dyn_cast<BlockArgument>(shape.getInputs()[0])
                     : BlockArgument();
    auto cut = singleAxisCut(slice);
    if (!input || !isa<onnx::GraphOp>(input.getOwner()->getParentOp()) ||
        !cut || std::get<0>(*cut) != 0)
      return rewriter.notifyMatchFailure(slice,
                                         "not a cut of a graph input's shape");
    SmallVector<int64_t> kept =
        dimsBetween(cast<RankedTensorType>(input.getType()).getShape(),
                    std::get<1>(*cut), std::get<2>(*cut));
    if (llvm::any_of(kept, ShapedType::isDynamic))
      return rewriter.notifyMatchFailure(slice, "a dim is dynamic");
    onnx::OnnxBuilder b(rewriter, slice.getLoc(), rewriter.getI64Type());
    rewriter.replaceOp(slice, b.i64s(kept));
    return success();
  }
};

/// An Unsqueeze of a static tensor by constant axes gets its static type.
struct RefineUnsqueezeType : NodePattern {
  explicit RefineUnsqueezeType(MLIRContext *context)
      : NodePattern(context, "Unsqueeze") {}

  LogicalResult matchNode(onnx::NodeOp unsqueeze,
                          PatternRewriter &rewriter) const override {
    auto source =
        dyn_cast<RankedTensorType>(unsqueeze.getInputs()[0].getType());
    auto result = dyn_cast<ShapedType>(unsqueeze->getResult(0).getType());
    if (!source || !source.hasStaticShape() || !result ||
        (result.hasRank() && result.hasStaticShape()))
      return rewriter.notifyMatchFailure(unsqueeze, "nothing to refine");
    std::optional<SmallVector<int64_t>> axes = reduceAxes(unsqueeze);
    if (!axes)
      return rewriter.notifyMatchFailure(unsqueeze, "axes not constant");
    int64_t rank = source.getRank() + axes->size();
    SmallVector<bool> inserted(rank, false);
    for (int64_t axis : *axes) {
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank || inserted[axis])
        return rewriter.notifyMatchFailure(unsqueeze, "invalid axes");
      inserted[axis] = true;
    }
    SmallVector<int64_t> shape;
    ArrayRef<int64_t> dims = source.getShape();
    for (int64_t d = 0; d < rank; ++d)
      if (inserted[d]) {
        shape.push_back(1);
      } else {
        shape.push_back(dims.front());
        dims = dims.drop_front();
      }
    return refineResultType(
        unsqueeze, RankedTensorType::get(shape, source.getElementType()),
        rewriter);
  }
};
} // namespace

std::optional<SmallVector<int64_t>> raise::shapeConstant(Value value) {
  return readShapeConstant(value);
}

void raise::populateViewNormalizations(RewritePatternSet &patterns) {
  patterns
      .add<SliceOfInnerTranspose, SplitToSlices, GatherOfReshapeToSlice,
           GatherOfTranspose, GatherOfTrailingReshape, TransposeOfSplitReshape,
           SliceOfSplitAxis, SequenceAtOfSplit, TransposeOfSlice,
           TransposeOfTranspose, TurnedInputTranspose, CutOfColumn, CutOfCut,
           NoOpReshape, ReshapeOfReshape, TransposeOfUnitDims,
           InnerTransposeOfBatchView, RefineSliceType, RefineUnsqueezeType,
           ExpandByOnes, TileOfUnitDims, RefineTileType, RefineReshapeType,
           FoldStaticDimOfInput, FoldStaticDimsOfInput>(patterns.getContext());
  for (StringRef opType : {"Add", "Sub", "Mul", "Div", "Expand"})
    patterns.add<GatherOfElementwise>(patterns.getContext(), opType);
  for (StringRef opType : {"Reshape", "Expand"})
    patterns.add<DropBroadcastView>(patterns.getContext(), opType);
}
