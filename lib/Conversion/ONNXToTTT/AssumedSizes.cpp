//===- AssumedSizes.cpp - sizes a reading takes as equal ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "AssumedSizes.h"

#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"

using namespace mlir;
using namespace mlir::ttt;

/// The graph attribute that holds the records.
static constexpr llvm::StringLiteral kAssumedEqualSizes =
    "ttt.assumed_equal_sizes";

onnx::GraphOp raise::graphThatMayAssumeSizes(Operation *op) {
  auto graph = isa<onnx::GraphOp>(op) ? cast<onnx::GraphOp>(op)
                                      : op->getParentOfType<onnx::GraphOp>();
  return graph && graph->hasAttr(kMayAssumeSizes) ? graph : onnx::GraphOp();
}

std::optional<StringRef> raise::valueName(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto graph = dyn_cast<onnx::GraphOp>(arg.getOwner()->getParentOp());
    auto name = graph ? graph.getArgAttrOfType<StringAttr>(
                            arg.getArgNumber(), onnx::ONNXDialect::kName)
                      : StringAttr();
    return name ? std::optional<StringRef>(name.getValue()) : std::nullopt;
  }
  auto node = value.getDefiningOp<onnx::NodeOp>();
  ArrayAttr outputs = node ? node.getOutputsAttr() : ArrayAttr();
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (!outputs || index >= outputs.size())
    return std::nullopt;
  return cast<StringAttr>(outputs[index]).getValue();
}

void raise::assumeEqualSizes(onnx::GraphOp graph, const EqualSizes &sizes) {
  Builder b(graph.getContext());
  SmallVector<Attribute> records;
  if (auto old = graph->getAttrOfType<ArrayAttr>(kAssumedEqualSizes))
    records.assign(old.begin(), old.end());
  records.push_back(b.getDictionaryAttr(
      {b.getNamedAttr("a", b.getStringAttr(sizes.a)),
       b.getNamedAttr("b", b.getStringAttr(sizes.b)),
       b.getNamedAttr("dims", b.getDenseI64ArrayAttr({sizes.dimA, sizes.dimB})),
       b.getNamedAttr("licenses", b.getStringAttr(sizes.licenses))}));
  graph->setAttr(kAssumedEqualSizes, b.getArrayAttr(records));
}

SmallVector<raise::EqualSizes> raise::assumedEqualSizes(onnx::GraphOp graph) {
  SmallVector<EqualSizes> all;
  auto records = graph->getAttrOfType<ArrayAttr>(kAssumedEqualSizes);
  if (!records)
    return all;
  for (Attribute record : records) {
    auto dict = dyn_cast<DictionaryAttr>(record);
    auto a = dict ? dict.getAs<StringAttr>("a") : StringAttr();
    auto b = dict ? dict.getAs<StringAttr>("b") : StringAttr();
    auto dims =
        dict ? dict.getAs<DenseI64ArrayAttr>("dims") : DenseI64ArrayAttr();
    auto licenses = dict ? dict.getAs<StringAttr>("licenses") : StringAttr();
    if (a && b && dims && dims.size() == 2 && licenses)
      all.push_back(
          {a.getValue(), dims[0], b.getValue(), dims[1], licenses.getValue()});
  }
  return all;
}
