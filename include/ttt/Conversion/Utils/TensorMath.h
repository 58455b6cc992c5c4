//===- TensorMath.h - linalg-on-tensors math for lowerings ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The lowerings of the ttt and linattn ops are written as matrix algebra on
// the rows of one (batch, head) stream: products, transposes, row and column
// scalings, reductions and element-wise maps. TensorMath emits each of these
// as one linalg op on tensors, so the lowering code reads like the math and
// the result stays open to tiling, fusion and vectorization. Sizes may be
// dynamic; they are read off the operands.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_UTILS_TENSORMATH_H
#define TTT_CONVERSION_UTILS_TENSORMATH_H

#include "ttt/Conversion/Utils/Algebra.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::ttt {

/// Builds scalar arithmetic in one float type (usable inside linalg bodies
/// and outside them): the element-wise math of the linalg back end.
class ScalarMath : public ElementwiseMath {
public:
  ScalarMath(OpBuilder &b, Location loc, FloatType type)
      : b(b), loc(loc), type(type) {}

  Value constant(double value) override;
  Value add(Value x, Value y) override;
  Value sub(Value x, Value y) override;
  Value mul(Value x, Value y) override;
  Value div(Value x, Value y) override;
  Value sqrt(Value x) override;
  Value tanh(Value x) override;
  Value sigmoid(Value x) override;
  Value relu(Value x) override;
  Value positive(Value x) override;
  Value roundTo(Value x, FloatType narrow) override;
  Value neg(Value x);
  Value exp(Value x);
  Value max(Value x, Value y);
  /// The i1 `x > y` (ordered).
  Value greaterThan(Value x, Value y);
  Value select(Value cond, Value x, Value y);
  /// Converts an index to this float type.
  Value fromIndex(Value index);

  OpBuilder &builder() { return b; }
  Location getLoc() { return loc; }
  FloatType getType() { return type; }

private:
  OpBuilder &b;
  Location loc;
  FloatType type;
};

/// A body of an element-wise map: gets the scalar math of the body's builder
/// and the scalar operands, returns the result.
using MapBody = function_ref<Value(ScalarMath &, ValueRange)>;

/// Emits linalg ops on 1-D and 2-D float tensors.
class TensorMath {
public:
  TensorMath(OpBuilder &b, Location loc, FloatType type)
      : b(b), loc(loc), type(type), scalar(b, loc, type) {}

  ScalarMath &s() { return scalar; }
  OpBuilder &builder() { return b; }
  Location getLoc() { return loc; }
  FloatType getType() { return type; }

  // --- Shapes ------------------------------------------------------------
  OpFoldResult dim(Value tensor, int64_t d);
  SmallVector<OpFoldResult> sizes(Value tensor);
  Value indexValue(OpFoldResult size);
  /// A tensor of `sizes` filled with `value` (a scalar Value).
  Value full(ArrayRef<OpFoldResult> sizes, Value value);
  Value zeros(ArrayRef<OpFoldResult> sizes);
  /// `dest` (a tensor of this float type) with every element `value`.
  Value fill(Value dest, Value value);
  Value zerosLike(Value tensor) { return zeros(sizes(tensor)); }

  // --- Slices ------------------------------------------------------------
  /// `source[offsets..., sizes...]` with unit strides, dropping the leading
  /// dims whose size is 1 until the result has `resultRank` dims.
  Value slice(Value source, ArrayRef<OpFoldResult> offsets,
              ArrayRef<OpFoldResult> sizes, int64_t resultRank);
  /// Inserts `piece` into `dest` at `offsets` (sizes of the full dest rank).
  Value insert(Value piece, Value dest, ArrayRef<OpFoldResult> offsets,
               ArrayRef<OpFoldResult> sizes);
  /// Column `col` of a 2-D tensor as a 1-D tensor.
  Value column(Value matrix, OpFoldResult col);

  // --- Matrix algebra on 2-D tensors ----------------------------------------
  /// op(a) * op(b) with op = transpose where requested.
  Value matmul(Value a, Value b, bool transposeA = false,
               bool transposeB = false);
  Value transpose(Value a);
  /// The n x n identity for a static n.
  Value identity(int64_t n);

  // --- Element-wise --------------------------------------------------------
  /// Same-shaped inputs (any rank), one result of that shape.
  Value map(ValueRange inputs, MapBody body);
  /// a[i, j] * v[i] and a[i, j] * v[j].
  Value scaleRows(Value a, Value v);
  Value scaleCols(Value a, Value v);
  /// a[i, j] + r[0, j] for a 1 x c row r.
  Value addRow(Value a, Value r);
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value mul(Value a, Value c);
  /// a * x for a scalar Value x.
  Value scale(Value a, Value x);
  /// The lower triangle of a square matrix: out[i, j] = (i >= j) ? a[i, j] : 0.
  Value lowerTriangle(Value a);

  // --- Reductions ------------------------------------------------------------
  Value rowSums(Value a);  ///< [n] = sum over columns
  Value colSums(Value a);  ///< [c] = sum over rows
  Value sumAll(Value a);   ///< scalar Value: sum of every element
  Value colNorms(Value a); ///< [c] Euclidean norm of each column
  Value frobeniusNorm(Value a);

  /// a[i, j] fn v[i] (per-row operand) and a[i, j] fn v[j] (per-column).
  Value rowwise(Value a, Value v,
                function_ref<Value(ScalarMath &, Value, Value)> fn);
  Value colwise(Value a, Value v,
                function_ref<Value(ScalarMath &, Value, Value)> fn);
  /// Converts a float tensor to element type `to` (extf / truncf).
  Value convert(Value a, FloatType to);

  /// One linalg.generic with a single result initialised by `init`; the
  /// body gets the input scalars followed by the accumulator.
  Value generic(Type resultType, ValueRange inputs, Value init,
                ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iters,
                function_ref<Value(ScalarMath &, ValueRange)> body);

private:
  /// a[i, j] fn v[...] where `vMap` picks v's element for (i, j).
  Value broadcast(Value a, Value v, AffineMap vMap,
                  function_ref<Value(ScalarMath &, Value, Value)> fn);

  OpBuilder &b;
  Location loc;
  FloatType type;
  ScalarMath scalar;
};

} // namespace mlir::ttt

#endif // TTT_CONVERSION_UTILS_TENSORMATH_H
