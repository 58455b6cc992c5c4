//===- OnnxAlgebra.h - the shared algebra as ONNX nodes ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ElementwiseMath and TensorAlgebra (Algebra.h) as default-domain onnx.node
// ops: element-wise bodies run once on whole tensors (ONNX broadcasts their
// scalar constants), sizes are 1-element i64 tensors computed from Shape
// nodes where they are dynamic, and the doubling loop is a Loop node.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINATTNTOONNX_ONNXALGEBRA_H
#define TTT_LIB_CONVERSION_LINATTNTOONNX_ONNXALGEBRA_H

#include "ttt/Conversion/Utils/Algebra.h"
#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"

#include <string>

namespace mlir::ttt::onnx {

/// Element-wise math on whole tensors.
class OnnxMath : public ElementwiseMath {
public:
  explicit OnnxMath(OnnxBuilder &b) : b(b) {}

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

private:
  /// The constant size x size matrix of `entry(row, column)`.
  Value positionMatrix(int64_t size,
                       function_ref<double(int64_t, int64_t)> entry);

  OnnxBuilder &b;
};

class OnnxAlgebra : public TensorAlgebra {
public:
  /// `loopPrefix` starts the names of the Loop bodies' values: ONNX names
  /// must be unique across a graph and its subgraphs.
  OnnxAlgebra(OnnxBuilder &b, std::string loopPrefix)
      : b(b), math(b), loopPrefix(std::move(loopPrefix)) {}

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

  Value nativePrefixSum(Value x, int64_t axis, bool exclusive) override;

  SmallVector<Value> doublingLoop(Value count, ValueRange carried,
                                  DoublingBody body) override;

private:
  /// The constant size x size matrix of `entry(row, column)`.
  Value positionMatrix(int64_t size,
                       function_ref<double(int64_t, int64_t)> entry);

  OnnxBuilder &b;
  OnnxMath math;
  std::string loopPrefix;
};

} // namespace mlir::ttt::onnx

#endif // TTT_LIB_CONVERSION_LINATTNTOONNX_ONNXALGEBRA_H
