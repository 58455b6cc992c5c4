//===- NormalizeAssembly.cpp - chunk outputs joined by one Concat ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// However the chunk outputs are put together - concatenated after a layout
// change, stacked and reshaped, or written into a preallocated zero buffer -
// the result becomes one Concat of the chunk outputs along the axis they
// tile.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// The `axis` attribute of `node`, in [0, rank) of its result.
static std::optional<int64_t> axisOf(onnx::NodeOp node) {
  std::optional<int64_t> rank = rankOf(node->getResult(0));
  auto attr = dyn_cast_or_null<IntegerAttr>(node.getONNXAttr("axis"));
  if (!rank || !attr)
    return std::nullopt;
  int64_t axis = attr.getInt() < 0 ? attr.getInt() + *rank : attr.getInt();
  if (axis < 0 || axis >= *rank)
    return std::nullopt;
  return axis;
}

static Value createConcat(PatternRewriter &rewriter, Location loc,
                          ValueRange parts, int64_t axis, Type type) {
  onnx::OnnxBuilder b(rewriter, loc, elementTypeOf(type));
  return b.node("Concat", parts, type, {b.attr("axis", axis)});
}

/// The chunk `part` stacks along `axis`: o for Unsqueeze(o, axis), or for a
/// Reshape of a static o that inserts a 1 there (torch's `out[i] = o`
/// writes `o.reshape(1, ..)`); null otherwise.
static Value stackedChunk(Value part, int64_t axis) {
  if (onnx::NodeOp unsqueeze = nodeOf(part, "Unsqueeze")) {
    std::optional<SmallVector<int64_t>> axes = reduceAxes(unsqueeze);
    std::optional<int64_t> rank = rankOf(part);
    if (!axes || axes->size() != 1 || !rank ||
        ((*axes)[0] < 0 ? (*axes)[0] + *rank : (*axes)[0]) != axis)
      return nullptr;
    return unsqueeze.getInputs()[0];
  }
  onnx::NodeOp reshape = nodeOf(part, "Reshape");
  if (!reshape)
    return nullptr;
  Value chunk = reshape.getInputs()[0];
  auto from = dyn_cast<RankedTensorType>(chunk.getType());
  auto to = dyn_cast<RankedTensorType>(part.getType());
  if (!from || !to || !from.hasStaticShape() || !to.hasStaticShape() ||
      to.getRank() != from.getRank() + 1 || axis > from.getRank() ||
      to.getDimSize(axis) != 1)
    return nullptr;
  SmallVector<int64_t> inserted(from.getShape());
  inserted.insert(inserted.begin() + axis, 1);
  return ArrayRef<int64_t>(inserted) == to.getShape() ? chunk : Value();
}

namespace {
/// Concat(Transpose_p(o_0), .., Transpose_p(o_n)) -> Transpose_p(Concat(o_i)).
struct ConcatOfTransposes : NodePattern {
  explicit ConcatOfTransposes(MLIRContext *context)
      : NodePattern(context, "Concat") {}

  LogicalResult matchNode(onnx::NodeOp concat,
                          PatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = axisOf(concat);
    if (!axis || concat.getInputs().size() < 2)
      return rewriter.notifyMatchFailure(concat, "no axis");
    std::optional<int64_t> rank = rankOf(concat->getResult(0));
    std::optional<SmallVector<int64_t>> perm;
    SmallVector<Value> inner;
    for (Value part : concat.getInputs()) {
      onnx::NodeOp transpose = nodeOf(part, "Transpose");
      std::optional<SmallVector<int64_t>> p =
          transpose ? transposePerm(transpose) : std::nullopt;
      if (!p || (perm && *p != *perm))
        return rewriter.notifyMatchFailure(concat, "inputs are not equally "
                                                   "transposed");
      perm = p;
      inner.push_back(transpose.getInputs()[0]);
    }
    if (static_cast<int64_t>(perm->size()) != *rank)
      return rewriter.notifyMatchFailure(concat, "rank mismatch");
    // Chunks transposed in their innermost axes are products read the other
    // way round (TransposeOfMatMul); only layout changes move out, or any
    // change that a transpose of the joined value then undoes (dynamo's
    // `out[:, :, s:e] = o_c` on a [B, D, T] buffer, written on [T, D, B]).
    bool undone =
        concat->hasOneUse() &&
        nodeOf(*concat->getUsers().begin()->getResults().begin(), "Transpose");
    if (perm->back() != *rank - 1 && !undone)
      return rewriter.notifyMatchFailure(concat, "moves the feature axis");
    // An innermost swap of products stays where it is: TransposeOfMatMul
    // turns each product round, and the layout transpose after the join
    // then reads a time-axis Concat of `x W^T` chunks.
    bool innerSwap = llvm::equal(*perm, swapInnerPerm(*rank));
    if (perm->back() != *rank - 1 && innerSwap &&
        llvm::all_of(concat.getInputs(), [&](Value part) {
          onnx::NodeOp transpose = nodeOf(part, "Transpose");
          onnx::NodeOp matmul = nodeOf(transpose.getInputs()[0], "MatMul");
          return matmul && productTurnsRound(matmul, transpose);
        }))
      return rewriter.notifyMatchFailure(concat, "the parts are products that "
                                                 "turn round");
    // The joined value before the transpose: its dim perm[i] is dim i.
    SmallVector<int64_t> inverse(*rank);
    for (auto [i, p] : llvm::enumerate(*perm))
      inverse[p] = i;
    Type type = concat->getResult(0).getType();
    Location loc = concat.getLoc();
    Value joined = createConcat(rewriter, loc, inner, (*perm)[*axis],
                                permutedType(type, inverse));
    rewriter.replaceOp(concat, createTranspose(rewriter, loc, joined, *perm));
    return success();
  }
};

/// Concat(.., Concat(o_i, a), .., a) -> Concat(.., o_i, .., a), the inner
/// join read by nothing else: the whole chunks joined (a stack, viewed back)
/// and a shorter last chunk after them are one run of chunks.
struct ConcatOfConcat : NodePattern {
  explicit ConcatOfConcat(MLIRContext *context)
      : NodePattern(context, "Concat") {}

  LogicalResult matchNode(onnx::NodeOp concat,
                          PatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = axisOf(concat);
    if (!axis)
      return rewriter.notifyMatchFailure(concat, "no axis");
    SmallVector<Value> parts;
    bool flattened = false;
    for (Value part : concat.getInputs()) {
      onnx::NodeOp inner = nodeOf(part, "Concat");
      if (inner && part.hasOneUse() && axisOf(inner) == axis) {
        llvm::append_range(parts, inner.getInputs());
        flattened = true;
        continue;
      }
      parts.push_back(part);
    }
    if (!flattened)
      return rewriter.notifyMatchFailure(concat, "joins no join of its axis");
    rewriter.replaceOp(concat,
                       createConcat(rewriter, concat.getLoc(), parts, *axis,
                                    concat->getResult(0).getType()));
    return success();
  }
};

/// Transpose(Concat(o_i)) of the innermost axes -> Concat(o_i^T): chunk
/// outputs computed feature-major (`W1 h^T`, `[B, D, T]` chunks of a buffer
/// that is transposed at the end) are read as the products they transpose
/// to (TransposeOfMatMul).
struct TransposeOfConcat : NodePattern {
  explicit TransposeOfConcat(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp concat = nodeOf(transpose.getInputs()[0], "Concat");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    std::optional<int64_t> axis = concat ? axisOf(concat) : std::nullopt;
    if (!axis || !perm || perm->size() < 2 ||
        !llvm::equal(*perm, swapInnerPerm(perm->size())))
      return rewriter.notifyMatchFailure(transpose, "not x^T of a Concat");
    // Only products move the transpose on (they read the other way round).
    if (!llvm::all_of(concat.getInputs(), [&](Value part) {
          onnx::NodeOp matmul = nodeOf(part, "MatMul");
          return matmul && productTurnsRound(matmul, transpose);
        }))
      return rewriter.notifyMatchFailure(transpose, "a part is no product "
                                                    "that turns round");
    Location loc = transpose.getLoc();
    SmallVector<Value> parts;
    for (Value part : concat.getInputs())
      parts.push_back(createTranspose(rewriter, loc, part, *perm));
    int64_t moved = (*perm)[*axis];
    rewriter.replaceOp(transpose,
                       createConcat(rewriter, loc, parts, moved,
                                    transpose->getResult(0).getType()));
    return success();
  }
};

/// Success if `target` is a static chunk of `chunk`'s static shape stacked
/// on `axis` and flattened with its dims after the axis reshaped (the dims
/// before it kept, the element count after it kept).
static LogicalResult mergesTrailingDims(RankedTensorType chunk,
                                        RankedTensorType target, int64_t axis) {
  if (!chunk.hasStaticShape() || !target.hasStaticShape() ||
      axis >= chunk.getRank() || axis >= target.getRank() ||
      chunk.getShape().take_front(axis) != target.getShape().take_front(axis))
    return failure();
  int64_t chunkRest = 1, targetRest = 1;
  for (int64_t d : chunk.getShape().drop_front(axis + 1))
    chunkRest *= d;
  for (int64_t d : target.getShape().drop_front(axis + 1))
    targetRest *= d;
  return success(chunkRest == targetRest);
}

/// Reshape(Concat(Unsqueeze(o_i, a), a) -> [.., N * C, ..]) (a stack of the
/// chunks, flattened) -> Concat(o_i, a).
struct StackToConcat : NodePattern {
  explicit StackToConcat(MLIRContext *context)
      : NodePattern(context, "Reshape") {}

  LogicalResult matchNode(onnx::NodeOp reshape,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp concat = nodeOf(reshape.getInputs()[0], "Concat");
    auto type = dyn_cast<RankedTensorType>(reshape->getResult(0).getType());
    if (!concat || !type || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(reshape, "not a static Concat");
    std::optional<int64_t> axis = axisOf(concat);
    std::optional<int64_t> rank = rankOf(concat->getResult(0));
    if (!axis || !rank || *rank < type.getRank() + 1)
      return rewriter.notifyMatchFailure(reshape, "not a flattened stack");
    SmallVector<Value> chunks;
    int64_t total = 0;
    bool reshapeChunks = false;
    for (Value part : concat.getInputs()) {
      Value chunk = stackedChunk(part, *axis);
      if (!chunk)
        return rewriter.notifyMatchFailure(reshape, "not a stack");
      auto chunkType = dyn_cast<RankedTensorType>(chunk.getType());
      if (!chunkType || chunkType.getRank() != type.getRank() ||
          chunkType.isDynamicDim(*axis)) {
        // The reshape may also merge the chunks' static trailing dims
        // (`[B, N, C, H, D]` to `[B, T, H * D]`): the join is reshaped.
        if (chunkType &&
            succeeded(mergesTrailingDims(chunkType, type, *axis)) &&
            (chunks.empty() || reshapeChunks)) {
          reshapeChunks = true;
          total += chunkType.getDimSize(*axis);
          chunks.push_back(chunk);
          continue;
        }
        return rewriter.notifyMatchFailure(reshape, "a chunk's length is not "
                                                    "static");
      }
      // The other dims are the target's. A dim the type leaves open is too
      // when it is the only one (the reshape keeps the element count), or
      // when every open one is 1 in the target.
      SmallVector<int64_t> open;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (d == *axis)
          continue;
        if (chunkType.isDynamicDim(d))
          open.push_back(d);
        else if (chunkType.getDimSize(d) != type.getDimSize(d))
          return rewriter.notifyMatchFailure(reshape, "the reshape does more "
                                                      "than merge two axes");
      }
      if (open.size() > 1 && llvm::any_of(open, [&](int64_t d) {
            return type.getDimSize(d) != 1;
          }))
        return rewriter.notifyMatchFailure(reshape, "a chunk's dims are not "
                                                    "known to be the target's");
      total += chunkType.getDimSize(*axis);
      chunks.push_back(chunk);
    }
    if (*axis >= type.getRank() || total != type.getDimSize(*axis))
      return rewriter.notifyMatchFailure(reshape, "the chunks do not fill the "
                                                  "merged axis");
    Location loc = reshape.getLoc();
    if (reshapeChunks) {
      // Join the chunks as they are, then reshape the join.
      auto chunkType = cast<RankedTensorType>(chunks.front().getType());
      for (Value chunk : chunks) {
        auto other = cast<RankedTensorType>(chunk.getType());
        for (int64_t d = 0; d < chunkType.getRank(); ++d)
          if (d != *axis && other.getDimSize(d) != chunkType.getDimSize(d))
            return rewriter.notifyMatchFailure(reshape,
                                               "the chunks differ in shape");
      }
      SmallVector<int64_t> joined(chunkType.getShape());
      joined[*axis] = total;
      Value concat =
          createConcat(rewriter, loc, chunks, *axis,
                       RankedTensorType::get(joined, type.getElementType()));
      onnx::OnnxBuilder b(rewriter, loc, type.getElementType());
      Value target = b.i64s(type.getShape());
      rewriter.replaceOp(reshape, b.node("Reshape", {concat, target}, type));
      return success();
    }
    rewriter.replaceOp(reshape,
                       createConcat(rewriter, loc, chunks, *axis, type));
    return success();
  }
};

/// Transpose(Concat(stack of o_i on a), p) -> a stack of Transpose(o_i) on
/// the axis a moves to: chunk outputs stacked on a leading axis
/// (`[N, B, H, C, D]`, ttt-lm-pytorch's scan) and permuted to
/// `[B, N, C, H, D]` before the reshape that joins the chunks.
struct TransposeOfStack : NodePattern {
  explicit TransposeOfStack(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp concat = nodeOf(transpose.getInputs()[0], "Concat");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    std::optional<int64_t> axis = concat ? axisOf(concat) : std::nullopt;
    auto result = dyn_cast<RankedTensorType>(transpose->getResult(0).getType());
    if (!axis || !perm || !result || !result.hasStaticShape() ||
        concat.getInputs().size() < 2)
      return rewriter.notifyMatchFailure(transpose, "not of a static Concat");
    SmallVector<Value> chunks;
    for (Value part : concat.getInputs()) {
      Value chunk = stackedChunk(part, *axis);
      if (!chunk)
        return rewriter.notifyMatchFailure(transpose, "not a stack");
      chunks.push_back(chunk);
    }
    auto at = llvm::find(*perm, *axis);
    if (!isPermutation(*perm) || at == perm->end() ||
        perm->size() != static_cast<size_t>(result.getRank()))
      return rewriter.notifyMatchFailure(transpose, "the perm loses the axis");
    int64_t moved = at - perm->begin();
    SmallVector<int64_t> rest;
    for (int64_t a : *perm)
      if (a != *axis)
        rest.push_back(a > *axis ? a - 1 : a);
    Location loc = transpose.getLoc();
    onnx::OnnxBuilder b(rewriter, loc, result.getElementType());
    SmallVector<int64_t> shape(result.getShape());
    shape[moved] = 1;
    Value target = b.i64s(shape);
    SmallVector<Value> parts;
    for (Value chunk : chunks) {
      Value turned = createTranspose(rewriter, loc, chunk, rest);
      parts.push_back(
          b.node("Reshape", {turned, target},
                 RankedTensorType::get(shape, result.getElementType())));
    }
    rewriter.replaceOp(transpose,
                       createConcat(rewriter, loc, parts, moved, result));
    return success();
  }
};

/// A chain of ScatterND writes into a zero buffer, each of one window of
/// axis `t` (all of every other axis), whose windows tile the axis -> a
/// Concat of the windows in order.
struct ScatterToConcat : NodePattern {
  ScatterToConcat(MLIRContext *context, StringRef opType)
      : NodePattern(context, opType) {}

  struct Window {
    int64_t axis, start, size;
    Value update;
  };

  LogicalResult matchNode(onnx::NodeOp scatter,
                          PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(scatter->getResult(0).getType());
    if (!type || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(scatter, "not static");
    SmallVector<Window> windows;
    Value buffer = scatter->getResult(0);
    auto writeOf = [](Value value) {
      onnx::NodeOp write = nodeOf(value, "ScatterND");
      return write ? write : nodeOf(value, "ScatterElements");
    };
    while (onnx::NodeOp write = writeOf(buffer)) {
      auto reduction =
          dyn_cast_or_null<StringAttr>(write.getONNXAttr("reduction"));
      std::optional<Window> window;
      if (write.getInputs().size() == 3 &&
          (!reduction || reduction.getValue() == "none"))
        window = write.getOpType() == "ScatterND"
                     ? windowOf(write, type)
                     : elementsWindowOf(write, type);
      if (!window || (!windows.empty() && window->axis != windows[0].axis))
        return rewriter.notifyMatchFailure(scatter, "a write is not a window "
                                                    "of one axis");
      windows.push_back(*window);
      buffer = write.getInputs()[0];
      // The dynamo exporter copies the buffer between writes.
      while (onnx::NodeOp copy = nodeOf(buffer, "Identity"))
        buffer = copy.getInputs()[0];
    }
    // The windows must tile the axis: then the writes replace every element
    // of the buffer, whatever it held (zeros, or torch.empty's garbage).
    if (windows.size() < 2)
      return rewriter.notifyMatchFailure(scatter, "not writes of chunks");
    llvm::sort(windows, [](const Window &a, const Window &b) {
      return a.start < b.start;
    });
    int64_t axis = windows[0].axis, next = 0;
    SmallVector<Value> parts;
    for (const Window &window : windows) {
      if (window.start != next)
        return rewriter.notifyMatchFailure(scatter, "the windows do not tile "
                                                    "the axis");
      next += window.size;
      parts.push_back(window.update);
    }
    if (next != type.getDimSize(axis))
      return rewriter.notifyMatchFailure(scatter, "the windows do not cover "
                                                  "the axis");
    rewriter.replaceOp(
        scatter, createConcat(rewriter, scatter.getLoc(), parts, axis, type));
    return success();
  }

private:
  /// The window a ScatterElements write covers: an update that spans every
  /// axis of the buffer but its `axis`, with the constant indices
  /// `start + j` at its position j along that axis (torch's
  /// `select_scatter` / `slice_scatter`).
  static std::optional<Window> elementsWindowOf(onnx::NodeOp write,
                                                RankedTensorType buffer) {
    Value update = write.getInputs()[2];
    auto updateType = dyn_cast<RankedTensorType>(update.getType());
    auto indexType = dyn_cast<RankedTensorType>(write.getInputs()[1].getType());
    std::optional<SmallVector<int64_t>> indices =
        intConstant(write.getInputs()[1]);
    int64_t rank = buffer.getRank();
    int64_t axis = intAttr(write, "axis").value_or(0);
    if (axis < 0)
      axis += rank;
    if (!updateType || !indexType || !indices || axis < 0 || axis >= rank ||
        !updateType.hasStaticShape() ||
        indexType.getShape() != updateType.getShape() ||
        updateType.getRank() != rank)
      return std::nullopt;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && updateType.getDimSize(d) != buffer.getDimSize(d))
        return std::nullopt;
    int64_t size = updateType.getDimSize(axis), inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= updateType.getDimSize(d);
    if (indices->empty() || size == 0)
      return std::nullopt;
    int64_t start = (*indices)[0];
    for (auto [flat, index] : llvm::enumerate(*indices))
      if (index != start + static_cast<int64_t>(flat / inner) % size)
        return std::nullopt;
    if (start < 0 || start + size > buffer.getDimSize(axis))
      return std::nullopt;
    return Window{axis, start, size, update};
  }

  /// The window a write covers: its indices enumerate a box of the buffer
  /// that spans every axis but one.
  static std::optional<Window> windowOf(onnx::NodeOp write,
                                        RankedTensorType buffer) {
    std::optional<IndexWindow> window =
        indexWindow(write.getInputs()[1], buffer.getShape());
    if (!window)
      return std::nullopt;
    return Window{window->axis, window->start, window->size,
                  write.getInputs()[2]};
  }
};
/// Reshape(ConcatFromSequence(s, axis a, new_axis 1), t) -> Reshape(
/// ConcatFromSequence(s, axis a), t): stacking the chunks at a and joining
/// them along a lay out the same elements in the same order, so any reshape
/// that does not copy a dim at or after a (a 0 in t) reads them the same.
/// The elements must have more than a dims (a ConcatFromSequence along a
/// needs it); where their type does not say, the raise, which keeps a
/// normalized graph only when it replaces the join by a layer whose chunks
/// it read with a time axis a, does.
struct StackedSequenceToConcat : NodePattern {
  explicit StackedSequenceToConcat(MLIRContext *context)
      : NodePattern(context, "Reshape") {}

  LogicalResult matchNode(onnx::NodeOp reshape,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp stack = nodeOf(reshape.getInputs()[0], "ConcatFromSequence");
    if (!stack || intAttr(stack, "new_axis").value_or(0) != 1 ||
        !stack->getResult(0).hasOneUse() || reshape.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(reshape, "not a reshaped stack");
    std::optional<int64_t> axis = intAttr(stack, "axis");
    auto sequence =
        dyn_cast<onnx::SequenceType>(stack.getInputs()[0].getType());
    auto element = sequence
                       ? dyn_cast<RankedTensorType>(sequence.getElementType())
                       : RankedTensorType();
    if (!axis || *axis < 0 || (element && *axis >= element.getRank()))
      return rewriter.notifyMatchFailure(reshape, "not stacked inside the "
                                                  "elements");
    std::optional<SmallVector<int64_t>> target =
        intConstant(reshape.getInputs()[1]);
    if (!target)
      return rewriter.notifyMatchFailure(reshape, "target not constant");
    bool zeroCopies = !reshape.getONNXAttr("allowzero");
    for (auto [d, size] : llvm::enumerate(*target))
      if (size == 0 && zeroCopies && static_cast<int64_t>(d) >= *axis)
        return rewriter.notifyMatchFailure(reshape, "copies a dim the stack "
                                                    "moved");
    onnx::OnnxBuilder b(rewriter, stack.getLoc(),
                        elementTypeOf(stack->getResult(0).getType()));
    Value joined =
        b.node("ConcatFromSequence", stack.getInputs(),
               stack->getResult(0).getType(), {b.attr("axis", *axis)});
    rewriter.modifyOpInPlace(reshape, [&] { reshape->setOperand(0, joined); });
    rewriter.eraseOp(stack);
    return success();
  }
};

/// Transpose(ConcatFromSequence(s, axis 0, new_axis 1), perm) where perm
/// moves axis 0 to a and keeps the others in order -> ConcatFromSequence(s,
/// axis a, new_axis 1): the stack of the elements at a. (A Loop's scan
/// output is their stack at 0.)
struct TransposeOfStackedSequence : NodePattern {
  explicit TransposeOfStackedSequence(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    onnx::NodeOp stack = nodeOf(transpose.getInputs()[0], "ConcatFromSequence");
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    if (!stack || !perm || intAttr(stack, "new_axis").value_or(0) != 1 ||
        intAttr(stack, "axis").value_or(-1) != 0 ||
        !transpose.getONNXAttr("perm"))
      return rewriter.notifyMatchFailure(transpose, "not a moved stack");
    // perm = [1, .., a, 0, a + 1, ..]: result dim a is the stacked one.
    auto at = llvm::find(*perm, 0);
    int64_t a = at - perm->begin();
    SmallVector<int64_t> rest(perm->begin(), at);
    rest.append(at + 1, perm->end());
    if (!llvm::equal(rest, llvm::seq<int64_t>(1, perm->size())))
      return rewriter.notifyMatchFailure(transpose, "reorders the elements");
    onnx::OnnxBuilder b(rewriter, transpose.getLoc(),
                        elementTypeOf(transpose->getResult(0).getType()));
    rewriter.replaceOp(transpose,
                       b.node("ConcatFromSequence", stack.getInputs(),
                              transpose->getResult(0).getType(),
                              {b.attr("axis", a), b.attr("new_axis", 1)}));
    return success();
  }
};

/// ConcatFromSequence(s, axis a) whose every element is Transpose_p(o_i) ->
/// Transpose_p(ConcatFromSequence(s', axis p[a])) with s' the o_i: chunk
/// outputs turned back to [B, C, H, D] one by one (`o.transpose(1, 2)` in
/// the chunk loop) are the turn of the joined outputs. The elements are
/// appended after the loop, or inside a Loop to a sequence it carries from
/// SequenceEmpty.
struct SequenceOfTransposes : NodePattern {
  explicit SequenceOfTransposes(MLIRContext *context)
      : NodePattern(context, "ConcatFromSequence") {}

  LogicalResult matchNode(onnx::NodeOp concat,
                          PatternRewriter &rewriter) const override {
    if (intAttr(concat, "new_axis").value_or(0) != 0)
      return rewriter.notifyMatchFailure(concat, "a stack");
    std::optional<int64_t> attrAxis = intAttr(concat, "axis");
    SmallVector<onnx::NodeOp> inserts;
    if (!attrAxis || failed(collectInserts(concat.getInputs()[0], inserts)) ||
        inserts.empty())
      return rewriter.notifyMatchFailure(concat, "not a sequence appended to "
                                                 "from empty");
    std::optional<SmallVector<int64_t>> perm;
    for (onnx::NodeOp insert : inserts) {
      onnx::NodeOp transpose = nodeOf(insert.getInputs()[1], "Transpose");
      std::optional<SmallVector<int64_t>> p =
          transpose && transpose->hasOneUse() ? transposePerm(transpose)
                                              : std::nullopt;
      if (!p || (perm && *p != *perm))
        return rewriter.notifyMatchFailure(concat, "the elements are not "
                                                   "equally transposed");
      perm = p;
    }
    int64_t rank = perm->size();
    int64_t axis = *attrAxis < 0 ? *attrAxis + rank : *attrAxis;
    if (axis < 0 || axis >= rank || rank < 2)
      return rewriter.notifyMatchFailure(concat, "axis out of range");
    // Only the layout change moves out (it keeps the feature axis last); an
    // element's swap of its innermost axes stays with it: `(W q^T)^T` is a
    // product read as `q W^T`. perm = swap . layout, layout = swap . perm.
    SmallVector<int64_t> swap = swapInnerPerm(rank);
    bool turned = perm->back() != rank - 1;
    if (turned) {
      if (perm->back() != rank - 2)
        return rewriter.notifyMatchFailure(concat, "moves the feature axis");
      SmallVector<int64_t> layout(rank);
      for (int64_t i = 0; i < rank; ++i)
        layout[i] = swap[(*perm)[i]];
      if (llvm::equal(layout, llvm::seq<int64_t>(0, rank)))
        return rewriter.notifyMatchFailure(concat, "no layout change");
      perm = layout;
    }
    for (onnx::NodeOp insert : inserts) {
      auto transpose = insert.getInputs()[1].getDefiningOp<onnx::NodeOp>();
      Value element = transpose.getInputs()[0];
      rewriter.setInsertionPoint(transpose);
      if (turned)
        element = createTranspose(rewriter, transpose.getLoc(), element, swap);
      rewriter.modifyOpInPlace(insert, [&] { insert->setOperand(1, element); });
      rewriter.eraseOp(transpose);
    }
    rewriter.setInsertionPoint(concat);
    SmallVector<int64_t> inverse(rank);
    for (auto [i, d] : llvm::enumerate(*perm))
      inverse[d] = i;
    Type type = concat->getResult(0).getType();
    onnx::OnnxBuilder b(rewriter, concat.getLoc(), elementTypeOf(type));
    Value joined =
        b.node("ConcatFromSequence", concat.getInputs(),
               permutedType(type, inverse), {b.attr("axis", (*perm)[axis])});
    rewriter.replaceOp(
        concat, createTranspose(rewriter, concat.getLoc(), joined, *perm));
    return success();
  }

private:
  /// The SequenceInserts (two inputs, appending) that build `sequence`
  /// from SequenceEmpty, outside and inside a Loop, each the only reader of
  /// the sequence before it. The elements must be unranked in the sequence
  /// type, which then holds for the untransposed ones too.
  static LogicalResult collectInserts(Value sequence,
                                      SmallVectorImpl<onnx::NodeOp> &inserts) {
    while (true) {
      auto type = dyn_cast<onnx::SequenceType>(sequence.getType());
      if (!type || !isa<UnrankedTensorType>(type.getElementType()) ||
          !sequence.hasOneUse())
        return failure();
      if (nodeOf(sequence, "SequenceEmpty"))
        return success();
      if (onnx::NodeOp insert = nodeOf(sequence, "SequenceInsert")) {
        if (insert.getInputs().size() != 2)
          return failure();
        inserts.push_back(insert);
        sequence = insert.getInputs()[0];
        continue;
      }
      auto loop = sequence.getDefiningOp<onnx::NodeOp>();
      if (!loop || !loop.isDefaultDomain() || loop.getOpType() != "Loop" ||
          loop->getNumRegions() != 1 || loop->getRegion(0).empty())
        return failure();
      unsigned index = cast<OpResult>(sequence).getResultNumber();
      Block &body = loop->getRegion(0).front();
      auto yield = dyn_cast<onnx::YieldOp>(body.getTerminator());
      unsigned carried = loop.getInputs().size() - 2;
      if (index >= carried || !yield || yield.getNumOperands() <= index + 1 ||
          body.getNumArguments() != carried + 2)
        return failure();
      BlockArgument in = body.getArgument(index + 2);
      onnx::NodeOp insert =
          nodeOf(yield.getOperand(index + 1), "SequenceInsert");
      if (!insert || insert.getInputs().size() != 2 ||
          insert.getInputs()[0] != in || !in.hasOneUse() ||
          !insert->hasOneUse() ||
          !nodeOf(loop.getInputs()[index + 2], "SequenceEmpty") ||
          !loop.getInputs()[index + 2].hasOneUse())
        return failure();
      inserts.push_back(insert);
      return success();
    }
  }
};
} // namespace

void raise::populateAssemblyNormalizations(RewritePatternSet &patterns) {
  patterns.add<ConcatOfTransposes, ConcatOfConcat, TransposeOfConcat,
               TransposeOfStack, StackToConcat, StackedSequenceToConcat,
               TransposeOfStackedSequence, SequenceOfTransposes>(
      patterns.getContext());
  for (StringRef opType : {"ScatterND", "ScatterElements"})
    patterns.add<ScatterToConcat>(patterns.getContext(), opType);
}
