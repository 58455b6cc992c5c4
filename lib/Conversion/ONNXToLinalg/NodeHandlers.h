//===- NodeHandlers.h - one ONNX node to linalg on tensors ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX front end of the canonical route converts each default-domain node
// into the ops the body of a `ttt.chunk_loop` admits (linalg on tensors,
// reshapes and slices, constants), by a small handler chosen by the node's op
// type and the opset it was written against: a handler row says from which
// since-version of the operator it holds, as torch-mlir's
// `TorchOnnxToTorch` patterns do. A handler that cannot convert a node says
// why; the node then stays opaque to the analysis (its results become
// arguments of the converted function).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOLINALG_NODEHANDLERS_H
#define TTT_LIB_CONVERSION_ONNXTOLINALG_NODEHANDLERS_H

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>

namespace mlir::ttt::onnx_to_linalg {

/// What a handler reads of one node.
struct NodeView {
  mutable onnx::NodeOp node;
  /// The converted value of each input; null where an input has none (an
  /// omitted optional input, an integer tensor that only feeds shapes).
  ArrayRef<Value> inputs;

  Location loc() const { return node.getLoc(); }
  unsigned numInputs() const { return node.getInputs().size(); }
  /// True if input `i` is given (not omitted).
  bool hasInput(unsigned i) const;
  /// The integers of input `i` when it is a constant integer tensor (a
  /// Constant node or an initializer, dense or a resource blob).
  std::optional<SmallVector<int64_t>> constantInts(unsigned i) const;
  /// The value of input `i` when it is a constant float tensor of one
  /// element.
  std::optional<double> constantFloat(unsigned i) const;
  int64_t intAttr(StringRef name, int64_t otherwise) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;
  std::optional<double> floatAttr(StringRef name) const;
  /// The static ranked tensor type of result `i`, or null.
  RankedTensorType resultType(unsigned i = 0) const;
  /// The static ranked tensor type of input `i`'s converted value, or null.
  RankedTensorType inputType(unsigned i) const;
};

/// Converts one node at the builder's insertion point; sets `results` (one
/// per node result, null for a result that gets no counterpart) or returns
/// failure with `why` set.
using Handler = LogicalResult (*)(OpBuilder &b, const NodeView &node,
                                  SmallVectorImpl<Value> &results,
                                  std::string &why);

/// A handler for the operator `opType` of the default domain, from opset
/// `sinceVersion` up to the next row of the same operator.
struct HandlerRow {
  StringLiteral opType;
  int64_t sinceVersion;
  Handler handler;
};

ArrayRef<HandlerRow> elementwiseHandlers();
ArrayRef<HandlerRow> contractionHandlers();
ArrayRef<HandlerRow> shapeHandlers();
ArrayRef<HandlerRow> reductionHandlers();
ArrayRef<HandlerRow> normalizationHandlers();
ArrayRef<HandlerRow> assemblyHandlers();

/// The handler of `opType` for a model importing `opset`, or null.
Handler findHandler(StringRef opType, int64_t opset);

//===----------------------------------------------------------------------===//
// Builders the handlers share
//===----------------------------------------------------------------------===//

/// An `arith.constant` scalar of float `type`.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// A `tensor.empty` of a static type.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// A tensor of a static float type filled with `value` (a `linalg.fill` of
/// an `arith.constant` into a `tensor.empty`).
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value);

/// `body` applied elementwise to `inputs` under NumPy broadcasting into a
/// result of `type` (a `linalg.generic`; a broadcast dimension is read at
/// index 0, a missing leading one not at all). Null if the shapes do not
/// broadcast statically.
Value broadcastElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// broadcastElementwise into `results`, or failure with `why` set when the
/// shapes do not broadcast.
LogicalResult
pushElementwise(OpBuilder &b, const NodeView &node, ValueRange inputs,
                RankedTensorType type,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                SmallVectorImpl<Value> &results, std::string &why);

/// `source` reshaped to `type` by a collapse and an expansion of contiguous
/// groups of dimensions (no op when the shapes are equal). Null if the
/// shapes have no such grouping.
Value reshapeTo(OpBuilder &b, Location loc, Value source,
                RankedTensorType type);

/// `update` written into `data` at `offsets`, unit strides (a
/// `tensor.insert_slice`).
Value insertBox(OpBuilder &b, Location loc, Value update, Value data,
                ArrayRef<int64_t> offsets);

} // namespace mlir::ttt::onnx_to_linalg

#endif // TTT_LIB_CONVERSION_ONNXTOLINALG_NODEHANDLERS_H
