//===- NormalizeLoops.cpp - a Loop's chunk outputs in a carried sequence --===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A scripted chunk loop collects its chunk outputs either by appending them
// to a carried sequence (torch's `outs.append(o)`) or as scan outputs (the
// body yields o after the carried values; the Loop stacks them on a new
// leading axis). The second becomes the first, so that the raise reads one
// form: the scan output is the stack of the sequence's elements at axis 0.
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// ONNX's TensorProto data type number of a float element type, for
/// SequenceEmpty's dtype.
static std::optional<int64_t> floatDataType(Type type) {
  if (type.isF32())
    return 1;
  if (type.isF16())
    return 10;
  if (type.isF64())
    return 11;
  if (type.isBF16())
    return 16;
  return std::nullopt;
}

namespace {
/// Loop(.., scan outputs o_j) -> Loop(.., carried sequences s_j that the
/// body appends o_j to), each scan result replaced by
/// ConcatFromSequence(s_j, axis 0, new_axis 1). A Loop that runs no
/// iteration scans an empty tensor, but ConcatFromSequence refuses an empty
/// sequence: the raise only claims Loops that run once per chunk of a
/// non-empty sequence.
struct ScanOutputsToSequences : OpRewritePattern<onnx::NodeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(onnx::NodeOp loop,
                                PatternRewriter &rewriter) const override {
    if (!loop.isDefaultDomain() || loop.getOpType() != "Loop" ||
        loop->getNumRegions() != 1 || loop->getRegion(0).empty() ||
        loop.getInputs().size() < 2)
      return failure();
    Block &body = loop->getRegion(0).front();
    auto yield = dyn_cast<onnx::YieldOp>(body.getTerminator());
    onnx::GraphAttr graph = loop.getGraphAttrOfRegion(0);
    unsigned carried = loop.getInputs().size() - 2;
    if (!yield || !graph || body.getNumArguments() != carried + 2 ||
        yield.getNumOperands() < carried + 1 ||
        loop->getNumResults() != yield.getNumOperands() - 1)
      return rewriter.notifyMatchFailure(loop, "not a well-formed Loop");
    unsigned scans = yield.getNumOperands() - 1 - carried;
    if (scans == 0)
      return rewriter.notifyMatchFailure(loop, "no scan outputs");
    SmallVector<Type> elementTypes;
    SmallVector<int64_t> dataTypes;
    for (Value scanned : yield.getOperands().drop_front(1 + carried)) {
      auto type = dyn_cast<TensorType>(scanned.getType());
      std::optional<int64_t> dtype =
          type ? floatDataType(type.getElementType()) : std::nullopt;
      if (!dtype)
        return rewriter.notifyMatchFailure(loop, "a scan output is not a "
                                                 "float tensor");
      elementTypes.push_back(type);
      dataTypes.push_back(*dtype);
    }

    Location loc = loop.getLoc();
    MLIRContext *context = rewriter.getContext();
    SmallVector<Value> inputs(loop.getInputs());
    SmallVector<Type> resultTypes(
        TypeRange(loop->getResultTypes()).take_front(carried));
    SmallVector<Attribute> names, bodyInputs(graph.getInputs().getValue());
    std::optional<ArrayAttr> outputNames = loop.getOutputs();
    for (unsigned j = 0; j < scans; ++j) {
      auto sequence = onnx::SequenceType::get(
          context, UnrankedTensorType::get(
                       cast<TensorType>(elementTypes[j]).getElementType()));
      onnx::OnnxBuilder b(rewriter, loc, rewriter.getF32Type());
      inputs.push_back(b.build("SequenceEmpty", {}, TypeRange{sequence},
                               {b.attr("dtype", dataTypes[j])}, 0)
                           ->getResult(0));
      resultTypes.push_back(sequence);
      std::string name = graph.getName().str() + ".scan" + std::to_string(j);
      bodyInputs.push_back(rewriter.getStringAttr(name + ".in"));
      if (outputNames)
        names.push_back(rewriter.getStringAttr(
            cast<StringAttr>((*outputNames)[carried + j]).str() + ".seq"));
    }
    SmallVector<Attribute> allNames;
    if (outputNames) {
      allNames.append(outputNames->begin(), outputNames->begin() + carried);
      allNames.append(names);
    }

    // The body: one more carried argument per scan output, which it appends
    // to and yields in the scan output's place.
    SmallVector<Value> yielded(yield.getOperands().take_front(1 + carried));
    SmallVector<Attribute> bodyOutputs(
        graph.getOutputs().getValue().take_front(1 + carried));
    rewriter.setInsertionPoint(yield);
    for (unsigned j = 0; j < scans; ++j) {
      BlockArgument in = body.addArgument(resultTypes[carried + j], loc);
      onnx::OnnxBuilder b(rewriter, loc, rewriter.getF32Type());
      Value appended =
          b.node("SequenceInsert", {in, yield.getOperand(1 + carried + j)},
                 in.getType());
      std::string name = graph.getName().str() + ".scan" + std::to_string(j);
      appended.getDefiningOp()->setAttr(
          "outputs", rewriter.getStrArrayAttr({name + ".out"}));
      yielded.push_back(appended);
      bodyOutputs.push_back(rewriter.getStringAttr(name + ".out"));
    }
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(yielded); });

    NamedAttrList attrs(loop.getAttrsAttr());
    attrs.set("body", onnx::GraphAttr::get(context, 0, graph.getName(),
                                           rewriter.getArrayAttr(bodyInputs),
                                           rewriter.getArrayAttr(bodyOutputs)));
    rewriter.setInsertionPoint(loop);
    auto rewritten = onnx::NodeOp::create(
        rewriter, loc, resultTypes, loop.getOpType(), loop.getDomain(),
        attrs.getDictionary(context), loop.getNodeNameAttr(),
        outputNames ? rewriter.getArrayAttr(allNames) : ArrayAttr(),
        loop.getDocStringAttr(), inputs, /*subgraphs=*/1);
    rewriter.inlineRegionBefore(loop->getRegion(0), rewritten->getRegion(0),
                                rewritten->getRegion(0).end());
    SmallVector<Value> replacements(
        rewritten->getResults().take_front(carried));
    for (unsigned j = 0; j < scans; ++j) {
      onnx::OnnxBuilder b(rewriter, loc, rewriter.getF32Type());
      replacements.push_back(
          b.node("ConcatFromSequence", {rewritten->getResult(carried + j)},
                 loop->getResult(carried + j).getType(),
                 {b.attr("axis", int64_t(0)), b.attr("new_axis", int64_t(1))}));
    }
    rewriter.replaceOp(loop, replacements);
    return success();
  }
};
} // namespace

void raise::loosenRankChangingCarriedTypes(onnx::GraphOp graph) {
  graph.walk([](onnx::NodeOp loop) {
    if (loop.getOpType() != "Loop" || loop->getNumRegions() != 1 ||
        loop->getRegion(0).empty())
      return;
    Block &body = loop->getRegion(0).front();
    auto yield = dyn_cast<onnx::YieldOp>(body.getTerminator());
    // Yielded: the condition, the carried values, then the scan outputs.
    if (!yield || yield->getNumOperands() + 1 < body.getNumArguments())
      return;
    for (unsigned i = 2, e = body.getNumArguments(); i < e; ++i) {
      BlockArgument carried = body.getArgument(i);
      auto declared = dyn_cast<RankedTensorType>(carried.getType());
      auto next =
          dyn_cast<RankedTensorType>(yield->getOperand(i - 1).getType());
      if (declared && (!next || next.getRank() != declared.getRank()))
        carried.setType(UnrankedTensorType::get(declared.getElementType()));
    }
  });
}

void raise::populateLoopNormalizations(RewritePatternSet &patterns) {
  patterns.add<ScanOutputsToSequences>(patterns.getContext());
}
