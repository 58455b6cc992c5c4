//===- AssumedSizes.h - sizes a reading takes as equal ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// torch-mlir lowers a model exported with a dynamic batch to tensors whose
// run-time sizes are independent (`?`), and spells numpy broadcasting of one
// of them as a gather or an expand to another tensor's size. The layer is
// the same where those sizes are equal, which is the only case the exported
// model is made for. A reading that takes two such sizes as equal records
// it on its graph (by the names of the two values), and `ttt-raise-linalg`
// asserts the equality (`cf.assert`) in the function before every layer it
// raises through the value the record names: the raised program computes
// what the original does, or stops with that message.
//
// Only a graph read from a linalg program may take sizes as equal (its
// graph op carries kMayAssumeSizes): an ONNX model has no way to assert it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_ASSUMEDSIZES_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_ASSUMEDSIZES_H

#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

namespace mlir::ttt::raise {

inline constexpr llvm::StringLiteral kMayAssumeSizes = "ttt.may_assume_sizes";

/// Size `dimA` of the value named `a` equals size `dimB` of the value named
/// `b`, for reading the value named `licenses`.
struct EqualSizes {
  StringRef a;
  int64_t dimA;
  StringRef b;
  int64_t dimB;
  StringRef licenses;
};

/// The graph that holds `op`, if it may take sizes as equal.
onnx::GraphOp graphThatMayAssumeSizes(Operation *op);

/// The name of a graph value: its node's output name or its argument's.
std::optional<StringRef> valueName(Value value);

/// Records `sizes` on `graph`.
void assumeEqualSizes(onnx::GraphOp graph, const EqualSizes &sizes);

/// What `graph` records, in the order it was recorded.
SmallVector<EqualSizes> assumedEqualSizes(onnx::GraphOp graph);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_ASSUMEDSIZES_H
