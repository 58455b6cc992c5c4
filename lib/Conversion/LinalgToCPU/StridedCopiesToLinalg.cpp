//===- StridedCopiesToLinalg.cpp - copies LLVM can vectorize -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The LLVM lowering of memref.copy is a memcpy only when both buffers are
// contiguous with a static shape or an identity layout. Any other copy (a
// chunk state written into a slot of the stacked states, a window of a
// dynamic size) becomes a call of the runner utilities' `memrefCopy`, which
// moves one element at a time through a generic index walk. As linalg.copy,
// the same copy lowers to loops whose innermost one LLVM vectorizes.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTSTRIDEDCOPIESTOLINALG
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {

/// What FinalizeMemRefToLLVM lowers to a memcpy.
bool lowersToMemcpy(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    (memref.hasStaticShape() && memref.getNumElements() > 0 &&
                     memref::isStaticShapeAndContiguousRowMajor(memref)));
}

struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    Type source = copy.getSource().getType(),
         target = copy.getTarget().getType();
    if (!isa<MemRefType>(source) || !isa<MemRefType>(target))
      return rewriter.notifyMatchFailure(copy, "unranked buffer");
    if (lowersToMemcpy(source) && lowersToMemcpy(target))
      return rewriter.notifyMatchFailure(copy, "lowers to a memcpy");
    if (cast<MemRefType>(source).getRank() == 0)
      return rewriter.notifyMatchFailure(copy, "a single element");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    return success();
  }
};

struct TTTStridedCopiesToLinalgPass
    : public ttt::impl::TTTStridedCopiesToLinalgBase<
          TTTStridedCopiesToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
