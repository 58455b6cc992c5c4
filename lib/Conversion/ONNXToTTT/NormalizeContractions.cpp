//===- NormalizeContractions.cpp - products as MatMuls of one orientation -===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A contraction becomes a MatMul between Transposes, and transposes move
// from results to operands: `(W x^T)^T` reads as `x W^T`, and the update of
// a weight stored output x input, `W + v^T k`, reads as the update of its
// transpose, `W^T + k^T v`. The raise then sees one orientation.
//
//===----------------------------------------------------------------------===//

#include "AssumedSizes.h"
#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// True if `perm` swaps the two innermost axes and keeps the others.
static bool swapsInner(ArrayRef<int64_t> perm) {
  return perm.size() >= 2 && llvm::equal(perm, swapInnerPerm(perm.size()));
}

/// True if `value` holds one element (a scalar, whatever its rank).
static bool isSingleElement(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

/// True if the two innermost dims of `value` are 1: its inner transpose is
/// itself (a momentum per chunk, `[B, H, 1, 1]`).
static bool hasUnitInnerDims(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasRank() || type.getRank() < 2)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  return shape[shape.size() - 1] == 1 && shape[shape.size() - 2] == 1;
}

/// True if `value` is a Transpose of its two innermost axes.
static bool isInnerTranspose(Value value) {
  onnx::NodeOp node = nodeOf(value, "Transpose");
  if (!node)
    return false;
  std::optional<SmallVector<int64_t>> perm = transposePerm(node);
  return perm && swapsInner(*perm);
}

/// True if an inner transpose of `node`'s result is the same op on its
/// operands' transposes: a sum, difference, product or quotient of two
/// operands, or a negation, sigmoid, tanh or exp of one.
static bool carriesInnerTranspose(onnx::NodeOp node) {
  if (!node || !node.isDefaultDomain())
    return false;
  StringRef type = node.getOpType();
  unsigned inputs = node.getInputs().size();
  if (llvm::is_contained({"Add", "Sub", "Mul", "Div"}, type))
    return inputs == 2;
  return llvm::is_contained({"Neg", "Sigmoid", "Tanh", "Exp"}, type) &&
         inputs == 1;
}

/// Deeper than any unrolled layer's chain of chunk updates; bounds the
/// recursion on adversarial graphs.
static constexpr int kMaxTransposeDepth = 4096;

/// True if moving a transpose of the innermost axes (`pushed`) onto `value`
/// costs nothing: it undoes a transpose, lands on a constant or a graph
/// input, merges with another transpose of `value`, or moves on
/// through a product, sum or scaling where the same holds. Transposes move
/// only where they cancel, so a computation that is not written in the
/// other orientation (a Newton-Schulz iteration) keeps its form.
static bool transposesForFree(Value value, Operation *pushed,
                              llvm::DenseMap<Value, bool> &known, int depth) {
  if (isInnerTranspose(value) || isa<BlockArgument>(value) ||
      isSingleElement(value))
    return true;
  // A per-chunk factor `[.., 1, 1]` of an unrolled chain (a momentum per
  // chunk) turns with it. In a Loop body the factor scales a carried value,
  // whose orientation the loop keeps.
  if (hasUnitInnerDims(value) &&
      isa<onnx::GraphOp>(value.getParentRegion()->getParentOp()))
    return true;
  auto node = value.getDefiningOp<onnx::NodeOp>();
  if (!node)
    return value.getDefiningOp<onnx::InitializerOp>() != nullptr;
  if (node.isDefaultDomain() && node.getOpType() == "Constant")
    return true;
  // A product of tensors is free only when its factors are: `(k * lr)^T` of
  // a key chunk stays however else the product is read.
  StringRef opType = node.getOpType();
  bool tensorProduct = (opType == "Mul" || opType == "Div") &&
                       !llvm::any_of(node.getInputs(), isSingleElement);
  if (!tensorProduct && llvm::any_of(value.getUsers(), [&](Operation *user) {
        auto transpose = dyn_cast<onnx::NodeOp>(user);
        return transpose && user != pushed &&
               isInnerTranspose(transpose->getResult(0));
      }))
    return true;
  if (depth > kMaxTransposeDepth || !node.isDefaultDomain())
    return false;
  // A chain of updates (one per chunk, and its momentum) is as deep as the
  // layer has chunks; each value is decided once.
  if (auto it = known.find(value); it != known.end())
    return it->second;
  bool free = false;
  StringRef type = node.getOpType();
  if (type == "MatMul" && node.getInputs().size() == 2) {
    free = llvm::any_of(node.getInputs(), isInnerTranspose);
  } else if (carriesInnerTranspose(node)) {
    // A product of tensors moves its transpose only where every factor takes
    // it for free: `(k * lr)^T` of a key chunk stays (how an update reads
    // keys scaled per token), `(silu(W0 x^T) * (W2 x^T))^T` of feature-major
    // code turns round.
    free = llvm::all_of(node.getInputs(), [&](Value operand) {
      return transposesForFree(operand, pushed, known, depth + 1);
    });
  }
  known[value] = free;
  return free;
}

static bool transposesForFree(Value value, Operation *pushed) {
  llvm::DenseMap<Value, bool> known;
  return transposesForFree(value, pushed, known, 0);
}

/// True if `value` is a Transpose whose own inner swap leaves a layout
/// transpose (one that keeps the feature axis last): `x^T`, or `W x^T` style
/// `[B, T, H, D] -> [B, H, D, T]`.
static bool isFlippedFactor(Value value) {
  onnx::NodeOp node = nodeOf(value, "Transpose");
  std::optional<SmallVector<int64_t>> perm =
      node ? transposePerm(node) : std::nullopt;
  int64_t rank = perm ? perm->size() : 0;
  return rank >= 2 && (*perm)[rank - 2] == rank - 1;
}

bool raise::productTurnsRound(onnx::NodeOp matmul, Operation *pushed) {
  return llvm::any_of(matmul.getInputs(), [&](Value factor) {
    return isFlippedFactor(factor) ||
           (!isSingleElement(factor) && factor.getDefiningOp<onnx::NodeOp>() &&
            transposesForFree(factor, pushed));
  });
}

namespace {
/// Einsum("..,..->..") with one contracted index -> Transposes and a MatMul.
///
/// The letters of the output split into leading ones, a row letter of the
/// first operand and a column letter of the second; each operand is
/// transposed to [its leading letters, row, contracted] or [.., contracted,
/// column], and the MatMul's broadcasting stands in for leading letters one
/// operand lacks (they must be the outermost).
struct EinsumToMatMul : NodePattern {
  explicit EinsumToMatMul(MLIRContext *context)
      : NodePattern(context, "Einsum") {}

  LogicalResult matchNode(onnx::NodeOp einsum,
                          PatternRewriter &rewriter) const override {
    auto equation =
        dyn_cast_or_null<StringAttr>(einsum.getONNXAttr("equation"));
    if (!equation || einsum.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(einsum, "not a binary Einsum");
    std::string text;
    for (char c : equation.getValue())
      if (c != ' ')
        text.push_back(c);
    auto [inputs, out] = StringRef(text).split("->");
    auto [a, b] = inputs.split(',');
    if (out.empty() || a.empty() || b.empty() || text.find("->") == npos ||
        !isLetters(a) || !isLetters(b) || !isLetters(out))
      return rewriter.notifyMatchFailure(einsum, "not an explicit equation");
    if (!distinct(a) || !distinct(b) || !distinct(out))
      return rewriter.notifyMatchFailure(einsum, "a repeated index (a trace)");
    std::string contracted, leading;
    for (char c : a)
      if (b.contains(c) && !out.contains(c))
        contracted.push_back(c);
    for (char c : a.str() + b.str())
      if (!out.contains(c) && !(a.contains(c) && b.contains(c)))
        return rewriter.notifyMatchFailure(einsum, "an index summed over one "
                                                   "operand only");
    for (char c : out)
      if (!a.contains(c) && !b.contains(c))
        return rewriter.notifyMatchFailure(einsum, "an output index of no "
                                                   "operand");
    if (contracted.size() != 1)
      return rewriter.notifyMatchFailure(einsum, "not one contracted index");
    char row = 0, col = 0;
    for (char c : out) {
      if (a.contains(c) && !b.contains(c))
        row = c;
      if (b.contains(c) && !a.contains(c))
        col = c;
    }
    if (!row || !col)
      return rewriter.notifyMatchFailure(einsum, "not a matrix product");
    for (char c : out)
      if (c != row && c != col)
        leading.push_back(c);
    std::string leadA = lettersIn(leading, a), leadB = lettersIn(leading, b);
    if (!StringRef(leading).ends_with(leadA) ||
        !StringRef(leading).ends_with(leadB))
      return rewriter.notifyMatchFailure(einsum, "broadcast letters are not "
                                                 "the outermost");
    Location loc = einsum.getLoc();
    Value lhs = arrange(rewriter, loc, einsum.getInputs()[0], a,
                        leadA + row + contracted);
    Value rhs = arrange(rewriter, loc, einsum.getInputs()[1], b,
                        leadB + contracted + col);
    if (!lhs || !rhs)
      return rewriter.notifyMatchFailure(einsum, "operand ranks do not match "
                                                 "the equation");
    std::string product = leading + row + col;
    Type resultType = einsum->getResult(0).getType();
    auto element = elementTypeOf(resultType);
    onnx::OnnxBuilder builder(rewriter, loc, element);
    Type productType = permutedType(resultType, positions(out, product));
    Value result = builder.node("MatMul", {lhs, rhs}, productType);
    result = createTranspose(rewriter, loc, result, positions(product, out));
    rewriter.replaceOp(einsum, result);
    return success();
  }

private:
  static constexpr size_t npos = std::string::npos;

  static bool isLetters(StringRef text) {
    return llvm::all_of(text, [](char c) { return llvm::isAlpha(c); });
  }
  static bool distinct(StringRef text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (text.find(text[i], i + 1) != StringRef::npos)
        return false;
    return true;
  }
  static std::string lettersIn(StringRef order, StringRef term) {
    std::string kept;
    for (char c : order)
      if (term.contains(c))
        kept.push_back(c);
    return kept;
  }
  /// The perm that takes a tensor indexed by `from` to one indexed by `to`.
  static SmallVector<int64_t> positions(StringRef from, StringRef to) {
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(from.find(c));
    return perm;
  }
  static Value arrange(PatternRewriter &rewriter, Location loc, Value x,
                       StringRef from, StringRef to) {
    std::optional<int64_t> rank = rankOf(x);
    if (from.size() != to.size())
      return nullptr;
    // A Loop body's carried values often have no rank; the equation gives
    // it, and an operand already in order needs no transpose.
    if (!rank && from == to)
      return x;
    if (!rank || *rank != static_cast<int64_t>(from.size()))
      return nullptr;
    return createTranspose(rewriter, loc, x, positions(from, to));
  }
};

/// (A B)^T -> B^T A^T, when one factor is a transpose (which cancels). The
/// transpose may also change the layout: `perm = L . swap` with L keeping the
/// last axis (`W x^T` in `[B, H, D, T]` read back as `[B, T, H, D]`) becomes
/// L of `B^T A^T`. A product that something else reads as it is stays for
/// that reader too.
struct TransposeOfMatMul : NodePattern {
  explicit TransposeOfMatMul(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    onnx::NodeOp matmul = nodeOf(transpose.getInputs()[0], "MatMul");
    int64_t rank = perm ? perm->size() : 0;
    if (!matmul || rank < 2)
      return rewriter.notifyMatchFailure(transpose,
                                         "not the transpose of a product");
    SmallVector<int64_t> swap = swapInnerPerm(rank), layout(rank);
    for (int64_t i = 0; i < rank; ++i)
      layout[i] = swap[(*perm)[i]];
    if (layout[rank - 1] != rank - 1)
      return rewriter.notifyMatchFailure(transpose,
                                         "it does not swap the product's "
                                         "rows and columns");
    bool pureSwap = llvm::equal(layout, llvm::seq<int64_t>(0, rank));
    if (!llvm::any_of(matmul.getInputs(), isFlippedFactor) &&
        !(pureSwap && productTurnsRound(matmul, transpose)))
      return rewriter.notifyMatchFailure(transpose, "no factor is a transpose");
    Value a = matmul.getInputs()[0], b = matmul.getInputs()[1];
    std::optional<int64_t> rankA = rankOf(a), rankB = rankOf(b);
    if (!rankA || !rankB || *rankA < 2 || *rankB < 2)
      return rewriter.notifyMatchFailure(transpose, "a vector operand");
    Location loc = transpose.getLoc();
    Value bt = createTranspose(rewriter, loc, b, swapInnerPerm(*rankB));
    Value at = createTranspose(rewriter, loc, a, swapInnerPerm(*rankA));
    Type type = permutedType(matmul->getResult(0).getType(), swap);
    onnx::OnnxBuilder builder(rewriter, loc, elementTypeOf(type));
    Value product = builder.node("MatMul", {bt, at}, type);
    rewriter.replaceOp(transpose,
                       createTranspose(rewriter, loc, product, layout));
    return success();
  }
};

/// (A + B)^T -> A^T + B^T, and likewise for Sub, Neg, Mul, Div and the
/// unary sigmoid, tanh and exp, when every operand transposes for free
/// (transposesForFree). A product of key chunks and rates keeps its
/// transpose: `(k * lr)^T` is how an update reads keys scaled per token.
struct TransposeOfElementwise : NodePattern {
  explicit TransposeOfElementwise(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    auto node = transpose.getInputs()[0].getDefiningOp<onnx::NodeOp>();
    if (!perm || !swapsInner(*perm) || !node || !carriesInnerTranspose(node))
      return rewriter.notifyMatchFailure(transpose, "not the transpose of an "
                                                    "elementwise op");
    if (!transposesForFree(node->getResult(0), transpose))
      return rewriter.notifyMatchFailure(transpose,
                                         "its operands do not transpose for "
                                         "free");
    int64_t rank = perm->size();
    SmallVector<Value> operands;
    Location loc = transpose.getLoc();
    for (Value operand : node.getInputs()) {
      if (isSingleElement(operand) || (hasUnitInnerDims(operand) &&
                                       transposesForFree(operand, transpose))) {
        operands.push_back(operand);
        continue;
      }
      // Broadcasting aligns the innermost axes, so an operand of a lower
      // rank transposes its own two innermost ones; a vector cannot.
      std::optional<int64_t> operandRank = rankOf(operand);
      if (!operandRank || *operandRank < 2 || *operandRank > rank)
        return rewriter.notifyMatchFailure(transpose,
                                           "an operand broadcast from a "
                                           "vector");
      operands.push_back(
          createTranspose(rewriter, loc, operand, swapInnerPerm(*operandRank)));
    }
    Type type = transpose->getResult(0).getType();
    onnx::OnnxBuilder builder(rewriter, loc, elementTypeOf(type));
    rewriter.replaceOp(transpose,
                       builder.node(node.getOpType(), operands, type));
    return success();
  }
};

/// True if `node` computes elementwise (with broadcasting), so that a
/// permutation of its result is the same permutation of its operands.
static bool isElementwise(onnx::NodeOp node) {
  if (!node || !node.isDefaultDomain() || node->getNumRegions() != 0 ||
      node->getNumResults() != 1)
    return false;
  return llvm::is_contained({"Add", "Sub", "Mul", "Div", "Neg", "Sigmoid",
                             "Tanh", "Exp", "Relu", "Sqrt", "Reciprocal", "Abs",
                             "Identity"},
                            node.getOpType());
}

/// True if permuting `value` by a layout perm costs no new computation: it
/// is a scalar, a constant (folded), a graph input or Slice (the cut moves
/// behind the transpose), another Transpose (they merge), or an elementwise
/// node whose operands are such values.
static bool permutesForFree(Value value, int64_t rank, int depth = 0) {
  if (isSingleElement(value))
    return true;
  if (rankOf(value) != rank)
    return false;
  if (isa<BlockArgument>(value) || value.getDefiningOp<onnx::InitializerOp>())
    return true;
  auto node = value.getDefiningOp<onnx::NodeOp>();
  if (!node || !node.isDefaultDomain())
    return false;
  StringRef type = node.getOpType();
  if (type == "Transpose" || type == "Constant" || type == "Slice")
    return true;
  if (depth > 8 || !isElementwise(node))
    return false;
  return llvm::all_of(node.getInputs(), [&](Value operand) {
    return permutesForFree(operand, rank, depth + 1);
  });
}

/// A layout transpose (one that keeps the feature axis last) of an
/// elementwise node moves onto its operands when they permute for free:
/// research code computes `silu(x W0) * (x W2)` on `[B, T, H, D]` views of
/// `[B, H, T, D]` products, which then reads as the features of one layout.
/// Of a transpose that also swaps the innermost axes (`[B, T, H, D]` ->
/// `[B, H, D, T]`), the layout part moves and the swap stays outside.
struct LayoutTransposeOfElementwise : NodePattern {
  explicit LayoutTransposeOfElementwise(MLIRContext *context)
      : NodePattern(context, "Transpose") {}

  LogicalResult matchNode(onnx::NodeOp transpose,
                          PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    auto node = transpose.getInputs()[0].getDefiningOp<onnx::NodeOp>();
    int64_t rank = perm ? perm->size() : 0;
    if (rank < 2 || !isElementwise(node))
      return rewriter.notifyMatchFailure(transpose,
                                         "not a transpose of an elementwise "
                                         "node");
    // perm = L . swap (BTHD -> BHDT: `(k * lr)^T` of [B, T, H, D] chunks):
    // the layout part L moves on, the swap stays outside.
    SmallVector<int64_t> layout = *perm;
    bool swapped = perm->back() != rank - 1;
    if (swapped) {
      SmallVector<int64_t> swap = swapInnerPerm(rank);
      for (int64_t i = 0; i < rank; ++i)
        layout[i] = (*perm)[swap[i]];
    }
    if (layout.back() != rank - 1 ||
        llvm::equal(layout, llvm::seq<int64_t>(0, rank)))
      return rewriter.notifyMatchFailure(transpose, "no layout change to move");
    if (!llvm::all_of(node.getInputs(), [&](Value operand) {
          return permutesForFree(operand, rank);
        }))
      return rewriter.notifyMatchFailure(transpose,
                                         "its operands do not permute for "
                                         "free");
    SmallVector<Value> operands;
    Location loc = transpose.getLoc();
    for (Value operand : node.getInputs())
      operands.push_back(isSingleElement(operand)
                             ? operand
                             : createTranspose(rewriter, loc, operand, layout));
    Type type = transpose->getResult(0).getType();
    Type moved = swapped ? permutedType(type, swapInnerPerm(rank)) : type;
    onnx::OnnxBuilder builder(rewriter, loc, elementTypeOf(type));
    SmallVector<NamedAttribute> attrs;
    if (DictionaryAttr dict = node.getAttrsAttr())
      llvm::append_range(attrs, dict.getValue());
    Value result = builder.node(node.getOpType(), operands, moved, attrs);
    if (swapped)
      result = createTranspose(rewriter, loc, result, swapInnerPerm(rank));
    rewriter.replaceOp(transpose, result);
    return success();
  }
};
/// The shape of `value`, if it is a ranked tensor of at least `minRank`
/// dims.
static std::optional<ArrayRef<int64_t>> batchShape(Value value,
                                                   int64_t minRank) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() < minRank)
    return std::nullopt;
  return type.getShape();
}

/// If `value` is a Reshape that only merges or splits the leading (batch)
/// dims of a tensor of rank >= 3, keeping its two innermost: that tensor.
/// With one dim of run-time size on each side: when it is an inner dim,
/// the batch dims are static and must hold as many elements on both sides,
/// so that it is the same on both; when it is a batch dim, the inner dims
/// are static and the Reshape keeps the element count, so the batch dims
/// hold as many elements (a dynamic batch, merged with the heads). With
/// more (a dynamic batch and a chunk of run-time length), the Reshape's
/// target must copy the inner ones from the source (sameDimSize).
static Value batchMergeSource(Value value) {
  onnx::NodeOp reshape = nodeOf(value, "Reshape");
  if (!reshape)
    return nullptr;
  Value source = reshape.getInputs()[0];
  std::optional<ArrayRef<int64_t>> from = batchShape(source, 3);
  std::optional<ArrayRef<int64_t>> to = batchShape(value, 3);
  auto batchElements = [](ArrayRef<int64_t> shape) {
    int64_t count = 1;
    for (int64_t size : shape.drop_back(2))
      count *= size;
    return count;
  };
  if (!from || !to || from->take_back(2) != to->take_back(2))
    return nullptr;
  auto dynamicDims = [](ArrayRef<int64_t> shape) {
    return llvm::count_if(shape, ShapedType::isDynamic);
  };
  if (dynamicDims(*from) > 1 || dynamicDims(*to) > 1) {
    int64_t f = static_cast<int64_t>(from->size());
    int64_t t = static_cast<int64_t>(to->size());
    return sameDimSize(value, t - 2, source, f - 2) &&
                   sameDimSize(value, t - 1, source, f - 1)
               ? source
               : nullptr;
  }
  bool innerOfRunTimeSize =
      llvm::any_of(from->take_back(2), ShapedType::isDynamic);
  if (innerOfRunTimeSize && batchElements(*from) != batchElements(*to))
    return nullptr;
  return source;
}

/// A factor of a batch-merged MatMul: the tensor a batch reshape merged,
/// and whether the factor is its inner transpose (torch-mlir's
/// `bmm(k.flatten(0, 1).transpose(1, 2), ..)`).
struct MergedFactor {
  Value source;
  bool turned = false;
  /// The source's shape as the MatMul reads it (inner dims swapped if
  /// turned).
  SmallVector<int64_t> shape;
};

static std::optional<MergedFactor> mergedFactor(Value factor) {
  MergedFactor merged;
  if (onnx::NodeOp transpose = nodeOf(factor, "Transpose")) {
    std::optional<SmallVector<int64_t>> perm = transposePerm(transpose);
    if (!perm || !swapsInner(*perm))
      return std::nullopt;
    merged.turned = true;
    factor = transpose.getInputs()[0];
  }
  merged.source = batchMergeSource(factor);
  if (!merged.source)
    return std::nullopt;
  merged.shape.assign(*batchShape(merged.source, 3));
  if (merged.turned)
    std::swap(merged.shape.end()[-1], merged.shape.end()[-2]);
  return merged;
}

/// MatMul(a, b) where a and b are Reshapes of A and B (or their inner
/// transposes) that only merge the batch dims A and B share -> the MatMul of
/// A and B (transposed as a and b are), reshaped as the product was:
/// torch-mlir writes a 4-D matmul as `collapse_shape`, `batch_matmul`,
/// `expand_shape`, and folds a product's collapse of its own expand away, so
/// one product may feed the next without a reshape back.
struct MatMulOfBatchMerges : NodePattern {
  explicit MatMulOfBatchMerges(MLIRContext *context)
      : NodePattern(context, "MatMul") {}

  LogicalResult matchNode(onnx::NodeOp matmul,
                          PatternRewriter &rewriter) const override {
    std::optional<MergedFactor> a = mergedFactor(matmul.getInputs()[0]);
    std::optional<MergedFactor> b = mergedFactor(matmul.getInputs()[1]);
    // Inner dims of run-time size match where the MatMul reads them.
    std::optional<ArrayRef<int64_t>> out = batchShape(matmul->getResult(0), 3);
    if (!a || !b || !out)
      return rewriter.notifyMatchFailure(matmul, "not a batch-merged MatMul");
    ArrayRef<int64_t> sa = a->shape, sb = b->shape;
    if (sa.size() != sb.size() || sa.drop_back(2) != sb.drop_back(2) ||
        sa.back() != sb.end()[-2] || (*out)[out->size() - 2] != sa.end()[-2] ||
        out->back() != sb.back())
      return rewriter.notifyMatchFailure(matmul, "the batch dims differ");
    Location loc = matmul.getLoc();
    auto factor = [&](const MergedFactor &merged) {
      int64_t rank = static_cast<int64_t>(merged.shape.size());
      return merged.turned ? createTranspose(rewriter, loc, merged.source,
                                             swapInnerPerm(rank))
                           : merged.source;
    };
    Value lhs = factor(*a);
    Value rhs = factor(*b);
    SmallVector<int64_t> shape(sa.drop_back(1));
    shape.push_back(sb.back());
    Type element = elementTypeOf(lhs.getType());
    onnx::OnnxBuilder builder(rewriter, loc, element);
    Value product = builder.node("MatMul", {lhs, rhs},
                                 RankedTensorType::get(shape, element));
    rewriter.replaceOp(
        matmul, createBatchReshape(
                    rewriter, loc, product,
                    cast<RankedTensorType>(matmul->getResult(0).getType())));
    return success();
  }
};

/// MatMul(a, Expand(c, Shape(y))) -> MatMul(a, c), either side, in a graph
/// read from a linalg program, when the Expand only stretches unit batch
/// dims of c: MatMul broadcasts them to a's by itself. torch-mlir writes a
/// weight shared by a batch of run-time size so (`W [H, d, e]` stretched to
/// `[?, H, d, e]` for a batched product); the two products agree where each
/// stretched size is a's, which the raise asserts (AssumedSizes.h).
struct MatMulOfStretchedFactor : NodePattern {
  explicit MatMulOfStretchedFactor(MLIRContext *context)
      : NodePattern(context, "MatMul") {}

  LogicalResult matchNode(onnx::NodeOp matmul,
                          PatternRewriter &rewriter) const override {
    onnx::GraphOp graph = graphThatMayAssumeSizes(matmul);
    if (!graph || matmul.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(matmul, "sizes may not be assumed");
    for (unsigned side = 0; side < 2; ++side) {
      onnx::NodeOp expand = nodeOf(matmul.getInputs()[side], "Expand");
      onnx::NodeOp shape = expand && expand.getInputs().size() == 2
                               ? nodeOf(expand.getInputs()[1], "Shape")
                               : onnx::NodeOp();
      if (!shape || shape.getInputs().size() != 1)
        continue;
      Value c = expand.getInputs()[0], other = matmul.getInputs()[1 - side];
      Value y = shape.getInputs()[0];
      auto cType = dyn_cast<RankedTensorType>(c.getType());
      auto stretched =
          dyn_cast<RankedTensorType>(expand->getResult(0).getType());
      auto otherType = dyn_cast<RankedTensorType>(other.getType());
      if (!cType || !stretched || !otherType || cType.getRank() < 3 ||
          cType.getRank() != stretched.getRank() ||
          cType.getRank() != otherType.getRank() || !cType.hasStaticShape() ||
          cType.getShape().take_back(2) != stretched.getShape().take_back(2))
        continue;
      std::optional<StringRef> yName = valueName(y);
      std::optional<StringRef> otherName = valueName(other);
      std::optional<StringRef> read = valueName(expand->getResult(0));
      SmallVector<int64_t> assumed;
      bool stretchesOnlyUnits = yName && otherName && read;
      for (int64_t d = 0; stretchesOnlyUnits && d < cType.getRank() - 2; ++d) {
        int64_t from = cType.getDimSize(d), to = stretched.getDimSize(d);
        if (from == to)
          continue;
        stretchesOnlyUnits = from == 1 && to == otherType.getDimSize(d);
        if (ShapedType::isDynamic(to))
          assumed.push_back(d);
      }
      if (!stretchesOnlyUnits)
        continue;
      for (int64_t d : assumed)
        assumeEqualSizes(graph, {*yName, d, *otherName, d, *read});
      Value lhs = side == 0 ? c : other;
      Value rhs = side == 0 ? other : c;
      onnx::OnnxBuilder builder(rewriter, matmul.getLoc(),
                                elementTypeOf(c.getType()));
      rewriter.replaceOp(matmul, builder.node("MatMul", {lhs, rhs},
                                              matmul->getResult(0).getType()));
      return success();
    }
    return rewriter.notifyMatchFailure(matmul, "no stretched factor");
  }
};
} // namespace

void raise::populateContractionNormalizations(RewritePatternSet &patterns) {
  patterns.add<EinsumToMatMul, TransposeOfMatMul, TransposeOfElementwise,
               LayoutTransposeOfElementwise, MatMulOfBatchMerges,
               MatMulOfStretchedFactor>(patterns.getContext());
}
