//===- RaiseLinalg.cpp - TTT layers of linalg programs to ttt.kvb_layer ---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs the ONNX raise on each function's shadow graph (ShadowGraph.h) and
// writes every layer op it raised back into the function: the op's operands
// are traced back to the function's values (through the layout nodes the
// raise puts in front of the op), and the value the layer's output stood
// for is replaced.
//
//===----------------------------------------------------------------------===//

#include "ShadowGraph.h"
// The doc_string the ONNX raise gives a rewritten layer's output.
#include "../ONNXToTTT/LayerFinder.h"

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTRAISELINALG
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

namespace {

/// Writes shadow values back as values of the function.
class WriteBack {
public:
  WriteBack(ShadowGraph &shadow, func::FuncOp func, OpBuilder &b)
      : shadow(shadow), func(func), b(b) {}

  /// The function's value for `value`, built before the builder's
  /// insertion point; failure with `why` if some node has no counterpart.
  FailureOr<Value> get(Value value);
  std::string why;

private:
  FailureOr<Value> build(Value value);
  FailureOr<Value> reshaped(Value x, RankedTensorType to, Location loc);

  ShadowGraph &shadow;
  func::FuncOp func;
  OpBuilder &b;
  llvm::DenseMap<Value, Value> done;
};

FailureOr<Value> WriteBack::get(Value value) {
  auto it = done.find(value);
  if (it != done.end())
    return it->second;
  FailureOr<Value> built = build(value);
  if (succeeded(built))
    done[value] = *built;
  return built;
}

FailureOr<Value> WriteBack::reshaped(Value x, RankedTensorType to,
                                     Location loc) {
  auto from = dyn_cast<RankedTensorType>(x.getType());
  if (!from || !from.hasStaticShape() || !to.hasStaticShape() ||
      from.getNumElements() != to.getNumElements())
    return failure();
  if (from == to)
    return x;
  if (from.getRank() > to.getRank()) {
    if (auto assoc = getReassociationIndicesForReshape(from, to))
      return tensor::CollapseShapeOp::create(b, loc, to, x, *assoc).getResult();
  } else if (from.getRank() < to.getRank()) {
    if (auto assoc = getReassociationIndicesForReshape(to, from))
      return tensor::ExpandShapeOp::create(b, loc, to, x, *assoc).getResult();
  }
  // Through one flat dim.
  auto flat =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < from.getRank(); ++d)
    all[0].push_back(d);
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, flat, x, all);
  SmallVector<ReassociationIndices> back(1);
  for (int64_t d = 0; d < to.getRank(); ++d)
    back[0].push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, to, collapsed, back).getResult();
}

FailureOr<Value> WriteBack::build(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (isa<onnx::GraphOp>(arg.getOwner()->getParentOp()))
      return func.getArgument(arg.getArgNumber());
    why = "it reads a value of a region";
    return failure();
  }
  Operation *op = value.getDefiningOp();
  Location loc = op->getLoc();
  if (isa<KVBLayerOp, DWConvLayerOp>(op)) {
    IRMapping mapping;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> original = get(operand);
      if (failed(original))
        return failure();
      mapping.map(operand, *original);
    }
    Operation *clone = b.clone(*op, mapping);
    return clone->getResult(cast<OpResult>(value).getResultNumber());
  }
  if (auto init = dyn_cast<onnx::InitializerOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(init.getValue());
    if (!dense)
      return failure();
    return arith::ConstantOp::create(b, loc, dense).getResult();
  }
  auto node = dyn_cast<onnx::NodeOp>(op);
  if (!node)
    return failure();
  // A node the translation made names the function's value.
  if (ArrayAttr outputs = node.getOutputsAttr()) {
    auto name =
        cast<StringAttr>(outputs[cast<OpResult>(value).getResultNumber()]);
    auto it = shadow.original.find(name.getValue());
    if (it != shadow.original.end() && it->second.getType() == value.getType())
      return it->second;
  }
  StringRef opType = node.getOpType();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (opType == "Constant") {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(node.getONNXAttr("value"));
    if (dense)
      return arith::ConstantOp::create(b, loc, dense).getResult();
  }
  if (opType == "Identity")
    return get(node.getInputs()[0]);
  if (type && (opType == "Reshape" || opType == "Unsqueeze" ||
               opType == "Squeeze" || opType == "Flatten")) {
    FailureOr<Value> input = get(node.getInputs()[0]);
    if (succeeded(input))
      if (FailureOr<Value> out = reshaped(*input, type, loc); succeeded(out))
        return out;
  }
  if (type && type.hasStaticShape() && opType == "Transpose") {
    auto perm = dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("perm"));
    FailureOr<Value> input = get(node.getInputs()[0]);
    if (perm && succeeded(input)) {
      Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType());
      return linalg::TransposeOp::create(b, loc, *input, init,
                                         perm.asArrayRef())
          ->getResult(0);
    }
  }
  if (type && type.hasStaticShape() && node.getInputs().size() == 2 &&
      (opType == "Add" || opType == "Sub" || opType == "Mul")) {
    FailureOr<Value> lhs = get(node.getInputs()[0]);
    FailureOr<Value> rhs = failed(lhs) ? lhs : get(node.getInputs()[1]);
    if (succeeded(rhs) && lhs->getType() == type && rhs->getType() == type) {
      Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType());
      SmallVector<Value> ins{*lhs, *rhs};
      if (opType == "Add")
        return linalg::AddOp::create(b, loc, ins, ValueRange{init})
            ->getResult(0);
      if (opType == "Sub")
        return linalg::SubOp::create(b, loc, ins, ValueRange{init})
            ->getResult(0);
      return linalg::MulOp::create(b, loc, ins, ValueRange{init})->getResult(0);
    }
  }
  if (why.empty())
    why = ("its layer op reads a " + opType +
           " node that has no counterpart in the function")
              .str();
  return failure();
}

/// Erases `root` once nothing reads it, and then whatever only it read, so
/// that ops the program already left unused stay.
void eraseComputation(Operation *root) {
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    // A payload reads values from outside too (a captured step size).
    SmallVector<Operation *> defs;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && !op->isAncestor(def))
          defs.push_back(def);
    });
    op->erase();
    for (Operation *def : defs)
      if (!llvm::is_contained(worklist, def))
        worklist.push_back(def);
  }
}

struct TTTRaiseLinalgPass
    : public mlir::ttt::impl::TTTRaiseLinalgBase<TTTRaiseLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (failed(raise(func)))
        return signalPassFailure();
  }

  LogicalResult raise(func::FuncOp func) {
    FailureOr<ShadowGraph> shadow = buildShadowGraph(func);
    if (failed(shadow))
      return success(); // not a function on static float tensors
    if (printShadow)
      shadow->module->print(llvm::errs());
    PassManager pm(func.getContext(), ModuleOp::getOperationName());
    pm.addPass(createTTTRaiseONNX());
    // The raise speaks at the locations of the function's own ops; the
    // shadow nodes it would print with them mean nothing to the reader.
    SmallVector<std::pair<Location, std::string>> remarks;
    LogicalResult ran = [&] {
      ScopedDiagnosticHandler capture(func.getContext(), [&](Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Remark)
          remarks.push_back({d.getLocation(), d.str()});
        else
          remarks.push_back({d.getLocation(), "(shadow graph) " + d.str()});
        return success();
      });
      return pm.run(*shadow->module);
    }();
    // The shadow's Loop nodes are the function's scf.for loops.
    for (auto &[loc, text] : remarks) {
      StringRef shadowLoop = "ONNX Loop over chunks";
      if (size_t at = text.find(shadowLoop.str()); at != std::string::npos)
        text.replace(at, shadowLoop.size(), "scf.for over chunks");
      emitRemark(loc) << text;
    }
    // The function itself is untouched: the shadow is a reading of it.
    if (failed(ran)) {
      func.emitRemark("no TTT layer read: the ONNX raise stopped on the "
                      "function's shadow graph");
      return success();
    }
    // The raise replaced the graph by its normalized copy if it rewrote.
    auto graphs = shadow->module->getOps<onnx::GraphOp>();
    if (graphs.empty())
      return success();
    onnx::GraphOp graph = *graphs.begin();
    SmallVector<onnx::NodeOp> markers;
    graph.walk([&](onnx::NodeOp node) {
      StringAttr doc = node.getDocStringAttr();
      if (node.getOpType() == "Identity" && doc &&
          doc.getValue().starts_with(raise::kRewrittenDoc) &&
          node.getOutputsAttr())
        markers.push_back(node);
    });
    for (onnx::NodeOp marker : markers) {
      StringRef name = cast<StringAttr>(marker.getOutputsAttr()[0]).getValue();
      auto it = shadow->original.find(name);
      Value replaced = it == shadow->original.end() ? Value() : it->second;
      if (!replaced || !replaced.getDefiningOp()) {
        func.emitRemark() << "TTT layer raised in the shadow graph, but the "
                             "value it computes is not one of the function's";
        continue;
      }
      Operation *anchor = replaced.getDefiningOp();
      Operation *before = anchor->getPrevNode();
      OpBuilder b(anchor);
      WriteBack writeBack(*shadow, func, b);
      FailureOr<Value> layer = writeBack.get(marker.getInputs()[0]);
      if (succeeded(layer) && layer->getType() != replaced.getType()) {
        if (!tensor::CastOp::areCastCompatible(layer->getType(),
                                               replaced.getType()))
          layer = failure();
        else
          layer = tensor::CastOp::create(b, replaced.getLoc(),
                                         replaced.getType(), *layer)
                      .getResult();
      }
      if (failed(layer)) {
        // Take back what the write-back made before it stopped.
        Block *block = anchor->getBlock();
        Block::iterator first =
            before ? std::next(before->getIterator()) : block->begin();
        SmallVector<Operation *> made;
        for (auto it = first; it != anchor->getIterator(); ++it)
          made.push_back(&*it);
        for (Operation *op : llvm::reverse(made))
          op->erase();
        anchor->emitRemark()
            << "TTT layer: left as it was in the function: "
            << (writeBack.why.empty() ? "its layer op has no form here"
                                      : writeBack.why);
        continue;
      }
      Operation *assembly = replaced.getDefiningOp();
      replaced.replaceAllUsesWith(*layer);
      eraseComputation(assembly);
    }
    return success();
  }
};

} // namespace
