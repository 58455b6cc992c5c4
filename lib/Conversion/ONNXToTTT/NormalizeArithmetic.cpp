//===- NormalizeArithmetic.cpp - one spelling of a difference -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A difference is written `Sub(a, b)` whatever the exporter wrote: TorchScript
// spells `1 - s` as `Add(Neg(s), 1)`, hand-written graphs as `Add(a,
// Mul(b, -1))`. Both broadcast exactly like the Sub they become.
//
// A logistic function is `Sigmoid(x)` however it was written out:
// torch-mlir's linalg lowering (and so the raise's shadow of a linalg
// program) spells it `1 / (exp(-x) + 1)`. A mean is `ReduceMean`, not the
// sum divided by the count torch-mlir writes. A causal mask is `Trilu`, not
// a `Where` of a constant triangle of booleans (torch-mlir's `tril`, a
// hand-written `arange(n)[None] <= arange(n)[:, None]`).
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// If `value` is `-x` (a Neg, or a product with the constant -1) of a
/// tensor of its own shape, x.
static Value negated(Value value) {
  if (onnx::NodeOp neg = nodeOf(value, "Neg"))
    return neg.getInputs()[0];
  onnx::NodeOp mul = nodeOf(value, "Mul");
  if (!mul)
    return nullptr;
  for (int i = 0; i < 2; ++i) {
    Value x = mul.getInputs()[1 - i];
    // Broadcasting against the constant must not change the shape.
    if (scalarConstant(mul.getInputs()[i]) == -1.0 &&
        x.getType() == value.getType())
      return x;
  }
  return nullptr;
}

namespace {
/// Add(a, -b) and Add(-b, a) -> Sub(a, b).
struct AddOfNegation : NodePattern {
  explicit AddOfNegation(MLIRContext *context) : NodePattern(context, "Add") {}

  LogicalResult matchNode(onnx::NodeOp add,
                          PatternRewriter &rewriter) const override {
    if (add.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(add, "not a binary Add");
    for (int i = 0; i < 2; ++i) {
      Value operand = add.getInputs()[i];
      // `W^T + (-D)^T` of a weight stored output x input: the transpose
      // moves onto D, so that the update reads as the stored one does.
      onnx::NodeOp transpose = nodeOf(operand, "Transpose");
      std::optional<SmallVector<int64_t>> perm =
          transpose ? transposePerm(transpose) : std::nullopt;
      if (transpose && !perm)
        continue;
      Value subtrahend =
          negated(transpose ? transpose.getInputs()[0] : operand);
      if (!subtrahend)
        continue;
      Value minuend = add.getInputs()[1 - i];
      Type type = add->getResult(0).getType();
      if (perm)
        subtrahend = createTranspose(rewriter, add.getLoc(), subtrahend, *perm);
      onnx::OnnxBuilder builder(rewriter, add.getLoc(), elementTypeOf(type));
      rewriter.replaceOp(add, builder.node("Sub", {minuend, subtrahend}, type));
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no negated operand");
  }
};

/// Div(1, Add(Exp(-x), 1)) and Reciprocal(Add(Exp(-x), 1)) (the Add's
/// operands in either order) -> Sigmoid(x).
struct LogisticToSigmoid : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    StringRef type = node.getOpType();
    if (!node.isDefaultDomain() || node->getNumResults() != 1 ||
        !((type == "Div" && node.getInputs().size() == 2 &&
           scalarConstant(node.getInputs()[0]) == 1.0) ||
          (type == "Reciprocal" && node.getInputs().size() == 1)))
      return failure();
    onnx::NodeOp add = nodeOf(node.getInputs().back(), "Add");
    if (!add || add.getInputs().size() != 2)
      return rewriter.notifyMatchFailure(node, "not 1 / (.. + ..)");
    Type result = node->getResult(0).getType();
    for (int i = 0; i < 2; ++i) {
      onnx::NodeOp exp = nodeOf(add.getInputs()[i], "Exp");
      Value x = exp ? negated(exp.getInputs()[0]) : Value();
      if (!x || scalarConstant(add.getInputs()[1 - i]) != 1.0 ||
          x.getType() != result)
        continue;
      onnx::OnnxBuilder builder(rewriter, node.getLoc(), elementTypeOf(result));
      rewriter.replaceOp(node, builder.node("Sigmoid", {x}, result));
      return success();
    }
    return rewriter.notifyMatchFailure(node, "not 1 / (exp(-x) + 1)");
  }
};

/// Div(ReduceSum(x, axes), n) and Mul(ReduceSum(x, axes), 1/n), where n is
/// the number of elements the sum adds up -> ReduceMean(x, axes).
struct SumOverCountToMean : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp node,
                                PatternRewriter &rewriter) const override {
    StringRef type = node.getOpType();
    if (!node.isDefaultDomain() || (type != "Div" && type != "Mul") ||
        node.getInputs().size() != 2 || node->getNumResults() != 1)
      return failure();
    for (int i = 0; i < (type == "Mul" ? 2 : 1); ++i) {
      onnx::NodeOp sum = nodeOf(node.getInputs()[i], "ReduceSum");
      std::optional<double> by = scalarConstant(node.getInputs()[1 - i]);
      if (!sum || !by || sum.getInputs().empty() ||
          sum->getResult(0).getType() != node->getResult(0).getType())
        continue;
      Value x = sum.getInputs()[0];
      auto source = dyn_cast<RankedTensorType>(x.getType());
      std::optional<SmallVector<int64_t>> axes = reduceAxes(sum);
      if (!source || !axes || axes->empty())
        continue;
      // The dims it sums over are static (a batch of run-time size may not).
      auto sizeAt = [&](int64_t axis) {
        return source.getDimSize(axis < 0 ? axis + source.getRank() : axis);
      };
      if (llvm::any_of(*axes, [&](int64_t axis) {
            return ShapedType::isDynamic(sizeAt(axis));
          }))
        continue;
      int64_t count = 1;
      for (int64_t axis : *axes)
        count *= sizeAt(axis);
      double n = static_cast<double>(count);
      // The reciprocal is stored rounded to the element type.
      if (type == "Div" ? *by != n : std::abs(*by * n - 1.0) > 1e-6)
        continue;
      Type result = node->getResult(0).getType();
      onnx::OnnxBuilder builder(rewriter, node.getLoc(), elementTypeOf(result));
      auto keepdims = sum.getONNXAttr("keepdims");
      SmallVector<NamedAttribute> attrs;
      if (keepdims)
        attrs.push_back(rewriter.getNamedAttr("keepdims", keepdims));
      SmallVector<Value> inputs{x};
      // ReduceMean takes its axes as an input from opset 18 on.
      if (builder.defaultOpset() >= 18)
        inputs.push_back(builder.i64s(*axes));
      else
        attrs.push_back(builder.attr("axes", ArrayRef<int64_t>(*axes)));
      rewriter.replaceOp(node,
                         builder.node("ReduceMean", inputs, result, attrs));
      return success();
    }
    return rewriter.notifyMatchFailure(node, "not a sum over its count");
  }
};

/// Where(mask, x, 0) and Where(mask, 0, x) with a constant boolean mask over
/// the two innermost axes (leading axes 1) that keeps exactly the entries
/// with `col - row <= k` (or `>= k`) -> Trilu(x, k) (upper = 0, or 1).
struct WhereOfTriangleToTrilu : NodePattern {
  explicit WhereOfTriangleToTrilu(MLIRContext *context)
      : NodePattern(context, "Where") {}

  LogicalResult matchNode(onnx::NodeOp where,
                          PatternRewriter &rewriter) const override {
    if (where.getInputs().size() != 3)
      return rewriter.notifyMatchFailure(where, "not a Where");
    Value mask = where.getInputs()[0];
    auto maskType = dyn_cast<RankedTensorType>(mask.getType());
    std::optional<SmallVector<int64_t>> bits = intConstant(mask);
    Type result = where->getResult(0).getType();
    if (!maskType || !maskType.hasStaticShape() || maskType.getRank() < 2 ||
        !bits || !llvm::all_of(maskType.getShape().drop_back(2), [](int64_t d) {
          return d == 1;
        }))
      return rewriter.notifyMatchFailure(where, "not a constant matrix mask");
    int64_t rows = maskType.getShape().end()[-2];
    int64_t cols = maskType.getShape().back();
    for (int flip = 0; flip < 2; ++flip) {
      Value kept = where.getInputs()[1 + flip];
      Value other = where.getInputs()[2 - flip];
      if (kept.getType() != result || scalarConstant(other) != 0.0)
        continue;
      auto keeps = [&](int64_t i, int64_t j) {
        return ((*bits)[i * cols + j] != 0) != (flip == 1);
      };
      std::optional<int64_t> low, high;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          if (keeps(i, j)) {
            low = std::min(low.value_or(j - i), j - i);
            high = std::max(high.value_or(j - i), j - i);
          }
      if (!low)
        continue;
      for (bool upper : {false, true}) {
        int64_t k = upper ? *low : *high;
        bool triangle = true;
        for (int64_t i = 0; triangle && i < rows; ++i)
          for (int64_t j = 0; triangle && j < cols; ++j)
            triangle = keeps(i, j) == (upper ? j - i >= k : j - i <= k);
        if (!triangle)
          continue;
        onnx::OnnxBuilder builder(rewriter, where.getLoc(),
                                  elementTypeOf(result));
        Value diagonal = builder.i64Scalar(k);
        rewriter.replaceOp(where,
                           builder.node("Trilu", {kept, diagonal}, result,
                                        {builder.attr("upper", upper)}));
        return success();
      }
    }
    return rewriter.notifyMatchFailure(where, "not a triangle of zeros");
  }
};
} // namespace

void raise::populateArithmeticNormalizations(RewritePatternSet &patterns) {
  patterns.add<AddOfNegation, LogisticToSigmoid, SumOverCountToMean,
               WhereOfTriangleToTrilu>(patterns.getContext());
}
