//===- ChunkLengthTypes.cpp - a chunk step typed for any chunk length -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A traced program's chunk step has static types: its windows are C tokens
// long, and so is every tensor computed along them. A last chunk of fewer
// tokens runs the same step on shorter windows; to run it in one
// ttt.chunk_loop, the body's window arguments are `?` along their axis, and
// each op the reroll clones into the body is retyped here from its operands,
// as shape inference would: a linalg op's loop dimension is of run-time size
// when an operand computed along the windows is, its fresh init tensors
// (tensor.empty, filled or not) are made again at those sizes, and reshapes
// and concatenations follow their sources. What each op computes is the
// template's; only the static sizes that stood for C become run-time ones.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::ttt;

tensor::EmptyOp ttt::linalg_raise::freshEmpty(Value value) {
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    value = fill.getOutputs()[0];
  return value.getDefiningOp<tensor::EmptyOp>();
}

namespace {

/// `value` (a fresh tensor, linalg_raise::freshEmpty) made again with type
/// `type`, whose run-time sizes are `sizes`.
Value freshTensorOfType(OpBuilder &b, Location loc, Value value,
                        RankedTensorType type, ArrayRef<Value> sizes) {
  Value made = tensor::EmptyOp::create(b, loc, type, sizes);
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    made =
        linalg::FillOp::create(b, loc, fill.getInputs()[0], made).getResult(0);
  return made;
}

/// Retypes a linalg op whose inputs may have become of run-time size; its
/// fresh operands (tensor.empty, filled or not) are made again to match.
LogicalResult retypeLinalg(OpBuilder &b, linalg::LinalgOp op,
                           std::string &why) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = op.getNumLoops();
  // Each loop dimension's size, read off the operands that are not fresh
  // tensors: static, or one operand dimension of run-time size.
  SmallVector<std::optional<int64_t>> staticSize(numLoops);
  SmallVector<std::pair<Value, int64_t>> dynamicFrom(numLoops);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || linalg_raise::freshEmpty(operand.get()))
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto loopDim = dyn_cast<AffineDimExpr>(expr);
      if (!loopDim)
        continue;
      unsigned l = loopDim.getPosition();
      if (type.isDynamicDim(d))
        dynamicFrom[l] = {operand.get(), d};
      else
        staticSize[l] = type.getDimSize(d);
    }
  }
  for (unsigned l = 0; l < numLoops; ++l)
    if (dynamicFrom[l].first && staticSize[l])
      return why = "an op of the chunk step reads a tensor of the chunk's "
                   "length next to one of a fixed length",
             failure();
  // Fresh operands at the sizes their loop dimensions now have.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    tensor::EmptyOp empty = linalg_raise::freshEmpty(operand.get());
    if (!type || !empty)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    SmallVector<int64_t> shape(type.getShape());
    bool changed = false;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto loopDim = dyn_cast<AffineDimExpr>(expr);
      if (loopDim && dynamicFrom[loopDim.getPosition()].first &&
          !type.isDynamicDim(d)) {
        shape[d] = ShapedType::kDynamic;
        changed = true;
      }
    }
    if (!changed)
      continue;
    // Its run-time sizes: those it had, and the loop dimensions' new ones.
    SmallVector<Value> sizes;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      if (type.isDynamicDim(d)) {
        sizes.push_back(empty.getDynamicSize(d));
      } else if (ShapedType::isDynamic(shape[d])) {
        auto [source, at] =
            dynamicFrom[cast<AffineDimExpr>(expr).getPosition()];
        sizes.push_back(tensor::DimOp::create(b, op.getLoc(), source, at));
      }
    }
    operand.set(freshTensorOfType(b, op.getLoc(), operand.get(),
                                  type.clone(shape), sizes));
  }
  for (auto [result, init] :
       llvm::zip_equal(op->getResults(), op.getDpsInits()))
    result.setType(init.getType());
  return success();
}

} // namespace

FailureOr<Operation *>
ttt::linalg_raise::retypeForAnyChunkLength(OpBuilder &b, Operation *op,
                                           Operation *original, int64_t chunk,
                                           std::string &why) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (failed(retypeLinalg(b, linalgOp, why)))
      return failure();
    return op;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    collapse.getResult().setType(tensor::CollapseShapeOp::inferCollapsedType(
        collapse.getSrcType(), collapse.getReassociationIndices()));
    return op;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    RankedTensorType source = expand.getSrcType();
    RankedTensorType result = expand.getResultType();
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    SmallVector<int64_t> shape(result.getShape());
    bool changed = false;
    for (auto [s, group] : llvm::enumerate(groups)) {
      if (!source.isDynamicDim(s) || llvm::any_of(group, [&](int64_t d) {
            return result.isDynamicDim(d);
          }))
        continue;
      // The one dimension of the group that is C tokens long is the one the
      // chunk's length runs along.
      SmallVector<int64_t> chunkDims;
      for (int64_t d : group)
        if (result.getDimSize(d) == chunk)
          chunkDims.push_back(d);
      if (chunkDims.size() != 1) {
        why = "a reshape of the chunk step splits the chunk's tokens in a way "
              "its sizes do not say";
        return failure();
      }
      shape[chunkDims[0]] = ShapedType::kDynamic;
      changed = true;
    }
    if (!changed)
      return op;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(expand);
    auto made = tensor::ExpandShapeOp::create(
        b, expand.getLoc(), result.clone(shape), expand.getSrc(), groups);
    expand.getResult().replaceAllUsesWith(made.getResult());
    expand.erase();
    return made.getOperation();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    concat.getResult().setType(tensor::ConcatOp::inferResultType(
        concat.getDim(), concat.getInputs().getTypes()));
    return op;
  }
  // Any other op keeps its types: it must read nothing whose type changed.
  for (auto [operand, was] :
       llvm::zip_equal(op->getOperands(), original->getOperands()))
    if (operand.getType() != was.getType()) {
      why = ("'" + op->getName().getStringRef() +
             "' of the chunk step is not retyped for a shorter last chunk")
                .str();
      return failure();
    }
  return op;
}
