//===- OnnxAlgebra.cpp - the shared algebra as ONNX nodes -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "OnnxAlgebra.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx;

namespace {

int64_t rankOf(Value x) {
  return cast<RankedTensorType>(x.getType()).getRank();
}

Type boolType(MLIRContext *ctx, int64_t rank) {
  return RankedTensorType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic),
                               IntegerType::get(ctx, 1));
}

} // namespace

//===----------------------------------------------------------------------===//
// OnnxMath
//===----------------------------------------------------------------------===//

Value OnnxMath::constant(double value) { return b.scalar(value); }
Value OnnxMath::add(Value x, Value y) { return b.add(x, y); }
Value OnnxMath::sub(Value x, Value y) { return b.sub(x, y); }
Value OnnxMath::mul(Value x, Value y) { return b.mul(x, y); }
Value OnnxMath::div(Value x, Value y) { return b.div(x, y); }
Value OnnxMath::sqrt(Value x) { return b.unary("Sqrt", x); }
Value OnnxMath::roundTo(Value x, FloatType narrow) {
  auto type = cast<ShapedType>(x.getType());
  Value cut = b.node("Cast", {x}, type.clone(narrow),
                     {b.attr("to", OnnxBuilder::floatTypeCode(narrow))});
  return b.node(
      "Cast", {cut}, type,
      {b.attr("to", OnnxBuilder::floatTypeCode(type.getElementType()))});
}
Value OnnxMath::tanh(Value x) { return b.unary("Tanh", x); }
Value OnnxMath::sigmoid(Value x) { return b.sigmoid(x); }
Value OnnxMath::relu(Value x) { return b.unary("Relu", x); }
Value OnnxMath::positive(Value x) {
  Value greater = b.node("Greater", {x, b.scalar(0.0)},
                         boolType(b.builder().getContext(), rankOf(x)));
  return b.toFloat(greater);
}

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

Value OnnxAlgebra::size(int64_t n) { return b.i64s({n}); }
Value OnnxAlgebra::dim(Value x, int64_t axis) { return b.dim(x, axis); }
Value OnnxAlgebra::sizeAdd(Value a, Value c) {
  return b.node("Add", {a, c}, b.ints(1));
}
Value OnnxAlgebra::sizeSub(Value a, Value c) {
  return b.node("Sub", {a, c}, b.ints(1));
}
Value OnnxAlgebra::sizeMul(Value a, Value c) {
  return b.node("Mul", {a, c}, b.ints(1));
}
// Integer Div truncates; a >= 0, so (a + c - 1) / c is the ceiling.
Value OnnxAlgebra::sizeCeilDiv(Value a, int64_t c) {
  Value sum = b.node("Add", {a, b.i64s({c - 1})}, b.ints(1));
  return b.node("Div", {sum, b.i64s({c})}, b.ints(1));
}

Value OnnxAlgebra::chunkLengths(Value tokens, Value length, Value count) {
  // A braced list evaluates in order: 0, count, 1.
  Value n =
      b.node("Range", {b.i64Scalar(0), b.squeeze(count, {0}), b.i64Scalar(1)},
             b.ints(-1));
  Value starts = b.node("Mul", {n, length}, b.ints(-1));
  Value left = b.node("Sub", {tokens, starts}, b.ints(-1));
  return b.toFloat(b.node("Min", {length, left}, b.ints(-1)));
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

Value OnnxAlgebra::map(ValueRange inputs, ElementwiseBody body) {
  return body(math, inputs);
}

Value OnnxAlgebra::mapWith(ValueRange inputs, Value other,
                           ArrayRef<int64_t> otherAxes, ElementwiseBody body) {
  // other gets unit axes where it has none of the inputs', so that ONNX's
  // trailing-aligned broadcasting lines its axes up with theirs.
  SmallVector<int64_t> missing;
  for (int64_t d = 0, e = rankOf(inputs.front()); d < e; ++d)
    if (!llvm::is_contained(otherAxes, d))
      missing.push_back(d);
  SmallVector<Value> operands(inputs);
  operands.push_back(missing.empty() ? other : b.unsqueeze(other, missing));
  return body(math, operands);
}

Value OnnxAlgebra::mapBroadcast(ValueRange inputs, ValueRange others,
                                ElementwiseBody body) {
  SmallVector<Value> operands(inputs);
  operands.append(others.begin(), others.end());
  return body(math, operands);
}

Value OnnxAlgebra::expandAxes(Value x, ArrayRef<int64_t> axes) {
  return b.unsqueeze(x, axes);
}

//===----------------------------------------------------------------------===//
// Batched matrices
//===----------------------------------------------------------------------===//

Value OnnxAlgebra::matmul(Value a, Value c, bool transposeB) {
  return b.matmul(a, transposeB ? b.transposeInner(c) : c);
}

Value OnnxAlgebra::matmulTransposedA(Value a, Value c) {
  return b.matmul(b.transposeInner(a), c);
}

Value OnnxAlgebra::transposeInner(Value x) { return b.transposeInner(x); }

Value OnnxAlgebra::symmetricSquare(Value s) { return b.matmul(s, s); }

Value OnnxAlgebra::sumSquaresInner(Value x) {
  int64_t rank = rankOf(x);
  return b.reduceSum(b.mul(x, x), {rank - 2, rank - 1}, /*keepDims=*/false);
}

// A constant mask: the size is static, and a constant needs no Trilu, which
// opset 13 lacks.
Value OnnxAlgebra::lowerTriangle(Value x, int64_t size) {
  return b.mul(x, positionMatrix(size, [](int64_t i, int64_t j) {
                 return j <= i ? 1.0 : 0.0;
               }));
}

Value OnnxAlgebra::plusIdentity(Value x, int64_t size) {
  return b.add(x, positionMatrix(size, [](int64_t i, int64_t j) {
                 return i == j ? 1.0 : 0.0;
               }));
}

Value OnnxAlgebra::positionMatrix(
    int64_t size, function_ref<double(int64_t, int64_t)> entry) {
  Type elem = b.elementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j)
      values.push_back(FloatAttr::get(elem, entry(i, j)));
  auto type = RankedTensorType::get({size, size}, elem);
  return b.constant(DenseElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// Reductions and selections on the last axis
//===----------------------------------------------------------------------===//

Value OnnxAlgebra::sumLast(Value x) {
  return b.reduceSum(x, {rankOf(x) - 1}, /*keepDims=*/false);
}

// A scalar index drops the gathered axis.
Value OnnxAlgebra::column(Value x, int64_t index) {
  int64_t last = rankOf(x) - 1;
  return b.node("Gather", {x, b.i64Scalar(index)}, b.floats(last),
                {b.attr("axis", last)});
}

//===----------------------------------------------------------------------===//
// Views along one axis
//===----------------------------------------------------------------------===//

Value OnnxAlgebra::slice(Value x, int64_t axis, Value from, Value to) {
  return b.slice(x, from, to, axis);
}

Value OnnxAlgebra::replaceFrom(Value x, int64_t axis, Value from, Value tail) {
  return b.concat({b.slice(x, size(0), from, axis), tail}, axis);
}

Value OnnxAlgebra::padEnd(Value x, int64_t axis, Value count, double value) {
  // Pads are all begins, then all ends; only the end of `axis` is nonzero.
  int64_t rank = rankOf(x);
  SmallVector<Value> pads{b.i64s(SmallVector<int64_t>(rank + axis, 0)), count};
  if (axis + 1 < rank)
    pads.push_back(b.i64s(SmallVector<int64_t>(rank - axis - 1, 0)));
  SmallVector<Value> operands{x, b.concat(pads, 0)};
  if (value != 0.0)
    operands.push_back(b.scalar(value));
  return b.node("Pad", operands, b.floats(rank));
}

Value OnnxAlgebra::splitAxis(Value x, int64_t axis, Value outer, Value inner,
                             std::optional<int64_t>) {
  int64_t rank = rankOf(x);
  SmallVector<Value> shape;
  if (axis > 0)
    shape.push_back(b.shape(x, 0, axis));
  shape.append({outer, inner});
  if (axis + 1 < rank)
    shape.push_back(b.shape(x, axis + 1, rank));
  return b.reshape(x, b.concat(shape, 0), rank + 1);
}

Value OnnxAlgebra::mergeAxes(Value x, int64_t axis) {
  int64_t rank = rankOf(x);
  SmallVector<Value> shape;
  if (axis > 0)
    shape.push_back(b.shape(x, 0, axis));
  Value outer = dim(x, axis);
  shape.push_back(sizeMul(outer, dim(x, axis + 1)));
  if (axis + 2 < rank)
    shape.push_back(b.shape(x, axis + 2, rank));
  return b.reshape(x, b.concat(shape, 0), rank - 1);
}

// Slicing the old length off the concatenation keeps an empty axis empty.
Value OnnxAlgebra::shiftByOne(Value x, int64_t axis, Value first) {
  int64_t rank = rankOf(x);
  Value headShape = b.concat(
      {b.shape(x, 0, axis), b.i64s({1}), b.shape(x, axis + 1, rank)}, 0);
  Value head =
      first ? b.expand(first, headShape, rank) : b.full(headShape, rank, 0.0);
  Value all = b.concat({head, x}, axis);
  Value start = size(0);
  Value end = dim(x, axis);
  return slice(all, axis, start, end);
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

Value OnnxAlgebra::nativePrefixSum(Value x, int64_t axis, bool exclusive) {
  return b.node("CumSum", {x, b.i64Scalar(axis)}, b.floats(rankOf(x)),
                {b.attr("exclusive", exclusive ? 1 : 0)});
}

//===----------------------------------------------------------------------===//
// Control
//===----------------------------------------------------------------------===//

SmallVector<Value> OnnxAlgebra::doublingLoop(Value count, ValueRange carried,
                                             DoublingBody body) {
  OpBuilder &ob = b.builder();
  MLIRContext *ctx = ob.getContext();
  Location loc = count.getLoc();
  auto condType = [&](int64_t rank) {
    return RankedTensorType::get(SmallVector<int64_t>(rank, 1),
                                 IntegerType::get(ctx, 1));
  };
  Value one = size(1);
  Value more = b.squeeze(b.node("Less", {one, count}, condType(1)), {0});
  Value none = NoneOp::create(ob, loc, ob.getNoneType());
  Type dType = b.ints(1);

  auto names = [&](StringRef direction) {
    SmallVector<Attribute> out;
    auto add = [&](const std::string &name) {
      out.push_back(ob.getStringAttr(loopPrefix + name));
    };
    if (direction == "in")
      add("iter");
    add("cond_" + direction.str());
    add("d_" + direction.str());
    for (size_t i = 0; i < carried.size(); ++i)
      add("v" + std::to_string(i) + "_" + direction.str());
    return ob.getArrayAttr(out);
  };
  auto graph =
      GraphAttr::get(ctx, /*region=*/0, ob.getStringAttr(loopPrefix + "body"),
                     names("in"), names("out"));
  SmallVector<Value> inputs{none, more, one};
  inputs.append(carried.begin(), carried.end());
  SmallVector<Type> results{dType};
  llvm::append_range(results, carried.getTypes());
  NodeOp loop = b.build("Loop", inputs, results,
                        {ob.getNamedAttr("body", graph)}, /*regions=*/1);

  OpBuilder::InsertionGuard guard(ob);
  SmallVector<Type> argTypes{RankedTensorType::get({}, ob.getI64Type()),
                             condType(0), dType};
  llvm::append_range(argTypes, carried.getTypes());
  Block *block = ob.createBlock(&loop->getRegion(0), {}, argTypes,
                                SmallVector<Location>(argTypes.size(), loc));
  Value d = block->getArgument(2);
  SmallVector<Value> next = body(d, block->getArguments().drop_front(3));
  Value dNext = sizeMul(d, size(2));
  Value again = b.squeeze(b.node("Less", {dNext, count}, condType(1)), {0});
  SmallVector<Value> yielded{again, dNext};
  llvm::append_range(yielded, next);
  YieldOp::create(ob, loc, yielded);
  return SmallVector<Value>(loop->getResults().drop_front());
}
