//===- FuseElementwise.cpp - elementwise fusion that keeps GEMMs ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream's elementwise fusion, with one restriction: nothing is fused into
// an op with a reduction loop. A contraction whose operand is computed in
// its body is no longer a GEMM (ttt-contractions-to-blas could not call
// BLAS for it), and its producer would be recomputed once per reduction
// step. A producer is fused only into its only user, so no work is
// duplicated.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTFUSEELEMENTWISE
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
bool fusesIntoLoops(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  return producer && producer->hasOneUse() && consumer &&
         consumer.getNumReductionLoops() == 0;
}

struct TTTFuseElementwisePass
    : public ttt::impl::TTTFuseElementwiseBase<TTTFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, fusesIntoLoops);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
