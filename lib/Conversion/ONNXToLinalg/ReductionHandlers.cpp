//===- ReductionHandlers.cpp - ReduceSum, ReduceMean, ReduceL2 ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A reduction is one `linalg.generic` summing (squares, for the norms) into a
// zero tensor of the kept dims, then a division by the count (a mean) or a
// square root (an L2 norm), then the kept unit dims as an expansion.
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

/// What a reduction computes of the elements it reduces.
enum class Reduction { Sum, Mean, SumSquare, L2 };

static LogicalResult reduce(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why,
                            bool axesAsInput, Reduction kind) {
  bool squares = kind == Reduction::SumSquare || kind == Reduction::L2;
  RankedTensorType type = node.resultType();
  RankedTensorType input = node.inputType(0);
  if (!type || !input || !isa<FloatType>(type.getElementType()) ||
      input.getElementType() != type.getElementType()) {
    why = "its input or result is not a converted float tensor of static "
          "shape";
    return failure();
  }
  std::optional<SmallVector<int64_t>> axes;
  if (axesAsInput) {
    if (node.hasInput(1)) {
      axes = node.constantInts(1);
      if (!axes) {
        why = "its axes are not a constant";
        return failure();
      }
    }
  } else {
    axes = node.intsAttr("axes");
  }
  int64_t rank = input.getRank();
  SmallVector<bool> reduced(rank, false);
  if (!axes || axes->empty()) {
    if (axesAsInput && node.intAttr("noop_with_empty_axes", 0) != 0) {
      results.push_back(node.inputs[0]);
      return success();
    }
    reduced.assign(rank, true);
  }
  for (int64_t axis : axes.value_or(SmallVector<int64_t>{})) {
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank) {
      why = "an axis is outside its input";
      return failure();
    }
    reduced[axis] = true;
  }
  SmallVector<AffineExpr> kept;
  SmallVector<int64_t> keptShape;
  SmallVector<utils::IteratorType> iterators;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(reduced[d] ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
    if (reduced[d]) {
      count *= input.getDimSize(d);
      continue;
    }
    kept.push_back(b.getAffineDimExpr(d));
    keptShape.push_back(input.getDimSize(d));
  }
  Location loc = node.loc();
  Type elem = type.getElementType();
  auto keptType = RankedTensorType::get(keptShape, elem);
  Value init = filledTensor(b, loc, keptType, 0.0);
  MLIRContext *context = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{keptType}, ValueRange{node.inputs[0]}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                          AffineMap::get(rank, 0, kept, context)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value term = args[0];
        if (squares)
          term = arith::MulFOp::create(nb, nl, term, term);
        linalg::YieldOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, args[1], term).getResult());
      });
  Value result = generic.getResult(0);
  if (kind == Reduction::L2)
    result = broadcastElementwise(
        b, loc, ValueRange{result}, keptType,
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return math::SqrtOp::create(nb, nl, args[0]);
        });
  if (kind == Reduction::Mean) {
    double n = static_cast<double>(count);
    result = broadcastElementwise(
        b, loc, ValueRange{result}, keptType,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value divisor =
              arith::ConstantOp::create(nb, nl, FloatAttr::get(elem, n));
          return arith::DivFOp::create(nb, nl, args[0], divisor);
        });
  }
  result = reshapeTo(b, loc, result, type);
  if (!result) {
    why = "its result's shape is not its input's with the axes dropped or "
          "kept";
    return failure();
  }
  results.push_back(result);
  return success();
}

template <bool AxesAsInput, Reduction Kind>
static LogicalResult reduction(OpBuilder &b, const NodeView &node,
                               SmallVectorImpl<Value> &results,
                               std::string &why) {
  return reduce(b, node, results, why, AxesAsInput, Kind);
}

ArrayRef<HandlerRow> onnx_to_linalg::reductionHandlers() {
  // ReduceSum takes its axes as an input from opset 13, the other
  // reductions from 18.
  static const HandlerRow rows[] = {
      {"ReduceL2", 1, reduction<false, Reduction::L2>},
      {"ReduceL2", 18, reduction<true, Reduction::L2>},
      {"ReduceMean", 1, reduction<false, Reduction::Mean>},
      {"ReduceMean", 18, reduction<true, Reduction::Mean>},
      {"ReduceSum", 1, reduction<false, Reduction::Sum>},
      {"ReduceSum", 13, reduction<true, Reduction::Sum>},
      {"ReduceSumSquare", 1, reduction<false, Reduction::SumSquare>},
      {"ReduceSumSquare", 18, reduction<true, Reduction::SumSquare>},
  };
  return rows;
}
