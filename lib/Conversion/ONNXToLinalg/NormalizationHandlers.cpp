//===- NormalizationHandlers.cpp - comparisons, selects, norms, GELU ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The nodes around a TTT layer that are not sums of products: comparisons
// and selects (a softplus's threshold), masks (Trilu), Softmax,
// LayerNormalization and GELU, each in the `linalg.generic` spelling
// torch-mlir writes, so that the reader sees them as what they are: not
// polynomials.
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

/// Every input converted and of static shape.
static bool convertedInputs(const NodeView &node, unsigned count,
                            std::string &why) {
  for (unsigned i = 0; i < count; ++i)
    if (!node.inputType(i)) {
      why = "input " + std::to_string(i) +
            " is not a converted tensor of static shape";
      return false;
    }
  return true;
}

template <arith::CmpFPredicate Predicate>
static LogicalResult compare(OpBuilder &b, const NodeView &node,
                             SmallVectorImpl<Value> &results,
                             std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || !type.getElementType().isInteger(1) || node.numInputs() != 2 ||
      !convertedInputs(node, 2, why) ||
      !isa<FloatType>(node.inputType(0).getElementType()) ||
      node.inputType(0).getElementType() !=
          node.inputType(1).getElementType()) {
    if (why.empty())
      why = "it does not compare two float tensors into a bool tensor";
    return failure();
  }
  return pushElementwise(
      b, node, node.inputs, type,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return arith::CmpFOp::create(nb, loc, Predicate, args[0], args[1]);
      },
      results, why);
}

static LogicalResult logicalNot(OpBuilder &b, const NodeView &node,
                                SmallVectorImpl<Value> &results,
                                std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || !type.getElementType().isInteger(1) ||
      !convertedInputs(node, 1, why) || node.inputType(0) != type) {
    if (why.empty())
      why = "it does not negate a bool tensor";
    return failure();
  }
  return pushElementwise(
      b, node, node.inputs, type,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value one = arith::ConstantOp::create(nb, loc, nb.getI1Type(),
                                              nb.getBoolAttr(true));
        return arith::XOrIOp::create(nb, loc, args[0], one);
      },
      results, why);
}

/// And, Or, Xor of two bool tensors (masks combined), NumPy broadcasting.
template <typename LogicOp>
static LogicalResult logical(OpBuilder &b, const NodeView &node,
                             SmallVectorImpl<Value> &results,
                             std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || !type.getElementType().isInteger(1) || node.numInputs() != 2 ||
      !convertedInputs(node, 2, why) ||
      !node.inputType(0).getElementType().isInteger(1) ||
      !node.inputType(1).getElementType().isInteger(1)) {
    if (why.empty())
      why = "it does not combine two bool tensors";
    return failure();
  }
  return pushElementwise(
      b, node, node.inputs, type,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return LogicOp::create(nb, loc, args[0], args[1]);
      },
      results, why);
}

static LogicalResult where(OpBuilder &b, const NodeView &node,
                           SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || node.numInputs() != 3 || !convertedInputs(node, 3, why) ||
      !node.inputType(0).getElementType().isInteger(1) ||
      node.inputType(1).getElementType() != type.getElementType() ||
      node.inputType(2).getElementType() != type.getElementType()) {
    if (why.empty())
      why = "it does not select between two tensors of its type by a bool "
            "tensor";
    return failure();
  }
  return pushElementwise(
      b, node, node.inputs, type,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return arith::SelectOp::create(nb, loc, args[0], args[1], args[2]);
      },
      results, why);
}

static LogicalResult trilu(OpBuilder &b, const NodeView &node,
                           SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || !convertedInputs(node, 1, why) || type.getRank() < 2 ||
      node.inputType(0) != type) {
    if (why.empty())
      why = "its input is not a matrix (or a batch of them) of its type";
    return failure();
  }
  int64_t k = 0;
  if (node.hasInput(1)) {
    std::optional<SmallVector<int64_t>> given = node.constantInts(1);
    if (!given || given->size() != 1) {
      why = "its diagonal offset is not a constant";
      return failure();
    }
    k = given->front();
  }
  bool upper = node.intAttr("upper", 1) != 0;
  int64_t rank = type.getRank();
  Value result = broadcastElementwise(
      b, node.loc(), node.inputs.take_front(), type,
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value row = linalg::IndexOp::create(nb, loc, rank - 2);
        Value column = linalg::IndexOp::create(nb, loc, rank - 1);
        Value offset = arith::SubIOp::create(nb, loc, column, row);
        Value bound = arith::ConstantIndexOp::create(nb, loc, k);
        Value keep = arith::CmpIOp::create(nb, loc,
                                           upper ? arith::CmpIPredicate::sge
                                                 : arith::CmpIPredicate::sle,
                                           offset, bound);
        Value zero = arith::ConstantOp::create(
            nb, loc, nb.getZeroAttr(args[0].getType()));
        return arith::SelectOp::create(nb, loc, keep, args[0], zero);
      });
  results.push_back(result);
  return success();
}

/// `combine` of `input` over the dims from `axis` on, into a tensor of the
/// other dims filled with `init`.
static Value reduceTrailing(
    OpBuilder &b, Location loc, Value input, int64_t axis, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  auto keptType = RankedTensorType::get(type.getShape().take_front(axis),
                                        type.getElementType());
  Value filled = filledTensor(b, loc, keptType, init);
  SmallVector<utils::IteratorType> iterators;
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(d < axis ? utils::IteratorType::parallel
                                 : utils::IteratorType::reduction);
    if (d < axis)
      kept.push_back(b.getAffineDimExpr(d));
  }
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{keptType}, ValueRange{input}, ValueRange{filled},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                          AffineMap::get(rank, 0, kept, b.getContext())},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, combine(nb, nl, args[1], args[0]));
      });
  return generic.getResult(0);
}

/// `body(x, stat)` of each element of `input` and the statistic of its
/// leading dims.
static Value
withStatistic(OpBuilder &b, Location loc, Value input, Value statistic,
              function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  int64_t kept = cast<RankedTensorType>(statistic.getType()).getRank();
  SmallVector<AffineExpr> leading;
  for (int64_t d = 0; d < kept; ++d)
    leading.push_back(b.getAffineDimExpr(d));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{input, statistic},
      ValueRange{emptyTensor(b, loc, type)},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                          AffineMap::get(rank, 0, leading, b.getContext()),
                          b.getMultiDimIdentityMap(rank)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args[0], args[1]));
      });
  return generic.getResult(0);
}

static LogicalResult softmaxWith(OpBuilder &b, const NodeView &node,
                                 SmallVectorImpl<Value> &results,
                                 std::string &why, int64_t defaultAxis) {
  RankedTensorType type = node.resultType();
  if (!type || !convertedInputs(node, 1, why) || node.inputType(0) != type ||
      !isa<FloatType>(type.getElementType())) {
    if (why.empty())
      why = "its input is not a float tensor of its type";
    return failure();
  }
  int64_t rank = type.getRank();
  int64_t axis = node.intAttr("axis", defaultAxis);
  if (axis < 0)
    axis += rank;
  // Before opset 13 Softmax normalizes the flattened trailing dims; from
  // 13 on one axis. The two agree on the last axis, the only one read here.
  if (axis != rank - 1) {
    why = "it normalizes another axis than the last";
    return failure();
  }
  Location loc = node.loc();
  Value x = node.inputs[0];
  Value max = reduceTrailing(
      b, loc, x, axis, -INFINITY,
      [](OpBuilder &nb, Location nl, Value acc, Value in) -> Value {
        return arith::MaximumFOp::create(nb, nl, acc, in);
      });
  Value exp = withStatistic(
      b, loc, x, max, [](OpBuilder &nb, Location nl, Value in, Value m) {
        Value shifted = arith::SubFOp::create(nb, nl, in, m);
        return math::ExpOp::create(nb, nl, shifted).getResult();
      });
  Value sum = reduceTrailing(
      b, loc, exp, axis, 0.0,
      [](OpBuilder &nb, Location nl, Value acc, Value in) -> Value {
        return arith::AddFOp::create(nb, nl, acc, in);
      });
  results.push_back(withStatistic(
      b, loc, exp, sum, [](OpBuilder &nb, Location nl, Value in, Value s) {
        return arith::DivFOp::create(nb, nl, in, s).getResult();
      }));
  return success();
}

/// The axis is 1 by default before opset 13, the last one from then on.
template <int64_t DefaultAxis>
static LogicalResult softmax(OpBuilder &b, const NodeView &node,
                             SmallVectorImpl<Value> &results,
                             std::string &why) {
  return softmaxWith(b, node, results, why, DefaultAxis);
}

static LogicalResult layerNorm(OpBuilder &b, const NodeView &node,
                               SmallVectorImpl<Value> &results,
                               std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || node.node->getNumResults() != 1 ||
      !convertedInputs(node, 2, why) || node.inputType(0) != type ||
      !isa<FloatType>(type.getElementType())) {
    if (why.empty())
      why = "it is not one float LayerNormalization output of its input's "
            "type";
    return failure();
  }
  if (node.hasInput(2) && !node.inputType(2)) {
    why = "its bias is not a converted tensor";
    return failure();
  }
  int64_t rank = type.getRank();
  int64_t axis = node.intAttr("axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    why = "its axis is outside its input";
    return failure();
  }
  double epsilon = node.floatAttr("epsilon").value_or(1e-5);
  int64_t count = 1;
  for (int64_t d = axis; d < rank; ++d)
    count *= type.getDimSize(d);
  Type elem = type.getElementType();
  Location loc = node.loc();
  Value x = node.inputs[0];
  auto addInto = [](OpBuilder &nb, Location nl, Value acc, Value in) -> Value {
    return arith::AddFOp::create(nb, nl, acc, in);
  };
  double n = static_cast<double>(count);
  Value sum = reduceTrailing(b, loc, x, axis, 0.0, addInto);
  Value centered = withStatistic(
      b, loc, x, sum, [&](OpBuilder &nb, Location nl, Value in, Value s) {
        Value mean =
            arith::DivFOp::create(nb, nl, s, scalarConstant(nb, nl, elem, n));
        return arith::SubFOp::create(nb, nl, in, mean).getResult();
      });
  Value squares = broadcastElementwise(
      b, loc, ValueRange{centered}, type,
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::MulFOp::create(nb, nl, args[0], args[0]);
      });
  Value squareSum = reduceTrailing(b, loc, squares, axis, 0.0, addInto);
  Value normalized = withStatistic(
      b, loc, centered, squareSum,
      [&](OpBuilder &nb, Location nl, Value in, Value s) {
        Value variance =
            arith::DivFOp::create(nb, nl, s, scalarConstant(nb, nl, elem, n));
        Value shifted = arith::AddFOp::create(
            nb, nl, variance, scalarConstant(nb, nl, elem, epsilon));
        Value deviation = math::SqrtOp::create(nb, nl, shifted);
        return arith::DivFOp::create(nb, nl, in, deviation).getResult();
      });
  SmallVector<Value> affine{normalized, node.inputs[1]};
  if (node.hasInput(2))
    affine.push_back(node.inputs[2]);
  Value result = broadcastElementwise(
      b, loc, affine, type,
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value scaled = arith::MulFOp::create(nb, nl, args[0], args[1]);
        if (args.size() > 2)
          return arith::AddFOp::create(nb, nl, scaled, args[2]);
        return scaled;
      });
  if (!result) {
    why = "its scale or bias does not broadcast to its input";
    return failure();
  }
  results.push_back(result);
  return success();
}

static LogicalResult gelu(OpBuilder &b, const NodeView &node,
                          SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || !convertedInputs(node, 1, why) || node.inputType(0) != type ||
      !isa<FloatType>(type.getElementType())) {
    if (why.empty())
      why = "its input is not a float tensor of its type";
    return failure();
  }
  auto approximate =
      dyn_cast_or_null<StringAttr>(node.node.getONNXAttr("approximate"));
  bool tanhForm = approximate && approximate.getValue() == "tanh";
  Type elem = type.getElementType();
  results.push_back(broadcastElementwise(
      b, node.loc(), node.inputs.take_front(), type,
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value x = args[0];
        Value inner;
        if (tanhForm) {
          Value cube = arith::MulFOp::create(
              nb, loc, arith::MulFOp::create(nb, loc, x, x), x);
          Value poly = arith::AddFOp::create(
              nb, loc, x,
              arith::MulFOp::create(nb, loc, cube,
                                    scalarConstant(nb, loc, elem, 0.044715)));
          inner = math::TanhOp::create(
              nb, loc,
              arith::MulFOp::create(
                  nb, loc, poly,
                  scalarConstant(nb, loc, elem, std::sqrt(2.0 / M_PI))));
        } else {
          inner = math::ErfOp::create(
              nb, loc,
              arith::MulFOp::create(nb, loc, x,
                                    scalarConstant(nb, loc, elem, M_SQRT1_2)));
        }
        Value one = scalarConstant(nb, loc, elem, 1.0);
        Value half = scalarConstant(nb, loc, elem, 0.5);
        Value gate = arith::AddFOp::create(nb, loc, one, inner);
        return arith::MulFOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, half, x), gate);
      }));
  return success();
}

ArrayRef<HandlerRow> onnx_to_linalg::normalizationHandlers() {
  static const HandlerRow rows[] = {
      {"Greater", 7, compare<arith::CmpFPredicate::OGT>},
      {"Less", 7, compare<arith::CmpFPredicate::OLT>},
      {"GreaterOrEqual", 12, compare<arith::CmpFPredicate::OGE>},
      {"LessOrEqual", 12, compare<arith::CmpFPredicate::OLE>},
      {"Equal", 11, compare<arith::CmpFPredicate::OEQ>},
      {"Not", 1, logicalNot},
      {"And", 7, logical<arith::AndIOp>},
      {"Or", 7, logical<arith::OrIOp>},
      {"Xor", 7, logical<arith::XOrIOp>},
      {"Where", 9, where},
      {"Trilu", 14, trilu},
      {"Softmax", 1, softmax<1>},
      {"Softmax", 13, softmax<-1>},
      {"LayerNormalization", 17, layerNorm},
      {"Gelu", 20, gelu},
  };
  return rows;
}
