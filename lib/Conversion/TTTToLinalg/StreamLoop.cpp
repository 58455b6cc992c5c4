//===- StreamLoop.cpp - one scf.forall iteration per independent stream ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "StreamLoop.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ttt;

FloatType mlir::ttt::getComputeType(FloatType elementType, Builder &builder) {
  return elementType.getWidth() < 32 ? builder.getF32Type() : elementType;
}

SmallVector<Value> mlir::ttt::buildStreamLoop(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> outer,
    ValueRange outputs,
    function_ref<SmallVector<Value>(Value i, Value j, ValueRange slices)>
        body) {
  assert(outer.size() == 2 && "a stream is indexed by two outer dims");
  auto forall = scf::ForallOp::create(b, loc, outer, outputs, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  Value i = forall.getInductionVars()[0];
  Value j = forall.getInductionVars()[1];
  OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1);
  SmallVector<Value> slices;
  for (Value shared : forall.getRegionIterArgs()) {
    auto type = cast<RankedTensorType>(shared.getType());
    SmallVector<OpFoldResult> sizes{unit, unit,
                                    tensor::getMixedSize(b, loc, shared, 2),
                                    tensor::getMixedSize(b, loc, shared, 3)};
    auto sliceType =
        tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(2, type,
                                                                    sizes);
    slices.push_back(tensor::ExtractSliceOp::create(
        b, loc, sliceType, shared, SmallVector<OpFoldResult>{i, j, zero, zero},
        sizes, SmallVector<OpFoldResult>(4, unit)));
  }
  SmallVector<Value> pieces = body(i, j, slices);
  assert(pieces.size() == outputs.size() && "one piece per output");
  // Sizes are computed in the body: the terminator holds only inserts.
  SmallVector<SmallVector<OpFoldResult>> sizes;
  for (Value piece : pieces)
    sizes.push_back({unit, unit, tensor::getMixedSize(b, loc, piece, 0),
                     tensor::getMixedSize(b, loc, piece, 1)});
  b.setInsertionPointToEnd(forall.getTerminator().getBody());
  for (auto [piece, dest, size] :
       llvm::zip(pieces, forall.getRegionIterArgs(), sizes))
    tensor::ParallelInsertSliceOp::create(b, loc, piece, dest,
                                          {i, j, zero, zero}, size,
                                          SmallVector<OpFoldResult>(4, unit));
  return SmallVector<Value>(forall.getResults());
}
