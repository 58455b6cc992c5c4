//===- Explain.cpp - the ttt-explain pass ---------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTEXPLAIN
#include "ttt/Dialect/TTT/Transforms/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {
struct TTTExplainPass : ttt::impl::TTTExplainBase<TTTExplainPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (auto layer = dyn_cast<KVBLayerOp>(op))
        layer.emitRemark("ttt-explain: ") << explainLayer(analyzeLayer(layer));
      else if (auto conv = dyn_cast<DWConvLayerOp>(op))
        conv.emitRemark("ttt-explain: ") << explainLayer(analyzeLayer(conv));
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
