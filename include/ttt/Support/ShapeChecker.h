//===- ShapeChecker.h - shape checks for op verifiers -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the ttt and linattn ops check many "dimension d of operand x
// is the batch / heads / sequence length" facts. This helper words them all
// the same way: what the dimension means, what it must be, what it is.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_SUPPORT_SHAPECHECKER_H
#define TTT_SUPPORT_SHAPECHECKER_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::ttt {

/// Size of dimension `dim` of a ranked-tensor value.
inline int64_t dimOf(Value value, int64_t dim) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dim);
}

/// Merges two sizes that must agree: the static one wins.
inline int64_t mergeDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

class ShapeChecker {
public:
  explicit ShapeChecker(Operation *op) : op(op) {}

  /// Requires `value` to be ranked with one of `ranks`.
  LogicalResult rank(Value value, StringRef name, ArrayRef<int64_t> ranks,
                     StringRef layout) {
    auto type = cast<RankedTensorType>(value.getType());
    if (llvm::is_contained(ranks, type.getRank()))
      return success();
    return op->emitOpError() << "expects '" << name << "' to have shape "
                             << layout << ", got " << type;
  }

  /// Requires dim `dim` of `value` to agree with `expected` (dynamic matches).
  LogicalResult dim(Value value, StringRef name, int64_t dim, int64_t expected,
                    StringRef what) {
    int64_t actual = dimOf(value, dim);
    if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) ||
        actual == expected)
      return success();
    return op->emitOpError()
           << "dimension " << dim << " of '" << name << "' is " << what
           << " and must be " << expected << ", got " << actual;
  }

  /// Requires dim `dim` of `value` to be static.
  LogicalResult staticDim(Value value, StringRef name, int64_t dim,
                          StringRef what) {
    if (!cast<RankedTensorType>(value.getType()).isDynamicDim(dim))
      return success();
    return op->emitOpError()
           << "dimension " << dim << " of '" << name << "' is " << what
           << " and must be static; only batch, heads and "
              "sequence length may be dynamic";
  }

  /// Requires every value to have `elementType`.
  LogicalResult elementTypes(Type elementType, ValueRange values,
                             StringRef reference) {
    for (Value value : values) {
      Type type = cast<ShapedType>(value.getType()).getElementType();
      if (type != elementType)
        return op->emitOpError()
               << "expects every operand and result to have element type "
               << elementType << " (the type of '" << reference << "'), got "
               << type;
    }
    return success();
  }

private:
  Operation *op;
};

} // namespace mlir::ttt

#endif // TTT_SUPPORT_SHAPECHECKER_H
