//===- RaiseONNXChunks.cpp - ONNX layers through ttt.chunk_loop ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX front end of the canonical route: a graph read as linalg
// (GraphToFunc.h), the formers and the reader of `ttt.chunk_loop` run on
// it, and what they raised written back (WriteBack.h).
//
//===----------------------------------------------------------------------===//

#include "GraphToFunc.h"
#include "WriteBack.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRAISEONNXCHUNKS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

/// The layer as the remarks name it.
static std::string describeLayer(KVBLayerOp layer) {
  ScheduleAttr schedule = layer.getSchedule();
  std::string form = schedule.getKind() == ScheduleKind::full_batch
                         ? "one chunk"
                         : "chunks of " + std::to_string(schedule.getSize());
  std::string text = form + ", one linear fast weight";
  if (layer.getMomentum())
    text += " with momentum";
  return text + " (read through ttt.chunk_loop)";
}

namespace {
struct TTTRaiseONNXChunksPass
    : public mlir::ttt::impl::TTTRaiseONNXChunksBase<TTTRaiseONNXChunksPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<onnx::GraphOp> graphs;
    for (auto graph : getOperation().getOps<onnx::GraphOp>())
      graphs.push_back(graph);
    for (onnx::GraphOp graph : graphs)
      if (failed(raise(graph)))
        return signalPassFailure();
  }

  LogicalResult raise(onnx::GraphOp graph) {
    ConvertedGraph converted(graph);
    if (explain) {
      InFlightDiagnostic remark = graph.emitRemark()
                                  << "ttt-raise-onnx-chunks: "
                                  << converted.converted
                                  << " nodes read as linalg";
      if (!converted.opaque.empty())
        remark << "; " << converted.opaque.size() << " left out";
      for (OpaqueNode &node : converted.opaque)
        remark.attachNote(node.node.getLoc())
            << "'" << node.node.getOpType() << "' left out: " << node.reason;
    }
    // The route's own remarks are about the function; they reach the user
    // as remarks on the graph.
    SmallVector<std::string> found;
    ModuleOp inner = *converted.module;
    getOperation().getBody()->push_back(inner);
    LogicalResult ran = [&] {
      ScopedDiagnosticHandler capture(&getContext(), [&](Diagnostic &diag) {
        if (diag.getSeverity() != DiagnosticSeverity::Remark)
          return failure();
        found.push_back(diag.str());
        return success();
      });
      OpPassManager pm(ModuleOp::getOperationName());
      pm.addPass(createTTTRerollChunks(TTTRerollChunksOptions{true}));
      pm.addPass(createTTTRaiseChunkLoops(TTTRaiseChunkLoopsOptions{true}));
      return runPipeline(pm, inner);
    }();
    inner->remove();
    if (failed(ran))
      return failure();
    if (explain)
      for (const std::string &text : found)
        graph.emitRemark() << text;

    SmallVector<KVBLayerOp> layers;
    converted.func.walk([&](KVBLayerOp layer) { layers.push_back(layer); });
    if (layers.empty())
      return success();
    // A layer the rewrite cannot take stays as the model has it.
    for (KVBLayerOp layer : layers) {
      LayerFacts facts = analyzeLayer(layer);
      if (!facts.rewritable) {
        graph.emitRemark() << "TTT layer: " << describeLayer(layer)
                           << ": left as it was: " << explainLayer(facts);
        return success();
      }
    }
    std::string why;
    SmallVector<Replacement> replaced;
    FailureOr<onnx::GraphOp> copy = writeBack(converted, replaced, why);
    if (failed(copy)) {
      graph.emitRemark() << "TTT layer: " << describeLayer(layers.front())
                         << ": left as it was: " << why;
      return success();
    }
    for (const Replacement &replacement : replaced)
      for (Operation *op : replacement.layers)
        if (auto layer = dyn_cast<KVBLayerOp>(op)) {
          LayerFacts facts = analyzeLayer(layer);
          replacement.original->emitRemark()
              << "TTT layer: " << describeLayer(layer)
              << ": raised to ttt.kvb_layer (linear attention, "
              << stringifyExactLowering(facts.lowering) << ")";
        }
    graph->erase();
    return success();
  }
};
} // namespace
