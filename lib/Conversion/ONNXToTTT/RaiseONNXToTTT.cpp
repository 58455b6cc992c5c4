//===- RaiseONNXToTTT.cpp - TTT layers of ONNX graphs to ttt.kvb_layer ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Finds TTT layers (LayerFinder), reads their kvb_layer form (LayerMatcher),
// and replaces the layer's output by a `ttt.kvb_layer` when that is exact
// and useful; every layer found gets one remark saying what happened. It
// looks at a normalized copy of the graph (Normalize.h), which replaces the
// graph only when a layer is rewritten; the nodes the layer no longer needs
// are erased.
//
//===----------------------------------------------------------------------===//

#include "LayerFinder.h"
#include "LayerMatcher.h"
#include "Normalize.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/Analysis/LayerAnalysis.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRAISEONNX
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// A node that can go once nothing reads it: a pure node, or a Loop whose
/// body only holds pure nodes.
static bool isRemovable(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto node = dyn_cast<onnx::NodeOp>(op);
  if (!node || !node.isDefaultDomain() || node.getOpType() != "Loop")
    return false;
  return !node->walk([&](onnx::NodeOp inner) {
                return inner != node && inner->getNumRegions() == 0 &&
                               !isMemoryEffectFree(inner)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

/// Erases `roots` and then whatever only they read, so that nodes the
/// original model left unused stay.
static void eraseComputation(onnx::GraphOp graph, ArrayRef<Operation *> roots) {
  SmallVector<Operation *> worklist(roots);
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || op->getParentOp() != graph || !op->use_empty() ||
        !isRemovable(op))
      continue;
    SmallVector<Value> inputs(op->getOperands());
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (operand.getParentRegion() == &graph.getBody())
          inputs.push_back(operand);
    });
    erased.insert(op);
    op->erase();
    for (Value input : inputs)
      if (Operation *def = input.getDefiningOp())
        worklist.push_back(def);
  }
}

/// The layer's replacement as seen by the rest of the graph: an Identity
/// node that keeps the ONNX name of the layer's output and says in its
/// doc_string what it is, so that a later run does not take the parallel
/// form for a layer to rewrite.
static Value markReplacement(OpBuilder &builder, const FoundLayer &layer,
                             Value replacement) {
  auto assembly = dyn_cast<onnx::NodeOp>(layer.assembly);
  StringRef name = assembly
                       ? assembly.getOutputName(
                             cast<OpResult>(layer.output).getResultNumber())
                       : StringRef();
  auto identity = onnx::NodeOp::create(
      builder, layer.assembly->getLoc(), TypeRange{layer.output.getType()},
      "Identity", "", /*attrs=*/nullptr,
      assembly ? assembly.getNodeNameAttr() : nullptr,
      name.empty() ? nullptr : builder.getStrArrayAttr({name}),
      builder.getStringAttr(kRewrittenDoc + layer.describeForm()),
      ValueRange{replacement}, /*subgraphsCount=*/0);
  return identity->getResult(0);
}

namespace {
struct TTTRaiseONNXPass
    : public mlir::ttt::impl::TTTRaiseONNXBase<TTTRaiseONNXPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<onnx::GraphOp> graphs;
    getOperation()->walk([&](onnx::GraphOp graph) { graphs.push_back(graph); });
    for (onnx::GraphOp graph : graphs)
      raiseNormalized(graph);
  }

  /// Looks for layers in a normalized copy of `graph` (Normalize.h), and
  /// keeps the copy only if a layer was rewritten: a graph whose layers all
  /// stay is written back node for node.
  void raiseNormalized(onnx::GraphOp graph) {
    int64_t nodes = 0;
    graph.walk([&](onnx::NodeOp) { ++nodes; });
    // The copy is outside the module, so it is asked nothing about it.
    modelOpset = onnx::getDefaultOpset(graph);
    auto copy = cast<onnx::GraphOp>(graph->clone());
    graph->removeAttr(kFoundByChunkRouteAttr);
    graph->removeAttr(kRaisedByChunkRouteAttr);
    normalizeGraph(copy);
    if (!raiseIn(copy, nodes)) {
      copy->erase();
      return;
    }
    copy->removeAttr(kFoundByChunkRouteAttr);
    copy->removeAttr(kRaisedByChunkRouteAttr);
    graph->getBlock()->getOperations().insert(Block::iterator(graph), copy);
    graph->erase();
  }

  /// The default-domain opset of the model being raised.
  std::optional<int64_t> modelOpset;

  /// Returns true if it rewrote a layer. `nodes` is the number of nodes of
  /// the graph as the model has it.
  bool raiseIn(onnx::GraphOp graph, int64_t nodes) {
    DependenceCache deps;
    std::vector<Candidate> rejected;
    std::vector<FoundLayer> layers = findLayers(
        graph, deps, raiseAll || reportCandidates ? &rejected : nullptr);
    // Say so when there is nothing to do: a silent exit reads as success.
    // A layer an earlier pass rewrote (ttt-raise-onnx-chunks) was found.
    bool rewrittenBefore = false;
    graph.walk([&](onnx::NodeOp node) {
      std::optional<StringRef> doc = node.getDocString();
      rewrittenBefore |= doc && doc->starts_with(kRewrittenDoc);
    });
    auto foundBefore = graph->getAttrOfType<ArrayAttr>(kFoundByChunkRouteAttr);
    if (layers.empty() && !rewrittenBefore && foundBefore) {
      for (auto text : foundBefore.getAsRange<StringAttr>())
        graph.emitRemark() << "TTT layer: " << text.getValue();
    } else if (layers.empty() && !rewrittenBefore) {
      graph.emitRemark() << "no TTT layer found (" << nodes << " nodes read)";
    }
    for (const Candidate &candidate : rejected)
      candidate.node->emitRemark() << "not a TTT layer: " << candidate.reason;
    // Last layer first: a later layer reads an earlier one's output, which a
    // replacement would change under its feet; the other way round, the
    // earlier layer's replacement just becomes the later op's operand.
    SmallVector<Operation *> replaced;
    SmallVector<std::pair<Operation *, std::string>> remarks(layers.size());
    bool allFormless = !layers.empty();
    for (size_t i = layers.size(); i-- > 0;) {
      remarks[i].first = layers[i].assembly;
      bool formless = false;
      if (handle(layers[i], remarks[i].second, formless))
        replaced.push_back(layers[i].assembly);
      allFormless &= formless;
    }
    // Where this reader builds no layer op for the one layer it found and
    // the canonical route (ttt-raise-onnx-chunks) raised it to one, the
    // route's account stands: it says what the layer is and why it stays.
    if (allFormless && layers.size() == 1 && foundBefore &&
        foundBefore.size() == 1 && graph->hasAttr(kRaisedByChunkRouteAttr)) {
      for (auto text : foundBefore.getAsRange<StringAttr>())
        graph.emitRemark() << "TTT layer: " << text.getValue();
      remarks.clear();
    }
    // Reported in graph order, before the replaced nodes go.
    for (auto &[op, text] : remarks)
      op->emitRemark() << text;
    eraseComputation(graph, replaced);
    return !replaced.empty();
  }

  /// Replaces the layer if it should be; sets `remark` to what happened,
  /// and `formless` where no layer op reads it. Returns true if it was
  /// replaced.
  bool handle(const FoundLayer &layer, std::string &remark, bool &formless) {
    std::string head =
        "TTT layer: " + layer.describeForm() + ", " + layer.describeWeights();
    auto leave = [&](StringRef why) {
      remark = head + ": left as it was: " + why.str();
      return false;
    };
    // A layer that cannot be linear attention is read too: its analysis says
    // what is proven, and on request it is raised (for the simplifications
    // that make it linear attention).
    std::string why;
    OpBuilder builder(layer.assembly);
    SmallVector<Operation *> created;
    Value replacement;
    Operation *op = nullptr;
    bool convolution = convolvesQueries(layer);
    if (convolution) {
      FailureOr<DWConvConfig> config = matchDWConvLayer(layer, why);
      if (failed(config))
        return leave(layer.blocker.empty()
                         ? "no ttt.dwconv_layer form: " + why
                         : layer.blocker +
                               "; no ttt.dwconv_layer form: " + why);
      op = buildDWConvLayer(builder, layer, *config, created, replacement);
    } else {
      FailureOr<LayerConfig> config = matchLayer(layer, why);
      formless = failed(config);
      if (failed(config))
        return leave(layer.blocker.empty()
                         ? "no ttt.kvb_layer form: " + why
                         : layer.blocker + "; no ttt.kvb_layer form: " + why);
      op = buildLayer(builder, layer, *config, created, replacement);
    }
    StringRef opName = convolution ? "ttt.dwconv_layer" : "ttt.kvb_layer";
    // Leaving the layer takes back every node the raise made for it.
    // The nodes after the layer op (its output turned, reshaped or added
    // to the queries) read it, so they go first, then the op, then the
    // nodes that gave it its operands.
    auto undo = [&] {
      auto eraseUnused = [&] {
        for (Operation *&node : llvm::reverse(created))
          if (node && node->use_empty()) {
            node->erase();
            node = nullptr;
          }
      };
      eraseUnused();
      if (op)
        op->erase();
      eraseUnused();
    };
    if (!op) {
      undo();
      return leave(convolution
                       ? "its start kernel is not one kh x kw kernel per "
                         "channel, or its output's shape is not static, so "
                         "it has no ttt.dwconv_layer shape"
                       : "its operands have no ttt.kvb_layer shape (a weight "
                         "shared by every head while the head count is not "
                         "static, LayerNorm parameters that are not one row "
                         "per head, or rates of unknown rank)");
    }
    // Every operand must be visible where the layer op stands (not a value
    // of a Loop body the replacement erases).
    Region *at = op->getParentRegion();
    auto visible = [&](Operation *user) {
      return llvm::all_of(user->getOperands(), [&](Value operand) {
        return operand.getParentRegion()->isAncestor(at);
      });
    };
    if (!visible(op) || !llvm::all_of(created, visible)) {
      undo();
      return leave("its " + opName.str() +
                   " form reads a value computed inside its Loop");
    }
    // The verifier's message becomes the remark's reason, not an error of
    // its own: leaving the layer is not a failure of the compiler.
    std::string invalid;
    LogicalResult verified = [&] {
      ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &diag) {
        if (invalid.empty())
          invalid = diag.str();
        return success();
      });
      return mlir::verify(op, /*verifyRecursively=*/false);
    }();
    if (failed(verified)) {
      undo();
      return leave("its " + opName.str() + " form does not verify (" + invalid +
                   ")");
    }
    auto kvb = dyn_cast<KVBLayerOp>(op);
    LayerFacts facts =
        kvb ? analyzeLayer(kvb) : analyzeLayer(cast<DWConvLayerOp>(op));
    std::string blocker;
    if (!facts.rewritable)
      blocker = explainLayer(facts);
    else if (!layer.blocker.empty())
      blocker = layer.blocker; // the dataflow's finding stands
    else if (kvb && hasEmptySequence(kvb))
      blocker = kEmptySequence;
    std::optional<int64_t> opset = modelOpset;
    if (blocker.empty() && opset && *opset < kMinExportOpset)
      blocker = "the model imports opset " + std::to_string(*opset) +
                ", and the parallel form needs opset " +
                std::to_string(kMinExportOpset) + " or later";
    if (!blocker.empty() && !raiseAll) {
      undo();
      // The dataflow names the node that breaks a theorem's condition; the
      // analysis adds what is proven and which lowering is exact.
      if (layer.blocker.empty() || blocker == layer.blocker)
        return leave(blocker);
      return leave(layer.blocker + "; as a ttt.kvb_layer: " + blocker);
    }
    Value output = layer.output;
    Value marked = markReplacement(builder, layer, replacement);
    if (!blocker.empty() && keepOriginal) {
      // The nodes stay next to the layer op until ttt-resolve-raised
      // picks one of them.
      builder.setInsertionPointAfter(layer.assembly);
      auto raised = RaisedOp::create(builder, layer.assembly->getLoc(),
                                     output.getType(), marked, output);
      output.replaceAllUsesExcept(raised.getResult(), raised);
    } else {
      output.replaceAllUsesWith(marked);
    }
    remark = head + ": raised to " + opName.str() +
             (blocker.empty()
                  ? " (linear attention, " +
                        stringifyExactLowering(facts.lowering).str() + ")"
                  : "; " + blocker);
    return true;
  }
};
} // namespace
