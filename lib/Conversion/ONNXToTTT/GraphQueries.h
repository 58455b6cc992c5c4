//===- GraphQueries.h - dataflow questions on ONNX graphs -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Small, exporter-independent questions the raise asks of an `onnx.graph`:
// what a value is once layout-only nodes (Unsqueeze, Expand, Identity, ...)
// are looked through, which constant a value holds, which tensor a chain of
// Slice nodes cuts a chunk out of, and what a value depends on.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_GRAPHQUERIES_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_GRAPHQUERIES_H

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <tuple>

namespace mlir::ttt::raise {

/// The default-domain node of type `opType` that defines `value`, or null.
onnx::NodeOp nodeOf(Value value, StringRef opType);

/// `value` with nodes that only change its layout looked through: Identity,
/// Unsqueeze, Squeeze, Expand, Reshape, float-to-float Cast, a Concat of one
/// input and a Slice that keeps every element (`x[:, :]`). Such nodes
/// never change which numbers a value holds, only how they are indexed, so
/// the raise may compare values through them (shapes are checked by the
/// layer op's verifier afterwards).
Value skipLayout(Value value);

/// The single number a constant (Constant node or initializer, of any shape
/// with one element, possibly behind layout nodes) holds.
std::optional<double> scalarConstant(Value value);

/// The most elements intConstant reads: index tensors of a whole sequence's
/// writes fit, a model's int64 weights (or a mistaken shape) do not.
constexpr int64_t kMaxIntConstantElements = int64_t(1) << 24;

/// The integers of integer elements, dense or a resource blob (i32 or i64),
/// bools as 0 and 1: the one reader of a model's index and shape constants.
/// Nullopt past kMaxIntConstantElements elements.
std::optional<SmallVector<int64_t>> readInts(ElementsAttr elements);

/// The integers of a constant integer tensor (readInts of an initializer or
/// Constant, looking through layout nodes).
std::optional<SmallVector<int64_t>> intConstant(Value value);

/// The constant axes of a Reduce* node in either opset form: the `axes`
/// attribute (ReduceSum before opset 13, the other reductions before 18) or
/// the second input (from then on). None if it reduces all axes or they are
/// not constant.
/// An Unsqueeze spells its axes the same way (attribute before opset 13).
std::optional<SmallVector<int64_t>> reduceAxes(onnx::NodeOp reduce);

/// True if `value` is a constant tensor whose elements are all zero
/// (Constant, ConstantOfShape or initializer, behind layout nodes).
bool isZeroConstant(Value value);

/// If `value` is a permutation that swaps the two innermost axes, its input.
Value transposedInput(Value value);

/// True if `y` computes `x^T` (its two innermost axes swapped): a Transpose
/// of it, or the same products, sums and scalings of operands that are the
/// transposes of `x`'s, products in the other order (the normalization
/// moves transposes so). An operand whose two innermost dims are 1 (a norm
/// kept with keepdims) is its own transpose.
bool computesTransposeOf(Value y, Value x);

/// Matches `value = lhs <opType> rhs` for a commutative op in either order:
/// calls `match(a, b)` with the operands as given, then swapped.
bool matchCommutative(Value value, StringRef opType,
                      llvm::function_ref<bool(Value, Value)> match);

/// True if `axis` of a tensor of `rank` is the time axis: the one before the
/// feature axis, 2 of [B, H, T, D] and 1 of [B*H, T, D] (heads folded into
/// the batch). Without a rank, only 2 and -2 count.
bool isTimeAxis(int64_t axis, std::optional<int64_t> rank);

/// True if `slice` keeps every element: starts 0, ends past every axis it
/// cuts, unit steps.
bool isWholeSlice(onnx::NodeOp slice);

/// The constant single-axis cut of a Slice with unit steps: (axis, start,
/// end), the axis counted from 0.
std::optional<std::tuple<int64_t, int64_t, int64_t>>
singleAxisCut(onnx::NodeOp slice);

/// The tokens [start, start + size) of one axis of a buffer, every index of
/// its other axes.
struct IndexWindow {
  int64_t axis, start, size;
};

/// The window of `bufferShape` that the constant ScatterND `indices`
/// enumerate, in order (torch's `out[:, :, s:e] = o`): a box that spans
/// every axis but one. None if they enumerate anything else, or the whole
/// buffer.
std::optional<IndexWindow> indexWindow(Value indices,
                                       ArrayRef<int64_t> bufferShape);

/// If `mask` is `Trilu(x)` keeping the lower triangle and the diagonal
/// (`upper = 0`, the offset absent or zero): x.
Value lowerTriangleOf(Value mask);

/// The rank of `value`'s type, if it is ranked.
std::optional<int64_t> rankOf(Value value);

/// The static length of `value`'s time axis, if it has one.
std::optional<int64_t> staticTimeLength(Value value);

/// The static extent of `value`'s last axis, read through the dataflow where
/// its type does not say (a Loop body types its values `?x?x?x?`): a
/// product's is its right factor's, an elementwise result's the widest of its
/// operands', a carried value's its initial value's, a reshape's its target
/// shape's last constant.
std::optional<int64_t> lastDimOf(Value value, unsigned depth = 0);

/// `value` without the layout nodes and transposes in front of it: the tensor
/// it holds up to its layout (a full-batch layer's queries and output).
Value skipLayoutAndTransposes(Value value);

/// A chain of Slice nodes cutting a window out of one tensor, or one piece
/// of a Split along the time axis.
struct SliceChain {
  /// The tensor the outermost Slice reads.
  Value root;
  /// The Slice (or Split) node on the time axis (isTimeAxis), if any.
  onnx::NodeOp timeSlice;
  /// [start, end) on the time axis when both are constants.
  std::optional<int64_t> start, end;
  /// The index of a one-wide window on the last axis (a column of lr).
  std::optional<int64_t> column;
  /// Whether the window is every token of `root` (a full-batch layer reads
  /// the whole sequence; there is no time slice).
  bool whole = false;
};

/// Follows Slice nodes back from `value`; nullopt if `value` is neither a
/// Slice nor a Split piece. With `timeLast`, the time axis is the last one
/// (per-token momentum, [B, H, T] or [B*H, T]) and there is no column.
std::optional<SliceChain> sliceChain(Value value, bool timeLast = false);

/// True if two cuts take the same tokens: equal constant bounds, or bounds
/// computed by the same nodes, or both every token.
bool sameWindow(const SliceChain &a, const SliceChain &b);

class DependenceCache;

/// What a full-batch step reads whole (its queries, keys, values, rates):
/// tensors that none of the step's weights, before or after the step, is
/// computed into, so that a residual `k W - v` is no tensor of values.
struct WholeSequences {
  DependenceCache *deps = nullptr;
  SmallVector<Value> weights;

  bool holds(Value value) const;
};

/// The tokens `value` holds as a window: a cut of the time axis (sliceChain
/// with a time slice), or with `whole`, every token of a tensor `whole`
/// holds (`value` itself, or one column of it). Nullopt otherwise: a chunked
/// layer reads cuts, a full-batch layer whole sequences.
std::optional<SliceChain> tokenWindow(Value value, const WholeSequences *whole,
                                      bool timeLast = false);

/// A run-time extent `Shape(tensor)[axis]`: a Gather of one constant index
/// from a Shape node (maybe cast, maybe unsqueezed).
struct ShapeDim {
  Value tensor;
  int64_t axis;
};

/// The extent `value` reads, if it is `Shape(tensor)[axis]` (`tensor` the
/// Shape's input, the axis counted from 0).
std::optional<ShapeDim> shapeDim(Value value);

/// True if `a` and `b` have the same extent on `axis` for every input the
/// model accepts: the same static size, the same tensor, or graph inputs
/// that declare the axis with one symbolic name.
bool sameExtent(Value a, Value b, int64_t axis);

/// True if `value` is the number of tokens of `tensor`'s time axis: its
/// static length, or `Shape(tensor)[axis]` (maybe cast).
bool isTimeLengthOf(Value value, Value tensor);

/// Whether a value is computed from another, transitively (operands of
/// defining ops, and values of enclosing graphs that nested subgraphs read).
/// A Shape or Size node reads no numbers, so what it reads does not count.
///
/// Queries name few sources (graph inputs, fast weights, slice heads) and
/// many values, so the cache keeps, per source, the values computed from it:
/// one iterative walk over its users, linear in the graph and without
/// recursion, however deep the graph.
class DependenceCache {
public:
  /// True if `value` is computed (transitively) from `source`.
  bool dependsOn(Value value, Value source);

private:
  const llvm::DenseSet<Value> &computedFrom(Value source);
  llvm::DenseMap<Value, llvm::DenseSet<Value>> reached;
};

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_GRAPHQUERIES_H
