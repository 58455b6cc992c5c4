//===- TensorMath.cpp - linalg-on-tensors math for lowerings --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Utils/TensorMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::ttt;
using utils::IteratorType;

//===----------------------------------------------------------------------===//
// ScalarMath
//===----------------------------------------------------------------------===//

Value ScalarMath::constant(double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}
Value ScalarMath::add(Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
Value ScalarMath::sub(Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}
Value ScalarMath::mul(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value ScalarMath::div(Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}
Value ScalarMath::neg(Value x) { return arith::NegFOp::create(b, loc, x); }
Value ScalarMath::sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
Value ScalarMath::roundTo(Value x, FloatType narrow) {
  Value cut = arith::TruncFOp::create(b, loc, narrow, x);
  return arith::ExtFOp::create(b, loc, x.getType(), cut);
}
Value ScalarMath::exp(Value x) { return math::ExpOp::create(b, loc, x); }
Value ScalarMath::tanh(Value x) { return math::TanhOp::create(b, loc, x); }
Value ScalarMath::max(Value x, Value y) {
  return arith::MaximumFOp::create(b, loc, x, y);
}
Value ScalarMath::greaterThan(Value x, Value y) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
}
Value ScalarMath::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value ScalarMath::sigmoid(Value x) {
  Value one = constant(1.0);
  return div(one, add(one, exp(neg(x))));
}
Value ScalarMath::relu(Value x) {
  Value zero = constant(0.0);
  return select(greaterThan(x, zero), x, zero);
}
Value ScalarMath::positive(Value x) {
  Value zero = constant(0.0);
  Value one = constant(1.0);
  return select(greaterThan(x, zero), one, zero);
}
Value ScalarMath::fromIndex(Value index) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, type, i64);
}

//===----------------------------------------------------------------------===//
// TensorMath: shapes and slices
//===----------------------------------------------------------------------===//

OpFoldResult TensorMath::dim(Value tensor, int64_t d) {
  return tensor::getMixedSize(b, loc, tensor, d);
}

SmallVector<OpFoldResult> TensorMath::sizes(Value tensor) {
  return tensor::getMixedSizes(b, loc, tensor);
}

Value TensorMath::indexValue(OpFoldResult size) {
  return getValueOrCreateConstantIndexOp(b, loc, size);
}

Value TensorMath::full(ArrayRef<OpFoldResult> sizes, Value value) {
  return fill(tensor::EmptyOp::create(b, loc, sizes, type), value);
}

Value TensorMath::fill(Value dest, Value value) {
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{dest})
      .getResult(0);
}

Value TensorMath::zeros(ArrayRef<OpFoldResult> sizes) {
  return full(sizes, scalar.constant(0.0));
}

Value TensorMath::slice(Value source, ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes, int64_t resultRank) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  auto resultType = tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
      resultRank, sourceType, sizes);
  return tensor::ExtractSliceOp::create(b, loc, resultType, source, offsets,
                                        sizes, strides);
}

Value TensorMath::insert(Value piece, Value dest,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, piece, dest, offsets, sizes,
                                       strides);
}

Value TensorMath::column(Value matrix, OpFoldResult col) {
  return slice(matrix, {b.getIndexAttr(0), col},
               {dim(matrix, 0), b.getIndexAttr(1)}, 1);
}

//===----------------------------------------------------------------------===//
// TensorMath: linalg.generic
//===----------------------------------------------------------------------===//

Value TensorMath::generic(Type resultType, ValueRange inputs, Value init,
                          ArrayRef<AffineMap> maps,
                          ArrayRef<IteratorType> iters,
                          function_ref<Value(ScalarMath &, ValueRange)> body) {
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        ScalarMath inner(nested, nestedLoc, type);
        Value result = body(inner, args);
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return op.getResult(0);
}

// Loops run (i, k, j): the innermost loop walks a row of C and of B, which
// the LLVM vectorizer turns into SIMD FMAs; a k-innermost order would stride.
Value TensorMath::matmul(Value a, Value bm, bool transposeA, bool transposeB) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i, k, j;
  bindDims(ctx, i, k, j);
  AffineMap mapA = AffineMap::get(3, 0,
                                  transposeA ? ArrayRef<AffineExpr>{k, i}
                                             : ArrayRef<AffineExpr>{i, k},
                                  ctx);
  AffineMap mapB = AffineMap::get(3, 0,
                                  transposeB ? ArrayRef<AffineExpr>{j, k}
                                             : ArrayRef<AffineExpr>{k, j},
                                  ctx);
  AffineMap mapC = AffineMap::get(3, 0, {i, j}, ctx);
  OpFoldResult rows = dim(a, transposeA ? 1 : 0);
  OpFoldResult cols = dim(bm, transposeB ? 0 : 1);
  Value init = zeros({rows, cols});
  return generic(
      init.getType(), {a, bm}, init, {mapA, mapB, mapC},
      {IteratorType::parallel, IteratorType::reduction, IteratorType::parallel},
      [](ScalarMath &s, ValueRange args) {
        return s.add(args[2], s.mul(args[0], args[1]));
      });
}

Value TensorMath::transpose(Value a) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j;
  bindDims(ctx, i, j);
  Value init = tensor::EmptyOp::create(b, loc, {dim(a, 1), dim(a, 0)}, type);
  return generic(
      init.getType(), {a}, init,
      {AffineMap::get(2, 0, {j, i}, ctx), AffineMap::get(2, 0, {i, j}, ctx)},
      {IteratorType::parallel, IteratorType::parallel},
      [](ScalarMath &, ValueRange args) { return args[0]; });
}

Value TensorMath::identity(int64_t n) {
  MLIRContext *ctx = b.getContext();
  Value init = tensor::EmptyOp::create(
      b, loc, {b.getIndexAttr(n), b.getIndexAttr(n)}, type);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      {AffineMap::getMultiDimIdentityMap(2, ctx)},
      {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nested, Location nestedLoc, ValueRange) {
        ScalarMath inner(nested, nestedLoc, type);
        Value row = linalg::IndexOp::create(nested, nestedLoc, 0);
        Value col = linalg::IndexOp::create(nested, nestedLoc, 1);
        Value same = arith::CmpIOp::create(nested, nestedLoc,
                                           arith::CmpIPredicate::eq, row, col);
        Value one = inner.constant(1.0);
        Value zero = inner.constant(0.0);
        linalg::YieldOp::create(nested, nestedLoc,
                                inner.select(same, one, zero));
      });
  return op.getResult(0);
}

Value TensorMath::map(ValueRange inputs, MapBody body) {
  Value first = inputs.front();
  int64_t rank = cast<RankedTensorType>(first.getType()).getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<AffineMap> maps(inputs.size() + 1, id);
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  Value init = tensor::EmptyOp::create(b, loc, sizes(first), type);
  return generic(init.getType(), inputs, init, maps, iters, body);
}

Value TensorMath::broadcast(
    Value a, Value v, AffineMap vMap,
    function_ref<Value(ScalarMath &, Value, Value)> fn) {
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  Value init = tensor::EmptyOp::create(b, loc, sizes(a), type);
  return generic(
      init.getType(), {a, v}, init, {id, vMap, id},
      {IteratorType::parallel, IteratorType::parallel},
      [&](ScalarMath &s, ValueRange args) { return fn(s, args[0], args[1]); });
}

static Value mulScalars(ScalarMath &s, Value x, Value y) { return s.mul(x, y); }
static Value addScalars(ScalarMath &s, Value x, Value y) { return s.add(x, y); }

Value TensorMath::scaleRows(Value a, Value v) {
  return rowwise(a, v, mulScalars);
}

Value TensorMath::scaleCols(Value a, Value v) {
  return colwise(a, v, mulScalars);
}

Value TensorMath::addRow(Value a, Value r) {
  MLIRContext *ctx = b.getContext();
  return broadcast(
      a, r,
      AffineMap::get(
          2, 0, {getAffineConstantExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx),
      addScalars);
}

Value TensorMath::rowwise(Value a, Value v,
                          function_ref<Value(ScalarMath &, Value, Value)> fn) {
  MLIRContext *ctx = b.getContext();
  return broadcast(a, v, AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx),
                   fn);
}

Value TensorMath::colwise(Value a, Value v,
                          function_ref<Value(ScalarMath &, Value, Value)> fn) {
  MLIRContext *ctx = b.getContext();
  return broadcast(a, v, AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx),
                   fn);
}

Value TensorMath::convert(Value a, FloatType to) {
  auto fromType = cast<RankedTensorType>(a.getType());
  if (fromType.getElementType() == to)
    return a;
  int64_t rank = fromType.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Value init = tensor::EmptyOp::create(b, loc, sizes(a), to);
  bool widen =
      to.getWidth() > cast<FloatType>(fromType.getElementType()).getWidth();
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{a}, ValueRange{init},
      {id, id}, SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value converted =
            widen ? Value(arith::ExtFOp::create(nested, nestedLoc, to, args[0]))
                  : Value(arith::TruncFOp::create(nested, nestedLoc, to,
                                                  args[0]));
        linalg::YieldOp::create(nested, nestedLoc, converted);
      });
  return op.getResult(0);
}

Value TensorMath::add(Value a, Value c) {
  return map({a, c},
             [](ScalarMath &s, ValueRange x) { return s.add(x[0], x[1]); });
}
Value TensorMath::sub(Value a, Value c) {
  return map({a, c},
             [](ScalarMath &s, ValueRange x) { return s.sub(x[0], x[1]); });
}
Value TensorMath::mul(Value a, Value c) {
  return map({a, c},
             [](ScalarMath &s, ValueRange x) { return s.mul(x[0], x[1]); });
}
Value TensorMath::scale(Value a, Value x) {
  return map({a}, [&](ScalarMath &s, ValueRange v) { return s.mul(v[0], x); });
}

Value TensorMath::lowerTriangle(Value a) {
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  Value init = tensor::EmptyOp::create(b, loc, sizes(a), type);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{a}, ValueRange{init},
      {id, id}, {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        ScalarMath inner(nested, nestedLoc, type);
        Value row = linalg::IndexOp::create(nested, nestedLoc, 0);
        Value col = linalg::IndexOp::create(nested, nestedLoc, 1);
        Value keep = arith::CmpIOp::create(nested, nestedLoc,
                                           arith::CmpIPredicate::uge, row, col);
        linalg::YieldOp::create(
            nested, nestedLoc,
            inner.select(keep, args[0], inner.constant(0.0)));
      });
  return op.getResult(0);
}

//===----------------------------------------------------------------------===//
// TensorMath: reductions
//===----------------------------------------------------------------------===//

Value TensorMath::rowSums(Value a) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j;
  bindDims(ctx, i, j);
  Value init = zeros({dim(a, 0)});
  return generic(
      init.getType(), {a}, init,
      {AffineMap::get(2, 0, {i, j}, ctx), AffineMap::get(2, 0, {i}, ctx)},
      {IteratorType::parallel, IteratorType::reduction},
      [](ScalarMath &s, ValueRange x) { return s.add(x[1], x[0]); });
}

Value TensorMath::colSums(Value a) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j;
  bindDims(ctx, i, j);
  Value init = zeros({dim(a, 1)});
  return generic(
      init.getType(), {a}, init,
      {AffineMap::get(2, 0, {i, j}, ctx), AffineMap::get(2, 0, {j}, ctx)},
      {IteratorType::reduction, IteratorType::parallel},
      [](ScalarMath &s, ValueRange x) { return s.add(x[1], x[0]); });
}

Value TensorMath::sumAll(Value a) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = cast<RankedTensorType>(a.getType()).getRank();
  Value init = zeros({});
  SmallVector<IteratorType> iters(rank, IteratorType::reduction);
  Value sum = generic(
      init.getType(), {a}, init,
      {AffineMap::getMultiDimIdentityMap(rank, ctx),
       AffineMap::get(rank, 0, {}, ctx)},
      iters, [](ScalarMath &s, ValueRange x) { return s.add(x[1], x[0]); });
  return tensor::ExtractOp::create(b, loc, sum, ValueRange{});
}

Value TensorMath::colNorms(Value a) {
  Value squares =
      map({a}, [](ScalarMath &s, ValueRange x) { return s.mul(x[0], x[0]); });
  return map({colSums(squares)},
             [](ScalarMath &s, ValueRange x) { return s.sqrt(x[0]); });
}

Value TensorMath::frobeniusNorm(Value a) {
  Value squares =
      map({a}, [](ScalarMath &s, ValueRange x) { return s.mul(x[0], x[0]); });
  return scalar.sqrt(sumAll(squares));
}
