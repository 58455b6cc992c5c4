//===- ONNXDialect.cpp - onnx dialect and its discardable attributes ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Registers the dialect and verifies the `onnx.*` attributes that hold model
// metadata (on the module) and input/output names (on onnx.graph arguments
// and results).
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::ttt::onnx;

#include "ttt/Dialect/ONNX/IR/ONNXOpsDialect.cpp.inc"

void ONNXDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ttt/Dialect/ONNX/IR/ONNXOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

/// Checks that `attr` is a string attribute named `name` on `op`.
static LogicalResult expectString(Operation *op, NamedAttribute attr) {
  if (!isa<StringAttr>(attr.getValue()))
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be a string, got " << attr.getValue();
  return success();
}

static LogicalResult expectInteger(Operation *op, NamedAttribute attr) {
  if (!isa<IntegerAttr>(attr.getValue()))
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be an integer, got " << attr.getValue();
  return success();
}

LogicalResult ONNXDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kProducerName || name == kProducerVersion ||
      name == kModelDomain || name == kDocString)
    return expectString(op, attr);
  if (name == kIrVersion || name == kModelVersion)
    return expectInteger(op, attr);
  if (name == kOpsetImport) {
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    if (!array)
      return op->emitOpError()
             << "'" << name << "' must be an array of #onnx.opset";
    llvm::StringSet<> domains;
    for (Attribute element : array) {
      auto opset = dyn_cast<OpsetAttr>(element);
      if (!opset)
        return op->emitOpError()
               << "'" << name << "' must hold #onnx.opset, got " << element;
      if (!domains.insert(opset.getDomain()).second)
        return op->emitOpError() << "'" << name << "' imports domain \""
                                 << opset.getDomain() << "\" twice";
    }
    return success();
  }
  if (name == kFunctions) {
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    if (!array)
      return op->emitOpError()
             << "'" << name << "' must be an array of #onnx.function";
    llvm::StringSet<> seen;
    for (Attribute element : array) {
      auto function = dyn_cast<FunctionAttr>(element);
      if (!function)
        return op->emitOpError()
               << "'" << name << "' must hold #onnx.function, got " << element;
      if (!seen.insert((function.getDomain() + "::" + function.getName()).str())
               .second)
        return op->emitOpError()
               << "'" << name << "' defines function '" << function.getDomain()
               << "::" << function.getName() << "' twice";
    }
    return success();
  }
  if (name == kMetadataProps) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict)
      return op->emitOpError()
             << "'" << name << "' must be a dictionary of strings";
    for (NamedAttribute entry : dict)
      if (!isa<StringAttr>(entry.getValue()))
        return op->emitOpError()
               << "'" << name << "' entry '" << entry.getName().getValue()
               << "' must be a string, got " << entry.getValue();
    return success();
  }
  if (name == kName || name == kDimParams || name == kDefault)
    return op->emitOpError()
           << "'" << name << "' belongs on an onnx.graph argument or result";
  return op->emitOpError() << "unknown onnx dialect attribute '" << name << "'";
}

/// Verifies `onnx.name` and `onnx.dim_params` of a graph input or output of
/// type `type`.
static LogicalResult verifyValueAttr(Operation *op, Type type,
                                     NamedAttribute attr, StringRef what,
                                     unsigned index) {
  StringRef name = attr.getName().getValue();
  if (!isa<GraphOp>(op))
    return op->emitOpError()
           << "'" << name << "' is only meaningful on onnx.graph";
  if (name == ONNXDialect::kName)
    return expectString(op, attr);
  if (name == ONNXDialect::kDimParams) {
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!array || !ranked ||
        array.size() != static_cast<size_t>(ranked.getRank()) ||
        !llvm::all_of(array, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitOpError()
             << "'" << name << "' of " << what << " #" << index
             << " must be one string per dimension of its ranked tensor "
                "type "
             << type;
    return success();
  }
  return op->emitOpError() << "unknown onnx dialect attribute '" << name
                           << "' on " << what << " #" << index;
}

LogicalResult ONNXDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  auto graph = dyn_cast<GraphOp>(op);
  if (!graph || regionIndex != 0 || argIndex >= graph.getNumArguments())
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' is only meaningful on onnx.graph inputs";
  Type type = graph.getArgumentTypes()[argIndex];
  if (attr.getName() == kDefault) {
    auto value = dyn_cast<ElementsAttr>(attr.getValue());
    if (!value || value.getType() != type)
      return op->emitOpError()
             << "'" << kDefault << "' of input #" << argIndex
             << " must be an elements attribute of the input's type " << type;
    if (!isSupportedElementType(value.getElementType()))
      return op->emitOpError() << "'" << kDefault << "' of input #" << argIndex
                               << " has an element type ONNX cannot hold";
    return success();
  }
  return verifyValueAttr(op, type, attr, "input", argIndex);
}

LogicalResult ONNXDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  auto graph = dyn_cast<GraphOp>(op);
  if (!graph || resultIndex >= graph.getNumResults())
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' is only meaningful on onnx.graph outputs";
  return verifyValueAttr(op, graph.getResultTypes()[resultIndex], attr,
                         "output", resultIndex);
}

std::optional<int64_t> mlir::ttt::onnx::getDefaultOpset(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  auto imports = module->getAttrOfType<ArrayAttr>(ONNXDialect::kOpsetImport);
  if (!imports)
    return std::nullopt;
  for (Attribute attr : imports)
    if (auto opset = dyn_cast<OpsetAttr>(attr))
      if (opset.getDomain().empty() || opset.getDomain() == "ai.onnx")
        return opset.getVersion();
  return std::nullopt;
}
