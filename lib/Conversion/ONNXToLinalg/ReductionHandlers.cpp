//===- ReductionHandlers.cpp - ReduceSum and ReduceMean ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A reduction is one `linalg.generic` summing into a zero tensor of the kept
// dims, then (for a mean) a division by the count, then the kept unit dims
// as an expansion.
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

static LogicalResult reduce(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why,
                            bool axesAsInput, bool mean) {
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
  Value zero = arith::ConstantOp::create(b, loc, FloatAttr::get(elem, 0.0));
  Value init =
      linalg::FillOp::create(b, loc, zero, emptyTensor(b, loc, keptType))
          .getResult(0);
  MLIRContext *context = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{keptType}, ValueRange{node.inputs[0]}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                          AffineMap::get(rank, 0, kept, context)},
      iterators, [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(
            nb, nl,
            arith::AddFOp::create(nb, nl, args[1], args[0]).getResult());
      });
  Value result = generic.getResult(0);
  if (mean) {
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

template <bool AxesAsInput, bool Mean>
static LogicalResult reduction(OpBuilder &b, const NodeView &node,
                               SmallVectorImpl<Value> &results,
                               std::string &why) {
  return reduce(b, node, results, why, AxesAsInput, Mean);
}

ArrayRef<HandlerRow> onnx_to_linalg::reductionHandlers() {
  // ReduceSum takes its axes as an input from opset 13, the other
  // reductions from 18.
  static const HandlerRow rows[] = {
      {"ReduceSum", 1, reduction<false, false>},
      {"ReduceSum", 13, reduction<true, false>},
      {"ReduceMean", 1, reduction<false, true>},
      {"ReduceMean", 18, reduction<true, true>},
  };
  return rows;
}
