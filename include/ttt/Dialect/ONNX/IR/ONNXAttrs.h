//===- ONNXAttrs.h - onnx attributes ----------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXATTRS_H
#define TTT_DIALECT_ONNX_IR_ONNXATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#define GET_ATTRDEF_CLASSES
#include "ttt/Dialect/ONNX/IR/ONNXAttrs.h.inc"

namespace mlir::ttt::onnx {

/// The ONNX attribute kinds a node attribute maps to (AttributeProto's
/// AttributeType, less the sparse and type kinds, which are not supported).
enum class AttrKind {
  Int,
  Float,
  String,
  Tensor,
  Graph,
  Ints,
  Floats,
  Strings,
  Tensors,
  Graphs
};

/// The ONNX kind `attr` is written as, or std::nullopt if it has no ONNX
/// form. An empty ArrayAttr is written as STRINGS (INTS and FLOATS are
/// DenseI64ArrayAttr / DenseF32ArrayAttr, which keep their kind when empty).
std::optional<AttrKind> getAttrKind(Attribute attr);

/// The name of `kind` as ONNX spells it ("INT", "GRAPHS", ...).
llvm::StringRef stringifyAttrKind(AttrKind kind);

} // namespace mlir::ttt::onnx

#endif // TTT_DIALECT_ONNX_IR_ONNXATTRS_H
