//===- ExpandRunTimeReshapes.cpp - expands of run-time groups as views ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's expand-strided-metadata computes an expanded dimension of
// run-time size as the source's size over the group's other sizes; a group
// with two run-time sizes has no such quotient and the pass crashes on a null
// size. A layer of run-time batch and heads reshaped `[B·H, T, D]` to
// `[B, H, T, D]` is such a group. The op's output_shape already holds the
// sizes, so the view is written from them before that pass runs.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTEXPANDRUNTIMERESHAPES
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {

/// True if some group of `expand` has more than one run-time size.
bool splitsIntoRunTimeSizes(memref::ExpandShapeOp expand) {
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  for (ReassociationIndices group : expand.getReassociationIndices()) {
    int64_t dynamic = llvm::count_if(
        group, [&](int64_t dim) { return ShapedType::isDynamic(shape[dim]); });
    if (dynamic > 1)
      return true;
  }
  return false;
}

/// `a * b`, folded when both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult lhs,
                      OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs);
  std::optional<int64_t> r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l * *r);
  if (l == 1)
    return rhs;
  if (r == 1)
    return lhs;
  Value lv = getValueOrCreateConstantIndexOp(b, loc, lhs);
  Value rv = getValueOrCreateConstantIndexOp(b, loc, rhs);
  return arith::MulIOp::create(b, loc, lv, rv).getResult();
}

/// Returns `expand` written as a reinterpret cast of its source's base
/// buffer, or failure where the source has no strided layout.
FailureOr<Value> asReinterpretCast(OpBuilder &b, memref::ExpandShapeOp expand) {
  Location loc = expand.getLoc();
  MemRefType resultType = expand.getResultType();
  SmallVector<int64_t> resultStrides, staticSourceStrides;
  int64_t resultOffset, sourceOffset;
  if (failed(resultType.getStridesAndOffset(resultStrides, resultOffset)) ||
      failed(expand.getSrcType().getStridesAndOffset(staticSourceStrides,
                                                     sourceOffset)))
    return failure();
  auto metadata =
      memref::ExtractStridedMetadataOp::create(b, loc, expand.getSrc());
  SmallVector<OpFoldResult> sourceStrides =
      getMixedValues(staticSourceStrides, metadata.getStrides(), b);
  SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
  SmallVector<OpFoldResult> strides(sizes.size());
  for (auto [source, group] :
       llvm::enumerate(expand.getReassociationIndices())) {
    strides[group.back()] = sourceStrides[source];
    for (size_t i = group.size() - 1; i > 0; --i)
      strides[group[i - 1]] =
          multiply(b, loc, strides[group[i]], sizes[group[i]]);
  }
  // The result type's static entries are what the cast must state.
  for (auto [dim, stride] : llvm::enumerate(resultStrides))
    if (!ShapedType::isDynamic(stride))
      strides[dim] = b.getIndexAttr(stride);
  OpFoldResult offset = ShapedType::isDynamic(resultOffset)
                            ? OpFoldResult(metadata.getOffset())
                            : OpFoldResult(b.getIndexAttr(resultOffset));
  return memref::ReinterpretCastOp::create(b, loc, resultType,
                                           metadata.getBaseBuffer(), offset,
                                           sizes, strides)
      .getResult();
}

struct TTTExpandRunTimeReshapesPass
    : public ttt::impl::TTTExpandRunTimeReshapesBase<
          TTTExpandRunTimeReshapesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> expands;
    getOperation()->walk([&](memref::ExpandShapeOp expand) {
      if (splitsIntoRunTimeSizes(expand))
        expands.push_back(expand);
    });
    for (memref::ExpandShapeOp expand : expands) {
      OpBuilder b(expand);
      FailureOr<Value> view = asReinterpretCast(b, expand);
      if (failed(view)) {
        expand.emitError("cannot lower a reshape that splits a dimension "
                         "into several run-time sizes: its source has no "
                         "strided layout");
        return signalPassFailure();
      }
      expand.replaceAllUsesWith(*view);
      expand.erase();
    }
  }
};

} // namespace
