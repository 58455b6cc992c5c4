//===- LowerDWConvLayer.cpp - ttt.dwconv_layer to its reference -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ViT^3's depth-wise convolution branch: per (batch, channel) stream, the
// kernel takes `inner_steps` full-batch gradient steps on the loss between
// conv(k) and v, then convolves q. Both the convolution and its kernel
// gradient are single linalg.generic ops over a zero-padded map.
//
//===----------------------------------------------------------------------===//

#include "LowerRecurrent.h"
#include "StreamLoop.h"

#include "ttt/Conversion/Utils/TensorMath.h"
#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ttt;
using utils::IteratorType;

namespace {

class DWConvLowering {
public:
  DWConvLowering(TensorMath &tm, DWConvLayerOp op, int64_t kh, int64_t kw)
      : tm(tm), op(op), update(op.getUpdateOrDefault()), kh(kh), kw(kw) {}

  /// The stream's output map and final kernel.
  std::pair<Value, Value> lowerStream(Value q, Value k, Value v, Value w);

private:
  Value pad(Value x);
  Value convolve(Value x, Value w);
  Value kernelGradient(Value keys, Value outGrad);
  Value step(Value w, Value k, Value v);

  TensorMath &tm;
  DWConvLayerOp op;
  UpdateAttr update;
  int64_t kh, kw;
};

} // namespace

Value DWConvLowering::pad(Value x) {
  OpBuilder &b = tm.builder();
  Location loc = tm.getLoc();
  Value height = tm.indexValue(tm.dim(x, 0));
  Value width = tm.indexValue(tm.dim(x, 1));
  Value padH = arith::ConstantIndexOp::create(b, loc, kh - 1);
  Value padW = arith::ConstantIndexOp::create(b, loc, kw - 1);
  Value padded =
      tm.zeros({arith::AddIOp::create(b, loc, height, padH).getResult(),
                arith::AddIOp::create(b, loc, width, padW).getResult()});
  return tm.insert(x, padded, {b.getIndexAttr(kh / 2), b.getIndexAttr(kw / 2)},
                   {tm.dim(x, 0), tm.dim(x, 1)});
}

// out[y, x] = sum_{a, b} w[a, b] * xpad[y + a, x + b]
Value DWConvLowering::convolve(Value x, Value w) {
  MLIRContext *ctx = tm.builder().getContext();
  AffineExpr y, xx, a, bb;
  bindDims(ctx, y, xx, a, bb);
  Value init = tm.zeros({tm.dim(x, 0), tm.dim(x, 1)});
  return tm.generic(init.getType(), {pad(x), w}, init,
                    {AffineMap::get(4, 0, {y + a, xx + bb}, ctx),
                     AffineMap::get(4, 0, {a, bb}, ctx),
                     AffineMap::get(4, 0, {y, xx}, ctx)},
                    {IteratorType::parallel, IteratorType::parallel,
                     IteratorType::reduction, IteratorType::reduction},
                    [](ScalarMath &s, ValueRange v) {
                      return s.add(v[2], s.mul(v[0], v[1]));
                    });
}

// g[a, b] = sum_{y, x} e[y, x] * kpad[y + a, x + b]
Value DWConvLowering::kernelGradient(Value keys, Value outGrad) {
  MLIRContext *ctx = tm.builder().getContext();
  AffineExpr a, bb, y, xx;
  bindDims(ctx, a, bb, y, xx);
  Value init =
      tm.zeros({tm.builder().getIndexAttr(kh), tm.builder().getIndexAttr(kw)});
  return tm.generic(init.getType(), {pad(keys), outGrad}, init,
                    {AffineMap::get(4, 0, {y + a, xx + bb}, ctx),
                     AffineMap::get(4, 0, {y, xx}, ctx),
                     AffineMap::get(4, 0, {a, bb}, ctx)},
                    {IteratorType::parallel, IteratorType::parallel,
                     IteratorType::reduction, IteratorType::reduction},
                    [](ScalarMath &s, ValueRange v) {
                      return s.add(v[2], s.mul(v[0], v[1]));
                    });
}

Value DWConvLowering::step(Value w, Value k, Value v) {
  ScalarMath &s = tm.s();
  LossAttr loss = op.getLoss();
  Value outGrad = loss.getKind() == LossKind::dot
                      ? tm.map({v}, [](ScalarMath &sm,
                                       ValueRange x) { return sm.neg(x[0]); })
                      : tm.sub(convolve(k, w), v);
  double sign = update.getSign() == Sign::descent ? -1.0 : 1.0;
  Value scale = s.constant(sign * loss.getScale().convertToDouble());
  if (loss.getReduction() == Reduction::mean) {
    OpBuilder &b = tm.builder();
    Value rows = tm.indexValue(tm.dim(k, 0));
    Value cols = tm.indexValue(tm.dim(k, 1));
    Value positions = arith::MulIOp::create(b, tm.getLoc(), rows, cols);
    scale = s.div(scale, s.fromIndex(positions));
  }
  Value u = tm.scale(kernelGradient(k, outGrad), scale);
  if (update.getClip() == ClipKind::frobenius) {
    Value one = s.constant(1.0);
    Value norm = tm.frobeniusNorm(u);
    Value denominator = s.add(norm, s.constant(1.0));
    u = tm.scale(u, s.div(one, denominator));
  }
  return tm.add(w,
                tm.scale(u, s.constant(update.getLrScale().convertToDouble())));
}

std::pair<Value, Value> DWConvLowering::lowerStream(Value q, Value k, Value v,
                                                    Value w) {
  int64_t count = op.getInnerSteps();
  if (count == 1) {
    w = step(w, k, v);
  } else {
    OpBuilder &b = tm.builder();
    Location loc = tm.getLoc();
    Value lower = arith::ConstantIndexOp::create(b, loc, 0);
    Value upper = arith::ConstantIndexOp::create(b, loc, count);
    Value stepSize = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop =
        scf::ForOp::create(b, loc, lower, upper, stepSize, ValueRange{w});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value next = step(loop.getRegionIterArgs()[0], k, v);
    scf::YieldOp::create(b, loc, next);
    w = loop.getResult(0);
  }
  return {convolve(q, w), w};
}

namespace {
struct LowerDWConvLayer : OpRewritePattern<DWConvLayerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DWConvLayerOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto elementType = cast<FloatType>(op.getQ().getType().getElementType());
    FloatType computeType = getComputeType(elementType, rewriter);
    TensorMath tm(rewriter, loc, computeType);
    OpBuilder &b = rewriter;
    Value q = op.getQ(), k = op.getK(), v = op.getV(), w = op.getKernel();
    auto kernelType = cast<RankedTensorType>(w.getType());
    int64_t rank = kernelType.getRank();
    int64_t kh = kernelType.getDimSize(rank - 2);
    int64_t kw = kernelType.getDimSize(rank - 1);
    OpFoldResult batch = tm.dim(q, 0), channels = tm.dim(q, 1);
    OpFoldResult height = tm.dim(q, 2), width = tm.dim(q, 3);
    OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1);

    SmallVector<Value> outputs{tensor::EmptyOp::create(
        b, loc, {batch, channels, height, width}, elementType)};
    if (op.getFinalKernel())
      outputs.push_back(tensor::EmptyOp::create(
          b, loc, {batch, channels, b.getIndexAttr(kh), b.getIndexAttr(kw)},
          elementType));
    SmallVector<Value> results = buildStreamLoop(
        b, loc, {batch, channels}, outputs,
        [&](Value bIv, Value cIv, ValueRange) {
          auto plane = [&](Value t) {
            return tm.convert(tm.slice(t, {bIv, cIv, zero, zero},
                                       {unit, unit, tm.dim(t, 2), tm.dim(t, 3)},
                                       2),
                              computeType);
          };
          Value kernel =
              rank == 4
                  ? tm.slice(
                        w, {bIv, cIv, zero, zero},
                        {unit, unit, b.getIndexAttr(kh), b.getIndexAttr(kw)}, 2)
                  : tm.slice(w, {cIv, zero, zero},
                             {unit, b.getIndexAttr(kh), b.getIndexAttr(kw)}, 2);
          DWConvLowering lowering(tm, op, kh, kw);
          Value qPlane = plane(q);
          Value kPlane = plane(k);
          Value vPlane = plane(v);
          Value initialKernel = tm.convert(kernel, computeType);
          auto [o, finalKernel] =
              lowering.lowerStream(qPlane, kPlane, vPlane, initialKernel);
          SmallVector<Value> pieces{tm.convert(o, elementType)};
          if (op.getFinalKernel())
            pieces.push_back(tm.convert(finalKernel, elementType));
          return pieces;
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void mlir::ttt::populateLowerDWConvLayerPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerDWConvLayer>(patterns.getContext());
}
