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

#include "../LinalgToTTT/ChunkLoopForms.h"
#include "../ONNXToTTT/LayerFinder.h"
#include "../ONNXToTTT/Normalize.h"
#include "GraphToFunc.h"
#include "WriteBack.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <memory>

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRAISEONNXCHUNKS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

/// Whether an ONNX node of type `opType` only moves or retypes its first
/// input's elements (a view of it, for naming).
static bool isViewNode(StringRef opType) {
  return llvm::is_contained({"Reshape", "Transpose", "Unsqueeze", "Squeeze",
                             "Expand", "Tile", "Identity", "Cast", "Flatten"},
                            opType);
}

/// The ONNX name of the value `value` is a view of: the initializer, graph
/// input or node output the reshapes and transposes (the model's, or the
/// write-back's) read.
static std::string sourceName(Value value) {
  while (true) {
    if (auto init = value.getDefiningOp<onnx::InitializerOp>())
      return init.getName().str();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (auto graph = dyn_cast<onnx::GraphOp>(arg.getOwner()->getParentOp()))
        return graph.getInputName(arg.getArgNumber()).str();
      return "";
    }
    auto node = value.getDefiningOp<onnx::NodeOp>();
    if (!node)
      return "";
    StringRef name =
        node.getOutputName(cast<OpResult>(value).getResultNumber());
    if (node.getInputs().empty() ||
        (!name.empty() && !isViewNode(node.getOpType())))
      return name.str();
    value = node.getInputs().front();
  }
}

/// The ONNX name of the value a value of `converted`'s function is a view
/// of, or "" when it is computed: through the ops the front end tagged with
/// their ONNX values, and the reshapes and broadcasts the route made.
static std::string sourceName(ConvertedGraph &converted, Value value) {
  Block *body = &converted.func.getBody().front();
  for (int depth = 0; depth < 32; ++depth) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != body ||
          arg.getArgNumber() >= converted.argumentIds.size())
        return "";
      return sourceName(
          converted.values[converted.argumentIds[arg.getArgNumber()]]);
    }
    Operation *op = value.getDefiningOp();
    if (auto index = op->getAttrOfType<IntegerAttr>(kRecordAttr)) {
      const OpRecord &record = converted.ops[index.getInt()];
      int64_t id = record.resultIds[cast<OpResult>(value).getResultNumber()];
      if (id >= 0)
        return sourceName(converted.values[id]);
    }
    // A view, or a broadcast of one input into a fresh tensor.
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (linalgOp && linalgOp.getNumDpsInputs() == 1)
      value = linalgOp.getDpsInputOperand(0)->get();
    else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                 tensor::ExtractSliceOp>(op))
      value = op->getOperand(0);
    else
      return "";
  }
  return "";
}

/// What the remarks say of a layer the route found and the graph keeps:
/// its form and the ONNX values its fast weights start from.
static std::string describeKeptLayer(ConvertedGraph &converted,
                                     KVBLayerOp layer) {
  std::string text = linalg_raise::describeLayerForm(layer) + ", fast weights ";
  for (auto [index, weight] : llvm::enumerate(layer.getWeights())) {
    std::string name = sourceName(converted, weight);
    text += index ? ", " : "";
    text += name.empty() ? std::string("(computed)") : "'" + name + "'";
  }
  return text;
}

/// What the remarks say of a layer in the written-back graph.
static std::string describeLayer(KVBLayerOp layer) {
  std::string text = linalg_raise::describeLayerForm(layer) + ", fast weights ";
  for (auto [index, weight] : llvm::enumerate(layer.getWeights())) {
    std::string name = sourceName(weight);
    text += index ? ", " : "";
    text += name.empty() ? std::string("(unnamed)") : "'" + name + "'";
  }
  return text;
}

/// Whether the layer's initial weights are its own: inputs, constants, or
/// computed from them (a parameter tiled per batch), but not from the data
/// the layer reads, as they are when its first chunk stayed unrolled.
static bool startsFromModelWeights(KVBLayerOp layer) {
  llvm::SmallPtrSet<Value, 8> data;
  for (Value operand : layer->getOperands())
    if (!llvm::is_contained(layer.getWeights(), operand))
      for (Value argument : linalg_raise::argumentsOf(operand))
        data.insert(argument);
  for (Value weight : layer.getWeights()) {
    if (isa<BlockArgument>(weight))
      continue;
    for (Value argument : linalg_raise::argumentsOf(weight))
      if (data.contains(argument))
        return false;
  }
  return true;
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

  /// Reads a copy of `original` with its shape arithmetic folded; keeps the
  /// copy only if a layer was rewritten, so that a graph whose layers all
  /// stay is written back node for node.
  LogicalResult raise(onnx::GraphOp original) {
    auto graph = cast<onnx::GraphOp>(original->clone());
    original->getBlock()->getOperations().insert(Block::iterator(original),
                                                 graph);
    graph->removeAttr(raise::kFoundByChunkRouteAttr);
    original->removeAttr(raise::kFoundByChunkRouteAttr);
    raise::foldShapeArithmetic(graph);
    FailureOr<bool> rewritten = raiseIn(graph, original);
    graph->erase();
    if (failed(rewritten))
      return failure();
    if (*rewritten) {
      original->erase();
      return success();
    }
    if (!original->hasAttr(raise::kFoundByChunkRouteAttr))
      findWithSizesFixed(original);
    return success();
  }

  /// A graph read with run-time sizes (a dynamic batch) converts few nodes:
  /// its layers are looked for again in a copy whose sizes are fixed, and
  /// reported as found and kept. The copy only finds: what a layer computes
  /// at one size says nothing of a rewrite valid at every size.
  void findWithSizesFixed(onnx::GraphOp original) {
    auto probe = cast<onnx::GraphOp>(original->clone());
    original->getBlock()->getOperations().insert(Block::iterator(original),
                                                 probe);
    SmallVector<std::string> fixed = raise::fixSizes(probe);
    if (!fixed.empty()) {
      std::string sizes = llvm::join(fixed, ", ");
      ConvertedGraph converted(probe);
      if (explain)
        mlir::emitRemark(probe.getLoc())
            << "ttt-raise-onnx-chunks: read again with the run-time sizes "
               "fixed ("
            << sizes << ")";
      if (succeeded(runRoute(converted, probe))) {
        std::string found =
            " (found with the run-time sizes fixed: " + sizes + ")";
        SmallVector<Attribute> kept = keptLoops(converted, probe, found);
        converted.func.walk([&](KVBLayerOp layer) {
          LayerFacts facts = analyzeLayer(layer);
          std::string why =
              !startsFromModelWeights(layer) ? "its first chunk stays unrolled"
              : facts.rewritable
                  ? "linear attention where its run-time sizes are fixed, "
                    "but the canonical route rewrites layers of static "
                    "shape only"
                  : explainLayer(facts);
          kept.push_back(StringAttr::get(
              &getContext(), describeKeptLayer(converted, layer) +
                                 ": left as it was: " + why + found));
        });
        if (!kept.empty())
          original->setAttr(raise::kFoundByChunkRouteAttr,
                            ArrayAttr::get(&getContext(), kept));
      }
    }
    probe->erase();
  }

  /// Runs the formers and the reader of `ttt.chunk_loop` on the function
  /// `graph` was read as; failure (with an explain remark) if that function
  /// does not verify or the route fails on it.
  LogicalResult runRoute(ConvertedGraph &converted, onnx::GraphOp graph,
                         bool onlyRaised = false) {
    if (explain) {
      InFlightDiagnostic remark =
          mlir::emitRemark(graph.getLoc())
          << "ttt-raise-onnx-chunks: " << converted.converted
          << " nodes read as linalg";
      if (!converted.opaque.empty())
        remark << "; " << converted.opaque.size() << " left out";
      for (OpaqueNode &node : converted.opaque)
        remark.attachNote(node.node.getLoc())
            << "'" << node.node.getOpType() << "' left out: " << node.reason;
    }
    // A handler that built an op its verifier refuses is a bug of the
    // handler; the model is then left to the other readers, never broken.
    std::string invalid;
    LogicalResult verified = [&] {
      ScopedDiagnosticHandler capture(&getContext(), [&](Diagnostic &diag) {
        if (invalid.empty())
          invalid = diag.str();
        return success();
      });
      return mlir::verify(converted.func);
    }();
    if (failed(verified)) {
      if (explain)
        mlir::emitRemark(graph.getLoc())
            << "ttt-raise-onnx-chunks: the graph read as linalg does not "
               "verify: "
            << invalid;
      return failure();
    }
    // The route's own remarks are about the function; they reach the user
    // as remarks on the graph.
    SmallVector<std::string> found;
    std::string routeError;
    ModuleOp inner = *converted.module;
    getOperation().getBody()->push_back(inner);
    LogicalResult ran = [&] {
      // An error of the route (a former that built an op its verifier
      // refuses) is its own failure, not the model's: the graph is then
      // left to ttt-raise-onnx, and the error becomes an explain remark.
      ScopedDiagnosticHandler capture(&getContext(), [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Remark)
          found.push_back(diag.str());
        else if (diag.getSeverity() == DiagnosticSeverity::Error &&
                 routeError.empty())
          routeError = diag.str();
        return success();
      });
      OpPassManager pm(ModuleOp::getOperationName());
      pm.addPass(createTTTRerollChunks(TTTRerollChunksOptions{true}));
      pm.addPass(createTTTFormSingleSteps(
          TTTFormSingleStepsOptions{/*explain=*/true, onlyRaised}));
      // A depth-wise convolution layer is never linear attention, and
      // the write-back writes ttt.kvb_layer only: the loop stays, reported.
      pm.addPass(createTTTRaiseChunkLoops(
          TTTRaiseChunkLoopsOptions{/*explain=*/true, /*convolutions=*/false}));
      if (!layerPipeline.empty() &&
          failed(parsePassPipeline(layerPipeline, pm)))
        return failure();
      return runPipeline(pm, inner);
    }();
    inner->remove();
    if (failed(ran)) {
      if (explain)
        mlir::emitRemark(graph.getLoc())
            << "ttt-raise-onnx-chunks: the route failed on this graph ("
            << routeError << "); left to ttt-raise-onnx";
      return failure();
    }
    // A layer pass that changes the model says so whether or not the
    // route explains itself.
    // The second reading (only the raised loops formed) said it all before.
    for (const std::string &text : found)
      if (!onlyRaised && (explain || StringRef(text).contains("model changed")))
        mlir::emitRemark(graph.getLoc()) << text;
    return success();
  }

  /// The loops the reader left: layers found and kept, as the remarks'
  /// texts (with the reason, then `suffix`).
  SmallVector<Attribute> keptLoops(ConvertedGraph &converted,
                                   onnx::GraphOp graph, StringRef suffix = "") {
    SmallVector<Attribute> kept;
    converted.func.walk([&](ChunkLoopOp loop) {
      std::string notALayer = linalg_raise::whyNotATTTLayer(loop);
      if (!notALayer.empty()) {
        if (explain)
          mlir::emitRemark(graph.getLoc())
              << "ttt-raise-onnx-chunks: "
              << linalg_raise::describeChunkLoop(loop)
              << ": not a TTT layer: " << notALayer;
        return;
      }
      kept.push_back(StringAttr::get(
          &getContext(),
          linalg_raise::describeChunkLoop(loop) + ": left as it was: " +
              linalg_raise::whyNotAKVBLayer(loop) + suffix.str()));
    });
    return kept;
  }

  /// Whether a layer of `graph` was rewritten (the rewritten graph then
  /// follows `graph`); layers found and kept are noted on `original`.
  FailureOr<bool> raiseIn(onnx::GraphOp graph, onnx::GraphOp original) {
    ConvertedGraph converted(graph);
    if (failed(runRoute(converted, graph)))
      return false;
    // Loops the reader left are layers found and kept, with the reason;
    // ttt-raise-onnx reports them unless it rewrites the graph itself.
    SmallVector<Attribute> kept = keptLoops(converted, graph);
    bool loopsKept = !kept.empty();
    if (!kept.empty())
      original->setAttr(raise::kFoundByChunkRouteAttr,
                        ArrayAttr::get(&getContext(), kept));
    SmallVector<KVBLayerOp> layers;
    converted.func.walk([&](KVBLayerOp layer) { layers.push_back(layer); });
    if (layers.empty())
      return false;
    // A layer the rewrite cannot take stays as the model has it; so does
    // one whose first chunk stayed unrolled (its initial weight computed by
    // that chunk), which ttt-raise-onnx reads whole.
    for (KVBLayerOp layer : layers) {
      if (!startsFromModelWeights(layer)) {
        if (explain)
          mlir::emitRemark(graph.getLoc())
              << "ttt-raise-onnx-chunks: "
              << linalg_raise::describeLayerForm(layer)
              << " left to ttt-raise-onnx: its first chunk stays unrolled";
        kept.push_back(StringAttr::get(
            &getContext(), describeKeptLayer(converted, layer) +
                               ": left as it was: its first chunk stays "
                               "unrolled"));
        original->setAttr(raise::kFoundByChunkRouteAttr,
                          ArrayAttr::get(&getContext(), kept));
        return false;
      }
      LayerFacts facts = analyzeLayer(layer);
      if (!facts.rewritable && !raiseAll) {
        if (explain)
          mlir::emitRemark(graph.getLoc())
              << "ttt-raise-onnx-chunks: "
              << linalg_raise::describeLayerForm(layer)
              << " left to ttt-raise-onnx: " << explainLayer(facts);
        // Found, and kept with its reason, unless ttt-raise-onnx rewrites
        // the graph itself.
        kept.push_back(StringAttr::get(
            &getContext(), describeKeptLayer(converted, layer) +
                               ": left as it was: " + explainLayer(facts)));
        original->setAttr(raise::kFoundByChunkRouteAttr,
                          ArrayAttr::get(&getContext(), kept));
        if (!loopsKept && layers.size() == 1)
          original->setAttr(raise::kRaisedByChunkRouteAttr,
                            UnitAttr::get(&getContext()));
        return false;
      }
    }
    // The parallel form is written with opset-13 nodes; ttt-raise-onnx
    // tells the user of an older model why its layer stays.
    if (onnx::getDefaultOpset(graph).value_or(INT64_MAX) <
            raise::kMinExportOpset &&
        !raiseAll) {
      if (explain)
        mlir::emitRemark(graph.getLoc())
            << "ttt-raise-onnx-chunks: the model imports an opset before "
            << raise::kMinExportOpset << "; left to ttt-raise-onnx";
      return false;
    }
    // A loop the reader left has no ONNX form: the graph is read again
    // with only the loops it raises formed, and the layers it left are
    // reported as found and kept.
    std::unique_ptr<ConvertedGraph> again;
    ConvertedGraph *written = &converted;
    if (!converted.func.getBody().getOps<ChunkLoopOp>().empty()) {
      again = std::make_unique<ConvertedGraph>(graph);
      SmallVector<KVBLayerOp> raisedAgain;
      if (succeeded(runRoute(*again, graph, /*onlyRaised=*/true)))
        again->func.walk(
            [&](KVBLayerOp layer) { raisedAgain.push_back(layer); });
      if (raisedAgain.size() == layers.size())
        written = again.get();
    }
    std::string why;
    SmallVector<Replacement> replaced;
    FailureOr<onnx::GraphOp> copy = writeBack(*written, replaced, why);
    if (failed(copy)) {
      if (explain)
        mlir::emitRemark(graph.getLoc())
            << "ttt-raise-onnx-chunks: "
            << linalg_raise::describeLayerForm(layers.front())
            << " left to ttt-raise-onnx: " << why;
      // Found, and kept with the write-back's reason.
      for (KVBLayerOp layer : layers)
        kept.push_back(StringAttr::get(
            &getContext(), describeKeptLayer(*written, layer) +
                               ": left as it was: not written back: " + why));
      original->setAttr(raise::kFoundByChunkRouteAttr,
                        ArrayAttr::get(&getContext(), kept));
      return false;
    }
    // A layer op stands where the node whose output it computes stood: its
    // remarks (and ttt-explain's) name that node.
    for (const Replacement &replacement : replaced)
      for (Operation *op : replacement.layers)
        op->setLoc(replacement.original->getLoc());
    for (const Replacement &replacement : replaced)
      for (Operation *op : replacement.layers)
        if (auto layer = dyn_cast<KVBLayerOp>(op)) {
          LayerFacts facts = analyzeLayer(layer);
          InFlightDiagnostic remark = replacement.original->emitRemark()
                                      << "TTT layer: " << describeLayer(layer)
                                      << ": raised to ttt.kvb_layer";
          if (facts.rewritable)
            remark << " (linear attention, "
                   << stringifyExactLowering(facts.lowering) << ")";
          else
            remark << "; " << explainLayer(facts);
        }
    // The graph the remarks of the layers kept were to go on is replaced.
    for (Attribute layer : kept)
      mlir::emitRemark(original.getLoc())
          << "TTT layer: " << cast<StringAttr>(layer).getValue();
    return true;
  }
};
} // namespace
