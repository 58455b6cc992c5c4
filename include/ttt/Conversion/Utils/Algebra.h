//===- Algebra.h - the builder interface the lowerings share ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The algorithms of the linear-attention forms (chunk views, the doubling
// scan, Newton-Schulz, the activations and their derivatives) and the linattn
// ops built from them are written once, in LinAttnAlgorithms.h and
// LinAttnForms.h, against the two small interfaces below. Each back end
// implements them once:
//
//   ElementwiseMath  ScalarMath (arith/math inside a linalg body), and the
//                    ONNX export's nodes on whole tensors (which broadcast);
//   TensorAlgebra    LinalgAlgebra (linalg/tensor/scf on tensors), and the
//                    ONNX export's OnnxAlgebra (default-domain nodes, a Loop).
//
// So the linalg lowering, the recurrent reference lowering and the ONNX
// export compute the same function by construction, and a fix to one
// algorithm reaches every back end.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_UTILS_ALGEBRA_H
#define TTT_CONVERSION_UTILS_ALGEBRA_H

#include "mlir/IR/TypeRange.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::ttt {

/// Element-wise arithmetic in one float type. A Value is a scalar (inside a
/// linalg body) or a whole tensor that broadcasts (ONNX nodes); the code
/// written against this interface does not know which.
class ElementwiseMath {
public:
  virtual ~ElementwiseMath() = default;

  virtual Value constant(double value) = 0;
  virtual Value add(Value x, Value y) = 0;
  virtual Value sub(Value x, Value y) = 0;
  virtual Value mul(Value x, Value y) = 0;
  virtual Value div(Value x, Value y) = 0;
  virtual Value sqrt(Value x) = 0;
  virtual Value tanh(Value x) = 0;
  virtual Value sigmoid(Value x) = 0;
  /// max(x, 0), with relu(NaN) as the back end's own Relu gives it.
  virtual Value relu(Value x) = 0;
  /// 1 where x > 0, else 0: relu's derivative as autograd takes it at 0.
  virtual Value positive(Value x) = 0;
  /// x rounded to the narrower float type `narrow` and widened back: what
  /// computing x in `narrow` keeps of it.
  virtual Value roundTo(Value x, FloatType narrow) = 0;
};

/// The body of an element-wise map: the math of the place it is built in,
/// and one element (or tensor) per input.
using ElementwiseBody = function_ref<Value(ElementwiseMath &, ValueRange)>;

/// Tensor algebra on float tensors of one element type. Sizes (`Value`s
/// named so) are index values in the linalg implementation and 1-element
/// i64 tensors in the ONNX one; only the methods below combine them.
class TensorAlgebra {
public:
  virtual ~TensorAlgebra() = default;

  // --- Sizes -----------------------------------------------------------------
  virtual Value size(int64_t n) = 0;
  virtual Value dim(Value x, int64_t axis) = 0;
  virtual Value sizeAdd(Value a, Value b) = 0;
  virtual Value sizeSub(Value a, Value b) = 0;
  virtual Value sizeMul(Value a, Value b) = 0;
  /// ceil(a / c) for a >= 0.
  virtual Value sizeCeilDiv(Value a, int64_t c) = 0;
  /// The lengths min(length, tokens - n length) of the chunks n = 0 ..
  /// count - 1 of a sequence, as floats [count] (exact integers converted
  /// once, so that a half-precision type still divides by the true count).
  virtual Value chunkLengths(Value tokens, Value length, Value count) = 0;

  // --- Element-wise ----------------------------------------------------------
  /// Same-shaped inputs, element by element.
  virtual Value map(ValueRange inputs, ElementwiseBody body) = 0;
  /// Same-shaped inputs with `other`, whose axes are `otherAxes` of theirs
  /// (in order): the body gets the inputs' elements, then other's.
  virtual Value mapWith(ValueRange inputs, Value other,
                        ArrayRef<int64_t> otherAxes, ElementwiseBody body) = 0;
  /// Same-shaped inputs with `others` broadcast to them as NumPy does: an
  /// other's axes are their last ones, and its static unit dims broadcast (a
  /// bias row [H, 1, F] over the batch and the tokens, say). The body gets
  /// the inputs' elements, then the others'.
  virtual Value mapBroadcast(ValueRange inputs, ValueRange others,
                             ElementwiseBody body) = 0;
  /// x with unit axes inserted so that they are the axes `axes` (ascending)
  /// of the result: [B, H, N] with {3, 4} is [B, H, N, 1, 1].
  virtual Value expandAxes(Value x, ArrayRef<int64_t> axes) = 0;

  // --- Batched matrices [..., r, c] -----------------------------------------
  /// a b, or a b^T, batched over the leading axes; b may have fewer
  /// leading axes than a (a weight shared by a's leading batch axes).
  virtual Value matmul(Value a, Value b, bool transposeB) = 0;
  /// a^T b, batched as matmul: [..., k, r] x [..., k, c] -> [..., r, c].
  virtual Value matmulTransposedA(Value a, Value b) = 0;
  virtual Value transposeInner(Value x) = 0;
  /// s s for each symmetric matrix s [..., n, n]. A back end may compute it
  /// as s s^T, the Gram product a BLAS computes at half the cost (SYRK).
  virtual Value symmetricSquare(Value s) = 0;
  /// The sum of squares of each matrix: [..., r, c] -> [...].
  virtual Value sumSquaresInner(Value x) = 0;
  /// Each matrix with its entries above the diagonal (column > row) zeroed;
  /// the matrices are `size` x `size`.
  virtual Value lowerTriangle(Value x, int64_t size) = 0;
  /// Each matrix plus the identity; the matrices are `size` x `size`.
  virtual Value plusIdentity(Value x, int64_t size) = 0;

  // --- Reductions and selections on the last axis ---------------------------
  /// [..., n] -> [...]: the sum over the last axis.
  virtual Value sumLast(Value x) = 0;
  /// [..., n] -> [...]: entry `index` of the last axis.
  virtual Value column(Value x, int64_t index) = 0;

  // --- Views along one axis --------------------------------------------------
  /// x[.., from:to, ..] on `axis`.
  virtual Value slice(Value x, int64_t axis, Value from, Value to) = 0;
  /// x with x[.., from:, ..] on `axis` replaced by `tail`.
  virtual Value replaceFrom(Value x, int64_t axis, Value from, Value tail) = 0;
  /// x with `count` elements of `value` appended to `axis`.
  virtual Value padEnd(Value x, int64_t axis, Value count,
                       double value = 0.0) = 0;
  /// Axis `axis` of `outer * inner` elements as two axes [outer, inner];
  /// `staticInner` is inner's value when it is a constant.
  virtual Value splitAxis(Value x, int64_t axis, Value outer, Value inner,
                          std::optional<int64_t> staticInner) = 0;
  /// Axes `axis` and `axis + 1` merged into one.
  virtual Value mergeAxes(Value x, int64_t axis) = 0;
  /// x moved one place along `axis`: `first` (one element on `axis`, its
  /// static unit dims broadcast to x's; zero when null) in place 0, x's
  /// last place dropped. An empty axis stays empty.
  virtual Value shiftByOne(Value x, int64_t axis, Value first) = 0;

  // --- Scans -----------------------------------------------------------------
  /// The prefix sums along `axis` (each place's sum of the places before it
  /// when `exclusive`) as one op of the back end's own, or null when it has
  /// none (the doubling scan computes them then).
  virtual Value nativePrefixSum(Value x, int64_t axis, bool exclusive) {
    return {};
  }

  // --- Control ---------------------------------------------------------------
  /// The body of one round of a doubling loop: the round's offset d and the
  /// carried values; returns the next carried values (same types).
  using DoublingBody =
      function_ref<SmallVector<Value>(Value d, ValueRange carried)>;
  /// Runs `body` for d = 1, 2, 4, ... while d < count, carrying `carried`
  /// (built in the loop's body with this algebra); returns the final values.
  virtual SmallVector<Value> doublingLoop(Value count, ValueRange carried,
                                          DoublingBody body) = 0;
};

} // namespace mlir::ttt

#endif // TTT_CONVERSION_UTILS_ALGEBRA_H
