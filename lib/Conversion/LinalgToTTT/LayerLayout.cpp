//===- LayerLayout.cpp - a chunk loop's operands in the layer op's layout -===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LayerLayout.h"
#include "ChunkLoopForms.h"

using namespace mlir;
using namespace mlir::ttt;

Value linalg_raise::scaled(RewriterBase &b, Location loc, Value value,
                           double factor) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg_raise::scaledInto(
      b, loc, value,
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext()), init,
      factor, /*accumulate=*/false);
}

SmallVector<Value>
linalg_raise::sequencesOverTheLoopLength(RewriterBase &rewriter,
                                         ChunkLoopOp loop) {
  SmallVector<Value> sequences(loop.getSequences());
  if (loop.isSingleChunk() || sequences.empty())
    return sequences;
  Location loc = loop.getLoc();
  Value first = sequences.front();
  int64_t firstAxis = loop.getWindowAxes().front();
  int64_t firstLength =
      cast<RankedTensorType>(first.getType()).getDimSize(firstAxis);
  // One length for every cut (one tensor.dim when it is a run-time one).
  OpFoldResult length;
  for (auto [index, value] : llvm::enumerate(loop.getSequences())) {
    int64_t axis = loop.getWindowAxes()[index];
    auto type = cast<RankedTensorType>(value.getType());
    if (index == 0 || (!ShapedType::isDynamic(firstLength) &&
                       type.getDimSize(axis) == firstLength))
      continue;
    if (!length)
      length = tensor::getMixedSize(rewriter, loc, first, firstAxis);
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(
          d == axis ? length : tensor::getMixedSize(rewriter, loc, value, d));
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
    sequences[index] = tensor::ExtractSliceOp::create(rewriter, loc, value,
                                                      offsets, sizes, strides);
  }
  return sequences;
}

ScheduleAttr linalg_raise::scheduleOf(ChunkLoopOp loop, UpdateOrder order) {
  MLIRContext *context = loop.getContext();
  return loop.isSingleChunk()
             ? ScheduleAttr::get(context, ScheduleKind::full_batch, 0,
                                 UpdateOrder::apply_then_update, 1)
             : ScheduleAttr::get(context, ScheduleKind::chunked,
                                 loop.getChunk(), order, 1);
}

NewtonSchulzAttr
linalg_raise::newtonSchulzAttr(MLIRContext *context,
                               const std::optional<NewtonSchulzReading> &muon) {
  if (!muon)
    return {};
  return NewtonSchulzAttr::get(context, muon->steps,
                               DenseF64ArrayAttr::get(context, muon->coeffs),
                               APFloat(muon->eps), muon->compute);
}

RankedTensorType linalg_raise::layerOutputType(Value q, Value v) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  return RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                                qType.getDimSize(2), vType.getDimSize(3)},
                               qType.getElementType());
}

SmallVector<Value> linalg_raise::readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (Value operand : inner->getOperands())
      if (!op->isAncestor(operand.getParentRegion()->getParentOp()))
        values.push_back(operand);
  });
  return values;
}

llvm::SmallPtrSet<Value, 8> linalg_raise::argumentsOf(Value value) {
  llvm::SmallPtrSet<Value, 8> arguments;
  llvm::SmallPtrSet<Operation *, 32> seen;
  SmallVector<Value> stack{value};
  while (!stack.empty()) {
    Value next = stack.pop_back_val();
    Operation *op = next.getDefiningOp();
    if (!op) {
      arguments.insert(next);
      continue;
    }
    if (seen.insert(op).second)
      llvm::append_range(stack, readValues(op));
  }
  return arguments;
}

bool linalg_raise::readsValue(Value value, Value target) {
  SmallVector<Value> stack{value};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Value next = stack.pop_back_val();
    if (next == target)
      return true;
    if (!seen.insert(next).second)
      continue;
    if (Operation *op = next.getDefiningOp()) {
      llvm::append_range(stack, op->getOperands());
      op->walk([&](Operation *inner) {
        llvm::append_range(stack, inner->getOperands());
      });
    }
  }
  return false;
}
