//===- ScalarForalls.cpp - scalar-bodied foralls as device loops ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-scalar-foralls`: see Passes.td. A forall of scalar code is one
// kernel; a forall of structured ops stays a host loop of kernels.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPUSCALARFORALLS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {

/// Whether every op in `forall`'s body can run inside one GPU thread.
bool hasScalarBody(scf::ForallOp forall) {
  WalkResult result = forall.getBody()->walk([](Operation *op) {
    if (isa<linalg::LinalgOp, scf::ForallOp, scf::ParallelOp, memref::AllocOp,
            memref::AllocaOp, memref::DeallocOp, memref::CopyOp,
            CallOpInterface>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

struct TTTGPUScalarForallsPass
    : public ttt::impl::TTTGPUScalarForallsBase<TTTGPUScalarForallsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> foralls;
    getOperation()->walk([&](scf::ForallOp forall) {
      // On buffers only: a forall with results still writes tensors.
      if (forall.getNumResults() == 0 && hasScalarBody(forall))
        foralls.push_back(forall);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : foralls) {
      rewriter.setInsertionPoint(forall);
      if (failed(scf::forallToParallelLoop(rewriter, forall))) {
        forall.emitError("ttt-gpu-scalar-foralls: cannot make this forall "
                         "a parallel loop");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
