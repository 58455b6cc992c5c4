//===- LinalgAlgebra.cpp - the shared algebra as linalg on tensors --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Utils/LinalgAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::ttt;
using utils::IteratorType;

namespace {

/// The map over `loops` loop dims that reads the dims at `positions`.
AffineMap dimsMap(MLIRContext *ctx, unsigned loops,
                  ArrayRef<int64_t> positions) {
  SmallVector<AffineExpr> exprs;
  for (int64_t p : positions)
    exprs.push_back(getAffineDimExpr(p, ctx));
  return AffineMap::get(loops, 0, exprs, ctx);
}

SmallVector<int64_t> range(int64_t from, int64_t to) {
  return llvm::to_vector(llvm::seq<int64_t>(from, to));
}

int64_t rankOf(Value x) {
  return cast<RankedTensorType>(x.getType()).getRank();
}

/// Whether two index values are one size: one value, equal constants, or
/// the same dim of the same tensor.
bool sameSize(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> ca = getConstantIntValue(a),
                         cb = getConstantIntValue(b);
  if (ca || cb)
    return ca == cb;
  auto da = a.getDefiningOp<tensor::DimOp>();
  auto db = b.getDefiningOp<tensor::DimOp>();
  if (!da || !db || da.getSource() != db.getSource())
    return false;
  std::optional<int64_t> ia = getConstantIntValue(da.getIndex()),
                         ib = getConstantIntValue(db.getIndex());
  return ia && ia == ib;
}

} // namespace

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

Value LinalgAlgebra::size(int64_t n) {
  return arith::ConstantIndexOp::create(b, loc, n);
}

Value LinalgAlgebra::dim(Value x, int64_t axis) {
  return tm.indexValue(tm.dim(x, axis));
}

Value LinalgAlgebra::sizeAdd(Value a, Value c) {
  // a + (y - a) = y: a pad to a length keeps that length's value.
  if (auto sub = c.getDefiningOp<arith::SubIOp>();
      sub && sameSize(sub.getRhs(), a))
    return sub.getLhs();
  return b.createOrFold<arith::AddIOp>(loc, a, c);
}

Value LinalgAlgebra::sizeSub(Value a, Value c) {
  return b.createOrFold<arith::SubIOp>(loc, a, c);
}

Value LinalgAlgebra::sizeMul(Value a, Value c) {
  return b.createOrFold<arith::MulIOp>(loc, a, c);
}

Value LinalgAlgebra::sizeCeilDiv(Value a, int64_t c) {
  return b.createOrFold<arith::CeilDivUIOp>(loc, a, size(c));
}

// Index arithmetic in the body, converted to the element type once.
Value LinalgAlgebra::chunkLengths(Value tokens, Value length, Value count) {
  MLIRContext *ctx = b.getContext();
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(count)}, tm.getType());
  return tm.generic(
      init.getType(), {}, init, {AffineMap::getMultiDimIdentityMap(1, ctx)},
      {IteratorType::parallel}, [&](ScalarMath &s, ValueRange) {
        OpBuilder &nb = s.builder();
        Location l = s.getLoc();
        Value n = linalg::IndexOp::create(nb, l, 0);
        Value start = arith::MulIOp::create(nb, l, n, length);
        Value left = arith::SubIOp::create(nb, l, tokens, start);
        return s.fromIndex(arith::MinUIOp::create(nb, l, length, left));
      });
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

Value LinalgAlgebra::map(ValueRange inputs, ElementwiseBody body) {
  return tm.map(inputs, [&](ScalarMath &s, ValueRange v) {
    return body(s, v.drop_back());
  });
}

Value LinalgAlgebra::mapWithMaps(ValueRange inputs, ValueRange others,
                                 ArrayRef<AffineMap> otherMaps,
                                 ElementwiseBody body) {
  int64_t rank = rankOf(inputs.front());
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<AffineMap> maps(inputs.size(), id);
  maps.append(otherMaps.begin(), otherMaps.end());
  maps.push_back(id);
  SmallVector<Value> operands(inputs);
  operands.append(others.begin(), others.end());
  Value init =
      tensor::EmptyOp::create(b, loc, tm.sizes(inputs.front()), tm.getType());
  return tm.generic(
      init.getType(), operands, init, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](ScalarMath &s, ValueRange v) { return body(s, v.drop_back()); });
}

Value LinalgAlgebra::mapWith(ValueRange inputs, Value other,
                             ArrayRef<int64_t> otherAxes,
                             ElementwiseBody body) {
  AffineMap otherMap =
      dimsMap(b.getContext(), rankOf(inputs.front()), otherAxes);
  return mapWithMaps(inputs, other, otherMap, body);
}

AffineMap LinalgAlgebra::broadcastMap(RankedTensorType type,
                                      RankedTensorType otherType) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  // Right-aligned, as NumPy and ONNX broadcast.
  int64_t offset = rank - otherType.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = offset; d < rank; ++d)
    exprs.push_back(otherType.getDimSize(d - offset) == 1 &&
                            type.getDimSize(d) != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value LinalgAlgebra::mapBroadcast(ValueRange inputs, ValueRange others,
                                  ElementwiseBody body) {
  auto type = cast<RankedTensorType>(inputs.front().getType());
  SmallVector<AffineMap> maps;
  for (Value other : others)
    maps.push_back(broadcastMap(type, cast<RankedTensorType>(other.getType())));
  return mapWithMaps(inputs, others, maps, body);
}

Value LinalgAlgebra::expandAxes(Value x, ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank() + static_cast<int64_t>(axes.size());
  SmallVector<OpFoldResult> sizes = tm.sizes(x), shape;
  SmallVector<int64_t> staticShape;
  // A unit axis joins the group of the source axis after it (the last
  // group when none follows).
  SmallVector<ReassociationIndices> groups(type.getRank());
  int64_t source = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t group = std::min<int64_t>(source, type.getRank() - 1);
    groups[group].push_back(d);
    if (llvm::is_contained(axes, d)) {
      shape.push_back(b.getIndexAttr(1));
      staticShape.push_back(1);
      continue;
    }
    shape.push_back(sizes[source]);
    staticShape.push_back(type.getDimSize(source));
    ++source;
  }
  auto resultType = RankedTensorType::get(staticShape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resultType, x, groups, shape);
}

//===----------------------------------------------------------------------===//
// Batched matrices
//===----------------------------------------------------------------------===//

// a b runs its loops (batch, i, k, j): the innermost j walks rows of b and of
// the result, so it vectorizes. a b^T runs (batch, i, j, k): both operands
// are read along their rows.
Value LinalgAlgebra::matmul(Value a, Value c, bool transposeB) {
  return contract(a, c, /*transposeA=*/false, transposeB);
}

Value LinalgAlgebra::matmulTransposedA(Value a, Value c) {
  return contract(a, c, /*transposeA=*/true, /*transposeB=*/false);
}

// s s^T: the product of a matrix with its own transpose, which ttt_sgemm
// hands to SYRK (BlasRuntime.cpp).
Value LinalgAlgebra::symmetricSquare(Value s) {
  return contract(s, s, /*transposeA=*/false, /*transposeB=*/true);
}

Value LinalgAlgebra::contract(Value a, Value c, bool transposeA,
                              bool transposeB) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = rankOf(a);
  int64_t loops = rank + 1;
  int64_t i = rank - 2, second = rank - 1, third = rank;
  SmallVector<int64_t> batch = range(0, rank - 2);
  // b's batch axes are a's last ones: a shared weight has none of the first.
  int64_t shared = rank - rankOf(c);
  auto with = [&](ArrayRef<int64_t> tail, int64_t skip = 0) {
    SmallVector<int64_t> dims(batch.begin() + skip, batch.end());
    dims.append(tail.begin(), tail.end());
    return dimsMap(ctx, loops, dims);
  };
  // Loop positions of k and j.
  int64_t k = transposeB ? third : second, j = transposeB ? second : third;
  SmallVector<AffineMap> maps{
      transposeA ? with({k, i}) : with({i, k}),
      transposeB ? with({j, k}, shared) : with({k, j}, shared), with({i, j})};
  SmallVector<IteratorType> iters(loops, IteratorType::parallel);
  iters[k] = IteratorType::reduction;
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : batch)
    sizes.push_back(tm.dim(a, d));
  sizes.push_back(tm.dim(a, rank - (transposeA ? 1 : 2)));
  sizes.push_back(tm.dim(c, rankOf(c) - (transposeB ? 2 : 1)));
  Value init = tm.zeros(sizes);
  return tm.generic(init.getType(), {a, c}, init, maps, iters,
                    [](ScalarMath &s, ValueRange v) {
                      return s.add(v[2], s.mul(v[0], v[1]));
                    });
}

Value LinalgAlgebra::transposeInner(Value x) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = rankOf(x);
  SmallVector<int64_t> perm = range(0, rank);
  std::swap(perm[rank - 2], perm[rank - 1]);
  SmallVector<OpFoldResult> sizes = tm.sizes(x);
  std::swap(sizes[rank - 2], sizes[rank - 1]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, tm.getType());
  return tm.generic(
      init.getType(), {x}, init,
      {dimsMap(ctx, rank, perm), AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [](ScalarMath &, ValueRange v) { return v[0]; });
}

Value LinalgAlgebra::sumSquaresInner(Value x) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = rankOf(x);
  SmallVector<OpFoldResult> sizes = tm.sizes(x);
  sizes.resize(rank - 2);
  Value init = tm.zeros(sizes);
  SmallVector<IteratorType> iters(rank - 2, IteratorType::parallel);
  iters.append(2, IteratorType::reduction);
  return tm.generic(init.getType(), {x}, init,
                    {AffineMap::getMultiDimIdentityMap(rank, ctx),
                     dimsMap(ctx, rank, range(0, rank - 2))},
                    iters, [](ScalarMath &s, ValueRange v) {
                      return s.add(v[1], s.mul(v[0], v[0]));
                    });
}

Value LinalgAlgebra::mapByPosition(
    Value x, arith::CmpIPredicate rowToColumn,
    function_ref<Value(ScalarMath &, Value, Value)> body) {
  int64_t rank = rankOf(x);
  return tm.map({x}, [&](ScalarMath &s, ValueRange v) {
    OpBuilder &nb = s.builder();
    Value row = linalg::IndexOp::create(nb, s.getLoc(), rank - 2);
    Value col = linalg::IndexOp::create(nb, s.getLoc(), rank - 1);
    Value holds = arith::CmpIOp::create(nb, s.getLoc(), rowToColumn, row, col);
    return body(s, v[0], holds);
  });
}

Value LinalgAlgebra::lowerTriangle(Value x, int64_t) {
  return mapByPosition(x, arith::CmpIPredicate::uge,
                       [](ScalarMath &s, Value element, Value keep) {
                         return s.select(keep, element, s.constant(0.0));
                       });
}

Value LinalgAlgebra::plusIdentity(Value x, int64_t) {
  return mapByPosition(x, arith::CmpIPredicate::eq,
                       [](ScalarMath &s, Value element, Value diagonal) {
                         Value one = s.select(diagonal, s.constant(1.0),
                                              s.constant(0.0));
                         return s.add(element, one);
                       });
}

//===----------------------------------------------------------------------===//
// Reductions and selections on the last axis
//===----------------------------------------------------------------------===//

Value LinalgAlgebra::sumLast(Value x) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = rankOf(x);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(tm.dim(x, d));
  Value init = tm.zeros(sizes);
  SmallVector<IteratorType> iters(rank - 1, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  return tm.generic(
      init.getType(), {x}, init,
      {AffineMap::getMultiDimIdentityMap(rank, ctx),
       dimsMap(ctx, rank, range(0, rank - 1))},
      iters, [](ScalarMath &s, ValueRange v) { return s.add(v[1], v[0]); });
}

Value LinalgAlgebra::column(Value x, int64_t index) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets.back() = b.getIndexAttr(index);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(tm.dim(x, d));
  sizes.push_back(b.getIndexAttr(1));
  auto resultType =
      RankedTensorType::get(type.getShape().drop_back(), type.getElementType());
  return tensor::ExtractSliceOp::create(
      b, loc, resultType, x, offsets, sizes,
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

//===----------------------------------------------------------------------===//
// Views along one axis
//===----------------------------------------------------------------------===//

Value LinalgAlgebra::slice(Value x, int64_t axis, Value from, Value to) {
  int64_t rank = rankOf(x);
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tm.sizes(x);
  offsets[axis] = getAsOpFoldResult(from);
  sizes[axis] =
      getAsOpFoldResult(matchPattern(from, m_Zero()) ? to : sizeSub(to, from));
  return tm.slice(x, offsets, sizes, rank);
}

Value LinalgAlgebra::replaceFrom(Value x, int64_t axis, Value from,
                                 Value tail) {
  SmallVector<OpFoldResult> offsets(rankOf(x), b.getIndexAttr(0));
  offsets[axis] = getAsOpFoldResult(from);
  return tm.insert(tail, x, offsets, tm.sizes(tail));
}

Value LinalgAlgebra::padEnd(Value x, int64_t axis, Value count, double value) {
  // A pad by nothing (a static length of whole chunks) copies nothing.
  if (matchPattern(count, m_Zero()))
    return x;
  SmallVector<OpFoldResult> sizes = tm.sizes(x);
  SmallVector<OpFoldResult> padded(sizes);
  padded[axis] = getAsOpFoldResult(sizeAdd(dim(x, axis), count));
  return tm.insert(x, tm.full(padded, tm.s().constant(value)),
                   SmallVector<OpFoldResult>(sizes.size(), b.getIndexAttr(0)),
                   sizes);
}

Value LinalgAlgebra::splitAxis(Value x, int64_t axis, Value outer, Value inner,
                               std::optional<int64_t> staticInner) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  OpFoldResult outerSize = getAsOpFoldResult(outer);
  OpFoldResult innerSize = getAsOpFoldResult(inner);
  SmallVector<OpFoldResult> shape = tm.sizes(x);
  shape[axis] = innerSize;
  shape.insert(shape.begin() + axis, outerSize);
  SmallVector<int64_t> staticShape(type.getShape());
  staticShape[axis] =
      staticInner
          ? *staticInner
          : getConstantIntValue(innerSize).value_or(ShapedType::kDynamic);
  staticShape.insert(
      staticShape.begin() + axis,
      getConstantIntValue(outerSize).value_or(ShapedType::kDynamic));
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t first = d <= axis ? d : d + 1;
    if (d == axis)
      groups.push_back({first, first + 1});
    else
      groups.push_back({first});
  }
  auto resultType = RankedTensorType::get(staticShape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resultType, x, groups, shape);
}

Value LinalgAlgebra::mergeAxes(Value x, int64_t axis) {
  int64_t rank = rankOf(x);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis + 1)
      continue;
    if (d == axis)
      groups.push_back({d, d + 1});
    else
      groups.push_back({d});
  }
  return tensor::CollapseShapeOp::create(b, loc, x, groups);
}

// An scf.if keeps an empty axis empty: there is no place to shift into.
Value LinalgAlgebra::shiftByOne(Value x, int64_t axis, Value first) {
  int64_t rank = rankOf(x);
  SmallVector<OpFoldResult> sizes = tm.sizes(x);
  Value count = dim(x, axis);
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, count, size(0));
  auto shift = scf::IfOp::create(b, loc, TypeRange{x.getType()}, any,
                                 /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&shift.getThenRegion().front());
  SmallVector<OpFoldResult> headSizes(sizes);
  headSizes[axis] = b.getIndexAttr(1);
  Value head;
  if (first) {
    Value init = tensor::EmptyOp::create(b, loc, headSizes, tm.getType());
    auto headType = cast<RankedTensorType>(init.getType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
    head = tm.generic(
        headType, {first}, init,
        {broadcastMap(headType, cast<RankedTensorType>(first.getType())), id},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [](ScalarMath &, ValueRange v) { return v[0]; });
  } else {
    head = tm.zeros(headSizes);
  }
  SmallVector<OpFoldResult> origin(rank, b.getIndexAttr(0));
  Value shifted = tensor::EmptyOp::create(b, loc, sizes, tm.getType());
  shifted = tm.insert(head, shifted, origin, headSizes);
  SmallVector<OpFoldResult> restSizes(sizes);
  restSizes[axis] = getAsOpFoldResult(sizeSub(count, size(1)));
  Value rest = tm.slice(x, origin, restSizes, rank);
  SmallVector<OpFoldResult> at(origin);
  at[axis] = b.getIndexAttr(1);
  scf::YieldOp::create(b, loc, tm.insert(rest, shifted, at, restSizes));
  b.setInsertionPointToStart(&shift.getElseRegion().front());
  scf::YieldOp::create(b, loc, x);
  return shift.getResult(0);
}

//===----------------------------------------------------------------------===//
// Control
//===----------------------------------------------------------------------===//

SmallVector<Value> LinalgAlgebra::doublingLoop(Value count, ValueRange carried,
                                               DoublingBody body) {
  // One element (one chunk) has nothing to combine; the loop's body, never
  // run, would still slice past the end of a static dimension of size 1.
  if (std::optional<int64_t> n = getConstantIntValue(count); n && *n <= 1)
    return SmallVector<Value>(carried);
  SmallVector<Value> init{size(1)};
  init.append(carried.begin(), carried.end());
  // The region builders get this algebra's own builder, positioned in the
  // region, so the body is built with `this`.
  auto loop = scf::WhileOp::create(
      b, loc, ValueRange(init).getTypes(), init,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value more = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                           args[0], count);
        scf::ConditionOp::create(nb, nl, more, args);
      },
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value d = args[0];
        SmallVector<Value> next{arith::MulIOp::create(b, loc, d, size(2))};
        llvm::append_range(next, body(d, args.drop_front()));
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults().drop_front());
}
