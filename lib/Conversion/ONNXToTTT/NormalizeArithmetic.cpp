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
// program) spells it `1 / (exp(-x) + 1)`.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

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
} // namespace

void raise::populateArithmeticNormalizations(RewritePatternSet &patterns) {
  patterns.add<AddOfNegation, LogisticToSigmoid>(patterns.getContext());
}
