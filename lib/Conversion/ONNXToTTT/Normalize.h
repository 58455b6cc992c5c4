//===- Normalize.h - ONNX idioms to one canonical spelling ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exporters spell the same computation many ways: a chunk is a Slice, a
// Split piece or a Gather on a reshape; a contraction is a MatMul, an Einsum
// or a MatMul of transposes; chunk outputs are joined by Concat, by a stack
// and a reshape, or scattered into a zero buffer. The normalization rewrites
// each idiom into the one spelling the raise reads, by small patterns that
// never change what the graph computes:
//
//  constants     integer arithmetic on constants, and
//                the transpose of a constant, -> Constant
//  views         Split -> Slice per piece; Gather(Reshape to [.., N, C, ..], i)
//                -> Slice; Transpose(Slice(x)) -> Slice(Transpose(x));
//                Transpose(Transpose(x)) -> one Transpose (or none); a view
//                that only broadcasts a stored tensor, read by ops that
//                broadcast by themselves -> the tensor
//  contractions  Einsum with one contracted index -> MatMul and Transposes;
//                (A B)^T -> B^T A^T; a transpose of a sum, difference,
//                negation or scaling -> the same of the transposes
//  assembly      Concat of equally transposed chunks -> Transpose of a
//                Concat; Reshape(Concat(Unsqueeze(o_i))) (a stack) ->
//                Concat; ScatterND of windows into zeros that tile an axis
//                -> Concat; Reshape(ConcatFromSequence(new_axis 1)) -> a
//                ConcatFromSequence on the stacked axis
//  loops         scan outputs -> carried sequences; SequenceAt(SplitToSequence)
//                and Gather(Reshape, i) at the iteration counter -> Slice
//  types         If on a constant -> the branch it takes; a node whose inputs
//                fix its shape gets that static type
//
// Equal nodes the patterns create are merged afterwards, so that a value
// written in two ways becomes one value.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_NORMALIZE_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_NORMALIZE_H

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"
#include "llvm/ADT/Hashing.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt::raise {

void populateConstantNormalizations(RewritePatternSet &patterns);
/// Integer arithmetic on constants and on the shapes of statically typed
/// values (not only of graph inputs) folded into constants.
void populateShapeArithmeticFolding(RewritePatternSet &patterns);
void populateViewNormalizations(RewritePatternSet &patterns);
void populateContractionNormalizations(RewritePatternSet &patterns);
void populateAssemblyNormalizations(RewritePatternSet &patterns);
void populateArithmeticNormalizations(RewritePatternSet &patterns);
void populateLoopNormalizations(RewritePatternSet &patterns);
void populateTypeNormalizations(RewritePatternSet &patterns);

/// Integer shape arithmetic folded into constants (populateShapeArithmetic-
/// Folding), the static types that fixes, If on a constant resolved. What a
/// graph exported with run-time shape computations needs before its nodes can
/// be read with static types.
void foldShapeArithmetic(onnx::GraphOp graph);

/// Marks a copy of a graph whose inputs' run-time sizes were fixed to read
/// it for layers: the values it yields may take static types too.
inline constexpr llvm::StringLiteral kSizesFixedAttr = "ttt.sizes_fixed";

/// The sizes `fixSizes` gives run-time dims: a batch (dim 0) of 2, any
/// other dim 64 (a multiple of the usual chunk sizes).
inline constexpr int64_t kFixedBatch = 2, kFixedLength = 64;

/// Gives every run-time dim of `graph`'s inputs a size (kFixedBatch,
/// kFixedLength), marks the graph kSizesFixedAttr and folds the shape
/// arithmetic that fixes. Returns the dims fixed, as `name[i] = n`; empty
/// (and the graph unchanged) when every input has a static shape.
SmallVector<std::string> fixSizes(onnx::GraphOp graph);

/// Rewrites every idiom of `graph` (and of its subgraphs) into the canonical
/// spelling, then merges equal nodes.
void normalizeGraph(onnx::GraphOp graph);

/// The type and element bytes of a constant (initializer or Constant node,
/// dense or a resource blob); nullopt for a splat or an unreadable one.
std::optional<std::pair<ShapedType, ArrayRef<char>>> constantBytes(Value value);

/// The elements `bytes` of a static tensor of `type`, laid out as its
/// transpose by `perm` (result dim i is dim perm[i]); nullopt if the sizes do
/// not fit.
std::optional<std::vector<char>>
permutedBytes(ShapedType type, ArrayRef<char> bytes, ArrayRef<int64_t> perm);

/// The layout of a static tensor whose two innermost axes are swapped:
/// `batch` matrices of `rows` x `cols` elements of `width` bytes. Reads the
/// transpose in place, without a copy of a weight that may be gigabytes.
struct InnerTransposeView {
  int64_t batch, rows, cols;
  size_t width;

  /// Nullopt unless `bytes` are all the elements of a static `type` of rank
  /// 2 or more with whole-byte elements.
  static std::optional<InnerTransposeView> of(ShapedType type,
                                              ArrayRef<char> bytes);

  /// Byte offset in the original of the element at flat position `flat` of
  /// the transpose ([batch, cols, rows]).
  size_t offsetOfTurned(int64_t flat) const {
    int64_t b = flat / (rows * cols), rest = flat % (rows * cols);
    int64_t i = rest / rows, j = rest % rows;
    return static_cast<size_t>((b * rows + j) * cols + i) * width;
  }
};

/// True if `turned` (of `turnedType`) holds `bytes` (of `type`) with its two
/// innermost axes swapped, compared element by element in place.
bool isInnerTransposeOf(ShapedType turnedType, ArrayRef<char> turned,
                        ShapedType type, ArrayRef<char> bytes);

/// A hash of a constant's elements (with `turned`, of its inner transpose,
/// read in place): all of them up to 2^16 elements, an even sample of 2^12
/// beyond. It only picks candidates, which isInnerTransposeOf confirms.
llvm::hash_code innerContentHash(ShapedType type, ArrayRef<char> bytes,
                                 bool turned);

/// The dims [start, end) of a shape, the bounds counted from the end when
/// negative and clamped to it, as Shape's `start`/`end` and a Slice of a
/// shape take them.
SmallVector<int64_t> dimsBetween(ArrayRef<int64_t> dims, int64_t start,
                                 int64_t end);

/// Replaces every pure node by the first node of its block that computes the
/// same value (the same op, attributes and operands; names aside).
void mergeEqualNodes(onnx::GraphOp graph);

/// Types a Loop body's carried argument unranked where the body yields a
/// value of another (or no known) rank for it: `w + k^T v` broadcasts a
/// carried [H, o, i] weight over the batch after the first iteration, so
/// the argument's declared rank holds only once, and no view may be built on
/// it from that rank.
void loosenRankChangingCarriedTypes(onnx::GraphOp graph);

/// Replaces each Transpose of a node's innermost axes by a node that
/// already computes the transposed value (its operands turned, as a pushed
/// transpose leaves them); true if it replaced any. The transposes stay,
/// unread, for the next merge or pattern run to drop.
bool mergeTurnedValues(onnx::GraphOp graph);

/// A pattern on the default-domain nodes of one op type.
class NodePattern : public OpRewritePattern<onnx::NodeOp> {
public:
  /// A pattern on `opType` nodes with one result (or, with `manyResults`,
  /// at least one) and at least one input: hand-written IR that no ONNX
  /// checker saw may have fewer, and such a node is left alone.
  NodePattern(MLIRContext *context, StringRef opType, bool manyResults = false)
      : OpRewritePattern(context), opType(opType.str()),
        manyResults(manyResults) {}

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const final {
    if (!node.isDefaultDomain() || node.getOpType() != opType ||
        node->getNumRegions() != 0 || node.getInputs().empty() ||
        node->getNumResults() == 0 ||
        (!manyResults && node->getNumResults() != 1))
      return failure();
    return matchNode(node, rewriter);
  }

protected:
  virtual LogicalResult matchNode(onnx::NodeOp node,
                                  PatternRewriter &rewriter) const = 0;

private:
  std::string opType;
  bool manyResults;
};

/// On a Constant the normalization folded from the transpose of a named
/// weight: that weight's name (the remarks say `'W' (transposed)`).
inline constexpr llvm::StringLiteral kTurnedFromAttr = "ttt.turned_from";

/// The integers of a shape operand: a constant, the dims a Shape (or a
/// Slice of a Shape) of a statically typed tensor reads, or a Concat of
/// such pieces and of pieces that are empty by their type (torch's
/// `[*dims, *x.shape[2:]]`).
std::optional<SmallVector<int64_t>> shapeConstant(Value value);

/// The integer attribute `name` of `node`, if it has one.
std::optional<int64_t> intAttr(onnx::NodeOp node, StringRef name);

/// The sizes a Split node cuts an axis of `length` into: `given` (its second
/// input, as the caller reads it), its `split` attribute, `num_outputs` parts
/// (opset 18: the last one shorter), or equal parts; none when they are not
/// one per result or do not add up to `length`.
std::optional<SmallVector<int64_t>>
splitSizes(onnx::NodeOp split, int64_t length,
           std::optional<SmallVector<int64_t>> given);

/// The permutation of a Transpose node (reversed axes when it has none).
std::optional<SmallVector<int64_t>> transposePerm(onnx::NodeOp transpose);

/// True if `Transpose(inner, perm)` stays two Transposes: the inner-axes swap
/// (`perm`) of a graph input's layout transpose (`inner`, not a swap) is the
/// transposed sequence a full-batch step reads as `k^T`.
bool keepsTurnedLayout(onnx::NodeOp inner, ArrayRef<int64_t> perm);

/// `x` transposed by `perm`: `x` itself for the identity, one Transpose for
/// a transpose of a transpose (but keepsTurnedLayout), a new Transpose
/// otherwise.
Value createTranspose(PatternRewriter &rewriter, Location loc, Value x,
                      ArrayRef<int64_t> perm);

/// `x` viewed as the tensor type `type`, static but for at most one dim
/// (inferred: -1): one Reshape node.
Value createReshape(PatternRewriter &rewriter, Location loc, Value x,
                    RankedTensorType type);

/// `x` viewed as `type` whose two innermost dims are those of `x` (a merge
/// or split of batch dims): one Reshape node whose target copies those two
/// from `Shape(x)` where they are of run-time size, so that `type` may have
/// one more such dim (inferred: -1) among its batch dims.
Value createBatchReshape(PatternRewriter &rewriter, Location loc, Value x,
                         RankedTensorType type);

/// True if dim `da` of `a` and dim `db` of `b` are the same size: equal
/// static sizes, or run-time sizes that Reshape targets copy from one
/// tensor's dim (`Shape(t)[axis]` pieces of a Concat).
bool sameDimSize(Value a, int64_t da, Value b, int64_t db);

/// True if `perm` lists 0 .. n-1 once each (hand-written IR that no checker
/// saw may carry any perm).
bool isPermutation(ArrayRef<int64_t> perm);
/// `type` with its dims permuted (result dim i is dim perm[i]).
Type permutedType(Type type, ArrayRef<int64_t> perm);

/// The element type of a tensor type; f32 for a value whose type the
/// importer did not know (the builder only needs it for float constants,
/// which the normalization does not make).
Type elementTypeOf(Type type);

/// True if the transpose of `matmul`'s innermost axes (by `pushed`) can be
/// moved onto its factors for free: one is a transpose, or all of one's
/// inputs take it for free.
bool productTurnsRound(onnx::NodeOp matmul, Operation *pushed);

/// The perm that swaps the two innermost of `rank` axes.
SmallVector<int64_t> swapInnerPerm(int64_t rank);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_NORMALIZE_H
