//===- ONNXAttrs.cpp - onnx attributes ------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/ONNX/IR/ONNXAttrs.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ttt::onnx;

#define GET_ATTRDEF_CLASSES
#include "ttt/Dialect/ONNX/IR/ONNXAttrs.cpp.inc"

void ONNXDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ttt/Dialect/ONNX/IR/ONNXAttrs.cpp.inc"
      >();
}

LogicalResult OpsetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef domain, int64_t version) {
  if (version < 1)
    return emitError() << "opset version of domain \"" << domain
                       << "\" must be at least 1, got " << version;
  return success();
}

LogicalResult GraphAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                unsigned region, StringAttr name,
                                ArrayAttr inputs, ArrayAttr outputs) {
  auto allStrings = [](ArrayAttr array) {
    return llvm::all_of(array, [](Attribute a) { return isa<StringAttr>(a); });
  };
  if (!name)
    return emitError() << "a graph needs a name";
  if (!allStrings(inputs) || !allStrings(outputs))
    return emitError() << "graph inputs and outputs must be names (strings)";
  return success();
}

std::optional<AttrKind> mlir::ttt::onnx::getAttrKind(Attribute attr) {
  if (isa<IntegerAttr>(attr))
    return AttrKind::Int;
  if (isa<FloatAttr>(attr))
    return AttrKind::Float;
  if (isa<StringAttr>(attr))
    return AttrKind::String;
  if (isa<GraphAttr>(attr))
    return AttrKind::Graph;
  if (isa<DenseI64ArrayAttr>(attr))
    return AttrKind::Ints;
  if (isa<DenseF32ArrayAttr>(attr))
    return AttrKind::Floats;
  if (auto elements = dyn_cast<ElementsAttr>(attr))
    return isSupportedElementType(elements.getElementType())
               ? std::optional(AttrKind::Tensor)
               : std::nullopt;
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array)
    return std::nullopt;
  if (array.empty())
    return AttrKind::Strings;
  std::optional<AttrKind> first = getAttrKind(array[0]);
  if (!first || !llvm::all_of(array, [&](Attribute element) {
        return getAttrKind(element) == first;
      }))
    return std::nullopt;
  switch (*first) {
  case AttrKind::String:
    return AttrKind::Strings;
  case AttrKind::Tensor:
    return AttrKind::Tensors;
  case AttrKind::Graph:
    return AttrKind::Graphs;
  default:
    return std::nullopt;
  }
}

StringRef mlir::ttt::onnx::stringifyAttrKind(AttrKind kind) {
  switch (kind) {
  case AttrKind::Int:
    return "INT";
  case AttrKind::Float:
    return "FLOAT";
  case AttrKind::String:
    return "STRING";
  case AttrKind::Tensor:
    return "TENSOR";
  case AttrKind::Graph:
    return "GRAPH";
  case AttrKind::Ints:
    return "INTS";
  case AttrKind::Floats:
    return "FLOATS";
  case AttrKind::Strings:
    return "STRINGS";
  case AttrKind::Tensors:
    return "TENSORS";
  case AttrKind::Graphs:
    return "GRAPHS";
  }
  llvm_unreachable("unknown attribute kind");
}
