//===- ElementwiseHandlers.cpp - arithmetic and activations -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Float arithmetic under NumPy broadcasting, one `linalg.generic` each, its
// body in the `arith`/`math` spelling torch-mlir writes, so that the einsum
// reader sees the same sums and products whichever front end wrote them.
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

using ScalarBody = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Checks that every input is converted and of the result's float element
/// type, then builds the broadcast generic.
static LogicalResult elementwise(OpBuilder &b, const NodeView &node,
                                 SmallVectorImpl<Value> &results,
                                 std::string &why, ScalarBody body) {
  RankedTensorType type = node.resultType();
  if (!type || !isa<FloatType>(type.getElementType())) {
    why = "its result is not a float tensor of static shape";
    return failure();
  }
  for (unsigned i = 0; i < node.inputs.size(); ++i) {
    RankedTensorType input = node.inputType(i);
    if (!input || input.getElementType() != type.getElementType()) {
      why = "input " + std::to_string(i) +
            " is not a converted tensor of the result's element type";
      return failure();
    }
  }
  return pushElementwise(b, node, node.inputs, type, body, results, why);
}

template <typename ArithOp>
static LogicalResult binary(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why) {
  if (node.numInputs() != 2) {
    why = "it does not have two inputs";
    return failure();
  }
  return elementwise(
      b, node, results, why, [](OpBuilder &nb, Location loc, ValueRange args) {
        return ArithOp::create(nb, loc, args[0], args[1]).getResult();
      });
}

template <typename UnaryOp>
static LogicalResult unary(OpBuilder &b, const NodeView &node,
                           SmallVectorImpl<Value> &results, std::string &why) {
  return elementwise(b, node, results, why,
                     [](OpBuilder &nb, Location loc, ValueRange args) {
                       return UnaryOp::create(nb, loc, args[0]).getResult();
                     });
}

static LogicalResult sigmoid(OpBuilder &b, const NodeView &node,
                             SmallVectorImpl<Value> &results,
                             std::string &why) {
  return elementwise(
      b, node, results, why, [](OpBuilder &nb, Location loc, ValueRange args) {
        Type type = args[0].getType();
        Value negated = arith::NegFOp::create(nb, loc, args[0]);
        Value exp = math::ExpOp::create(nb, loc, negated);
        Value one = scalarConstant(nb, loc, type, 1.0);
        Value denominator = arith::AddFOp::create(nb, loc, exp, one);
        return arith::DivFOp::create(nb, loc, one, denominator).getResult();
      });
}

static LogicalResult reciprocal(OpBuilder &b, const NodeView &node,
                                SmallVectorImpl<Value> &results,
                                std::string &why) {
  return elementwise(
      b, node, results, why, [](OpBuilder &nb, Location loc, ValueRange args) {
        Value one = scalarConstant(nb, loc, args[0].getType(), 1.0);
        return arith::DivFOp::create(nb, loc, one, args[0]).getResult();
      });
}

static LogicalResult relu(OpBuilder &b, const NodeView &node,
                          SmallVectorImpl<Value> &results, std::string &why) {
  return elementwise(
      b, node, results, why, [](OpBuilder &nb, Location loc, ValueRange args) {
        Value zero = scalarConstant(nb, loc, args[0].getType(), 0.0);
        return arith::MaximumFOp::create(nb, loc, args[0], zero).getResult();
      });
}

static LogicalResult softplus(OpBuilder &b, const NodeView &node,
                              SmallVectorImpl<Value> &results,
                              std::string &why) {
  return elementwise(b, node, results, why,
                     [](OpBuilder &nb, Location loc, ValueRange args) {
                       Value exp = math::ExpOp::create(nb, loc, args[0]);
                       return math::Log1pOp::create(nb, loc, exp).getResult();
                     });
}

static LogicalResult pow(OpBuilder &b, const NodeView &node,
                         SmallVectorImpl<Value> &results, std::string &why) {
  if (node.numInputs() != 2) {
    why = "it does not have two inputs";
    return failure();
  }
  return elementwise(
      b, node, results, why, [](OpBuilder &nb, Location loc, ValueRange args) {
        return math::PowFOp::create(nb, loc, args[0], args[1]).getResult();
      });
}

/// Clip with its bounds as optional inputs (opset 11 on): constants, or
/// scalars computed at run time (read as broadcast operands).
static LogicalResult clip(OpBuilder &b, const NodeView &node,
                          SmallVectorImpl<Value> &results, std::string &why) {
  std::optional<double> low, high;
  bool hasLow = node.hasInput(1), hasHigh = node.hasInput(2);
  if (hasLow)
    low = node.constantFloat(1);
  if (hasHigh)
    high = node.constantFloat(2);
  if ((!hasLow || low) && (!hasHigh || high)) {
    NodeView first{node.node, node.inputs.take_front()};
    return elementwise(b, first, results, why,
                       [&](OpBuilder &nb, Location loc, ValueRange args) {
                         Value value = args[0];
                         if (low)
                           value = arith::MaximumFOp::create(
                               nb, loc, value,
                               scalarConstant(nb, loc, value.getType(), *low));
                         if (high)
                           value = arith::MinimumFOp::create(
                               nb, loc, value,
                               scalarConstant(nb, loc, value.getType(), *high));
                         return value;
                       });
  }
  // A bound computed at run time: every bound an operand (an absent lower
  // bound with a computed upper one has no operand to stand in its place).
  if (!hasLow) {
    why = "its upper bound is not a constant and it has no lower bound";
    return failure();
  }
  for (unsigned i = 1, e = hasHigh ? 3 : 2; i < e; ++i)
    if (RankedTensorType bound = node.inputType(i);
        !bound || bound.getNumElements() != 1) {
      why = "its bound " + std::to_string(i) + " is not one number";
      return failure();
    }
  NodeView bounded{node.node, node.inputs.take_front(hasHigh ? 3 : 2)};
  return elementwise(b, bounded, results, why,
                     [&](OpBuilder &nb, Location loc, ValueRange args) {
                       Value value =
                           arith::MaximumFOp::create(nb, loc, args[0], args[1]);
                       if (hasHigh)
                         value =
                             arith::MinimumFOp::create(nb, loc, value, args[2]);
                       return value;
                     });
}

ArrayRef<HandlerRow> onnx_to_linalg::elementwiseHandlers() {
  // Broadcasting is NumPy's from opset 7 on (a `broadcast` attribute
  // before); the unary operators' semantics have not changed since 6.
  static const HandlerRow rows[] = {
      {"Add", 7, binary<arith::AddFOp>},
      {"Sub", 7, binary<arith::SubFOp>},
      {"Mul", 7, binary<arith::MulFOp>},
      {"Div", 7, binary<arith::DivFOp>},
      {"Pow", 7, pow},
      {"Neg", 6, unary<arith::NegFOp>},
      {"Sqrt", 6, unary<math::SqrtOp>},
      {"Cos", 7, unary<math::CosOp>},
      {"Erf", 9, unary<math::ErfOp>},
      {"Exp", 6, unary<math::ExpOp>},
      {"Sin", 7, unary<math::SinOp>},
      {"Tanh", 6, unary<math::TanhOp>},
      {"Sigmoid", 6, sigmoid},
      {"Reciprocal", 6, reciprocal},
      {"Relu", 6, relu},
      {"Softplus", 1, softplus},
      {"Clip", 11, clip},
  };
  return rows;
}
