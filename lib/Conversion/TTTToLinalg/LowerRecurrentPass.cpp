//===- LowerRecurrentPass.cpp - the ttt-lower-recurrent pass --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LowerRecurrent.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTLOWERRECURRENT
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

void mlir::ttt::populateTTTLowerRecurrentPatterns(RewritePatternSet &patterns) {
  populateLowerKVBLayerPatterns(patterns);
  populateLowerDWConvLayerPatterns(patterns);
  populateLowerChunkLoopPatterns(patterns);
}

namespace {
struct TTTLowerRecurrentPass
    : ttt::impl::TTTLowerRecurrentBase<TTTLowerRecurrentPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTTTLowerRecurrentPatterns(patterns);
    // Only the layer ops are rewritten; folding is left to later passes so
    // that the emitted structure stays what the lit tests document.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    WalkResult leftover = getOperation()->walk([](Operation *op) {
      if (isa<KVBLayerOp, DWConvLayerOp, ChunkLoopOp>(op)) {
        op->emitOpError("could not be lowered to its recurrent reference");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
