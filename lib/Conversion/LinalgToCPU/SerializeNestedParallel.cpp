//===- SerializeNestedParallel.cpp - one level of parallel loops ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// scf-to-openmp turns every scf.parallel into an OpenMP parallel region; a
// parallel loop inside another (an op's loops inside a per-stream loop)
// would open a region per iteration of the outer one, which costs far more
// than the work it shares out. Only the outermost parallel loops stay
// parallel; the ones they contain become scf.for nests.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTSERIALIZENESTEDPARALLEL
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTSerializeNestedParallelPass
    : public ttt::impl::TTTSerializeNestedParallelBase<
          TTTSerializeNestedParallelPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> nested;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op->getParentOfType<scf::ParallelOp>())
        nested.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // Innermost first, so that each rewrite leaves its parents in place.
    for (scf::ParallelOp op : llvm::reverse(nested)) {
      rewriter.setInsertionPoint(op);
      if (failed(scf::parallelForToNestedFors(rewriter, op))) {
        op.emitError("cannot serialize this parallel loop");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
