//===- Explain.cpp - the ttt-explain pass ---------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/Analysis/FormChoice.h"
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
  using TTTExplainBase::TTTExplainBase;

  void runOnOperation() override {
    unsigned targetCores = cores ? unsigned(cores) : getHostCores();
    getOperation()->walk([&](Operation *op) {
      if (auto layer = dyn_cast<KVBLayerOp>(op)) {
        LayerFacts facts = analyzeLayer(layer);
        InFlightDiagnostic remark = layer.emitRemark("ttt-explain: ");
        remark << explainLayer(facts);
        if (facts.rewritable && !hasEmptySequence(layer)) {
          FormChoice choice = chooseForm(layer, targetCores);
          remark << "; on " << targetCores
                 << " CPU cores ttt-to-cpu (form=auto) runs it in the "
                 << (choice.parallel ? "parallel" : "recurrent")
                 << " form: " << choice.reason;
        }
      } else if (auto conv = dyn_cast<DWConvLayerOp>(op))
        conv.emitRemark("ttt-explain: ") << explainLayer(analyzeLayer(conv));
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
