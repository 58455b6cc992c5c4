//===- ResolveRaised.cpp - the ttt-resolve-raised pass --------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRESOLVERAISED
#include "ttt/Dialect/TTT/Transforms/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

/// The ttt layer op left in the computation of `value`, if any.
static Operation *remainingLayer(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return nullptr;
  if (isa<KVBLayerOp, DWConvLayerOp>(def))
    return def;
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  (void)getBackwardSlice(def, &slice, options);
  for (Operation *op : slice)
    if (isa<KVBLayerOp, DWConvLayerOp>(op))
      return op;
  return nullptr;
}

/// Erases `root`'s op and, transitively, what only it needed.
static void eraseDeadComputation(Value root) {
  SmallVector<Operation *> worklist;
  if (Operation *def = root.getDefiningOp())
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->getBlock() || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    op->erase();
  }
}

namespace {
struct TTTResolveRaisedPass
    : ttt::impl::TTTResolveRaisedBase<TTTResolveRaisedPass> {
  void runOnOperation() override {
    SmallVector<RaisedOp> raised;
    getOperation()->walk([&](RaisedOp op) { raised.push_back(op); });
    for (RaisedOp op : raised) {
      Value layer = op.getRaised(), nodes = op.getOriginal();
      Value kept = layer, dropped = nodes;
      if (Operation *left = remainingLayer(layer)) {
        std::string why;
        if (auto kvb = dyn_cast<KVBLayerOp>(left))
          why = explainLayer(analyzeLayer(kvb));
        else
          why = explainLayer(analyzeLayer(cast<DWConvLayerOp>(left)));
        left->emitRemark("kept its original nodes (the model computes what "
                         "it computed; no simplification named above "
                         "applies): after the passes it is still a ttt layer, "
                         "which the model's format cannot express (")
            << why << ")";
        kept = nodes;
        dropped = layer;
      } else {
        op.emitRemark("rewritten: after the passes the layer is linear "
                      "attention, which replaces its original nodes");
      }
      op.getResult().replaceAllUsesWith(kept);
      op->erase();
      eraseDeadComputation(dropped);
    }
  }
};
} // namespace
