//===- LinalgAlgebra.h - the shared algebra as linalg on tensors -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// TensorAlgebra as linalg/tensor/scf ops on tensors: every map one
// linalg.generic (so an element-wise chain is one loop nest), every product
// one contraction whose innermost loop is contiguous in its result (what
// ttt-contractions-to-blas and the vectorizer take), the doubling loop an
// scf.while. Sizes are index values; static ones stay static in the types.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_UTILS_LINALGALGEBRA_H
#define TTT_CONVERSION_UTILS_LINALGALGEBRA_H

#include "ttt/Conversion/Utils/Algebra.h"
#include "ttt/Conversion/Utils/TensorMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::ttt {

class LinalgAlgebra : public TensorAlgebra {
public:
  LinalgAlgebra(OpBuilder &b, Location loc, FloatType type)
      : tm(b, loc, type), b(b), loc(loc) {}

  TensorMath &math() { return tm; }

  Value size(int64_t n) override;
  Value dim(Value x, int64_t axis) override;
  Value sizeAdd(Value a, Value c) override;
  Value sizeSub(Value a, Value c) override;
  Value sizeMul(Value a, Value c) override;
  Value sizeCeilDiv(Value a, int64_t c) override;
  Value chunkLengths(Value tokens, Value length, Value count) override;

  Value map(ValueRange inputs, ElementwiseBody body) override;
  Value mapWith(ValueRange inputs, Value other, ArrayRef<int64_t> otherAxes,
                ElementwiseBody body) override;
  Value mapBroadcast(ValueRange inputs, ValueRange others,
                     ElementwiseBody body) override;
  Value expandAxes(Value x, ArrayRef<int64_t> axes) override;

  Value matmul(Value a, Value c, bool transposeB) override;
  Value matmulTransposedA(Value a, Value c) override;
  Value transposeInner(Value x) override;
  Value symmetricSquare(Value s) override;
  Value sumSquaresInner(Value x) override;
  Value lowerTriangle(Value x, int64_t size) override;
  Value plusIdentity(Value x, int64_t size) override;

  Value sumLast(Value x) override;
  Value column(Value x, int64_t index) override;

  Value slice(Value x, int64_t axis, Value from, Value to) override;
  Value replaceFrom(Value x, int64_t axis, Value from, Value tail) override;
  Value padEnd(Value x, int64_t axis, Value count, double value = 0.0) override;
  Value splitAxis(Value x, int64_t axis, Value outer, Value inner,
                  std::optional<int64_t> staticInner) override;
  Value mergeAxes(Value x, int64_t axis) override;
  Value shiftByOne(Value x, int64_t axis, Value first) override;

  SmallVector<Value> doublingLoop(Value count, ValueRange carried,
                                  DoublingBody body) override;

private:
  /// The batched product of matmul and matmulTransposedA.
  Value contract(Value a, Value c, bool transposeA, bool transposeB);
  /// The inputs element by element with each of `others` read through its
  /// map in `otherMaps`.
  Value mapWithMaps(ValueRange inputs, ValueRange others,
                    ArrayRef<AffineMap> otherMaps, ElementwiseBody body);
  /// Each element of the matrices of x through `body`, with whether its row
  /// and column index compare by `rowToColumn` (row >= column, say).
  Value mapByPosition(Value x, arith::CmpIPredicate rowToColumn,
                      function_ref<Value(ScalarMath &, Value, Value)> body);
  /// The map that reads `otherType` broadcast to `type` as NumPy does.
  AffineMap broadcastMap(RankedTensorType type, RankedTensorType otherType);

  TensorMath tm;
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::ttt

#endif // TTT_CONVERSION_UTILS_LINALGALGEBRA_H
