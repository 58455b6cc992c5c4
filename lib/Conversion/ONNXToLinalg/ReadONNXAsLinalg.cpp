//===- ReadONNXAsLinalg.cpp - the canonical route's view of a graph ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Replaces each `onnx.graph` by the function `ttt-raise-onnx-chunks` reads
// it as, so that the node handlers can be run and checked against the
// model's own runtime, and a user can see what the analysis sees.
//
//===----------------------------------------------------------------------===//

#include "GraphToFunc.h"

#include "../ONNXToTTT/Normalize.h"
#include "ttt/Conversion/Passes.h"

#include "mlir/IR/Verifier.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTREADONNXASLINALG
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

namespace {
struct TTTReadONNXAsLinalgPass
    : public mlir::ttt::impl::TTTReadONNXAsLinalgBase<TTTReadONNXAsLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<onnx::GraphOp> graphs;
    for (auto graph : getOperation().getOps<onnx::GraphOp>())
      graphs.push_back(graph);
    for (onnx::GraphOp graph : graphs) {
      // As the canonical route reads it: shapes computed from static types
      // are constants.
      raise::foldShapeArithmetic(graph);
      ConvertedGraph converted(graph);
      if (!converted.opaque.empty()) {
        OpaqueNode &first = converted.opaque.front();
        first.node.emitError() << "'" << first.node.getOpType()
                               << "' is not read as linalg: " << first.reason;
        return signalPassFailure();
      }
      func::FuncOp func = converted.func;
      func.walk([](Operation *op) { op->removeAttr(kRecordAttr); });
      func->remove();
      getOperation().getBody()->push_back(func);
      graph->erase();
      if (failed(mlir::verify(func)))
        return signalPassFailure();
    }
    // The module is no ONNX model any more: a runner of upstream dialects
    // need not know the onnx dialect to read it.
    ModuleOp module = getOperation();
    for (NamedAttribute attr : llvm::to_vector(module->getDiscardableAttrs()))
      if (attr.getName().strref().starts_with("onnx."))
        module->removeDiscardableAttr(attr.getName());
  }
};
} // namespace
