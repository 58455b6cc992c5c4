//===- DuplicateFills.cpp - one filled tensor per user --------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// CSE merges the equal `linalg.fill`s of empty tensors (every contraction's
// zero accumulator, say) into one value with many users, also replacing a
// fill inside a loop by an equal one before it. Each user writes its init, so
// bufferization then gives each (in each iteration) a copy of one buffer of
// zeros. With a fill of its own right before each user, every init bufferizes
// in place: the fill writes the user's buffer directly, and a GEMM call can
// skip it (ttt-contractions-to-blas overwrites C).
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTDUPLICATEFILLS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTDuplicateFillsPass
    : public ttt::impl::TTTDuplicateFillsBase<TTTDuplicateFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> shared;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (!fill.hasPureTensorSemantics() ||
          !fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
        return;
      Value filled = fill->getResult(0);
      bool alone =
          filled.hasOneUse() &&
          filled.getUses().begin()->getOwner()->getBlock() == fill->getBlock();
      if (!filled.use_empty() && !alone)
        shared.push_back(fill);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::FillOp fill : shared) {
      auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : fill->getResult(0).getUses())
        uses.push_back(&use);
      // The first user in the fill's own block keeps the original; every
      // other gets a copy right before it: inside its loop when it is in
      // one, where a fill hoisted out of the loop would be copied in every
      // iteration.
      OpOperand *keeper = nullptr;
      for (OpOperand *use : uses) {
        Operation *owner = use->getOwner();
        if (owner->getBlock() == fill->getBlock() &&
            (!keeper || owner->isBeforeInBlock(keeper->getOwner())))
          keeper = use;
      }
      for (OpOperand *use : uses) {
        if (use == keeper)
          continue;
        rewriter.setInsertionPoint(use->getOwner());
        Operation *emptyCopy = rewriter.clone(*empty);
        IRMapping mapping;
        mapping.map(empty.getResult(), emptyCopy->getResult(0));
        Operation *fillCopy = rewriter.clone(*fill, mapping);
        rewriter.modifyOpInPlace(use->getOwner(),
                                 [&] { use->set(fillCopy->getResult(0)); });
      }
      if (fill->use_empty())
        rewriter.eraseOp(fill);
    }
  }
};
} // namespace
