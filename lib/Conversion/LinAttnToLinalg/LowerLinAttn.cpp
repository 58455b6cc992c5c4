//===- LowerLinAttn.cpp - linattn ops to linalg on tensors ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each linattn op becomes linalg ops over whole [B, H, ...] tensors: feature
// maps and applies are batched contractions over every token, per-chunk
// contributions and Newton-Schulz are batched over every chunk, and only the
// chunk-state scan is a loop (over chunks, vectorized over streams and the
// state). Chunked views pad the sequence with zeros to whole chunks and
// reshape [.., T, D] to [.., N, C, D]; padded tokens contribute nothing.
// Every op but the sequential and per-entry scans is built on the algebra
// every back end shares (LinAttnForms.h, LinAttnAlgorithms.h), here by
// LinalgAlgebra; the ONNX export builds the same as nodes.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"
#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"
#include "ttt/Conversion/Utils/LinAttnForms.h"
#include "ttt/Conversion/Utils/LinalgAlgebra.h"
#include "ttt/Conversion/Utils/TensorMath.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"
#include "ttt/Dialect/LinAttn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_LINATTNTOLINALG
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::linattn;
using utils::IteratorType;

namespace {

/// Affine maps over `n` loop dims written as lists of dim positions.
struct Maps {
  MLIRContext *ctx;
  unsigned n;
  AffineExpr d(unsigned i) const { return getAffineDimExpr(i, ctx); }
  AffineMap of(ArrayRef<AffineExpr> exprs) const {
    return AffineMap::get(n, 0, exprs, ctx);
  }
  AffineMap dims(ArrayRef<unsigned> positions) const {
    SmallVector<AffineExpr> exprs;
    for (unsigned p : positions)
      exprs.push_back(d(p));
    return of(exprs);
  }
};

SmallVector<IteratorType> iterators(unsigned parallel, unsigned reduction) {
  SmallVector<IteratorType> iters(parallel, IteratorType::parallel);
  iters.append(reduction, IteratorType::reduction);
  return iters;
}

/// n loops, all parallel except the second-innermost, which reduces: the
/// contraction order whose innermost loop is contiguous in the result.
SmallVector<IteratorType> innerReduction(unsigned n) {
  SmallVector<IteratorType> iters(n, IteratorType::parallel);
  iters[n - 2] = IteratorType::reduction;
  return iters;
}

Value multiplyAdd(ScalarMath &s, ValueRange v) {
  return s.add(v.back(), s.mul(v[0], v[1]));
}

/// Lowering helpers bound to one op's location and element type.
class Lowering {
public:
  Lowering(OpBuilder &b, Location loc, FloatType type)
      : alg(b, loc, type), tm(alg.math()), b(b), loc(loc) {}

  LinalgAlgebra alg;
  TensorMath &tm;

  /// The initial state [H, F, E] / [B, H, F, E] broadcast to
  /// [B, H, F, E] (or zero without one).
  Value initialState(Value init, ArrayRef<OpFoldResult> stateSizes) {
    Value state = tm.zeros(stateSizes);
    if (!init)
      return state;
    Maps m{b.getContext(), 4};
    bool perSample = cast<RankedTensorType>(init.getType()).getRank() == 4;
    return tm.generic(state.getType(), {init}, state,
                      {perSample ? m.dims({0, 1, 2, 3}) : m.dims({1, 2, 3}),
                       m.dims({0, 1, 2, 3})},
                      iterators(4, 0),
                      [](ScalarMath &, ValueRange v) { return v[0]; });
  }

  OpBuilder &b;
  Location loc;
};

//===----------------------------------------------------------------------===//
// feature_map, chunk_reduce, chunk_mean, state_transform, chunk_apply
//===----------------------------------------------------------------------===//

/// Builds a linattn op on the shared algebra (LinAttnForms.h) and replaces
/// the op by it.
template <typename Op, Value (*build)(TensorAlgebra &, Op)>
struct LowerWithForm : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<FloatType>(getElementTypeOrSelf(op->getOperand(0)));
    LinalgAlgebra alg(rewriter, op.getLoc(), type);
    Value result = build(alg, op);
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, op.getType(), result);
    return success();
  }
};

using LowerFeatureMap = LowerWithForm<FeatureMapOp, buildFeatureMap>;
using LowerChunkReduce = LowerWithForm<ChunkReduceOp, buildChunkReduce>;
using LowerChunkMean = LowerWithForm<ChunkMeanOp, buildChunkMean>;
using LowerStateTransform =
    LowerWithForm<StateTransformOp, buildStateTransform>;
using LowerChunkApply = LowerWithForm<ChunkApplyOp, buildChunkApply>;

//===----------------------------------------------------------------------===//
// scan
//===----------------------------------------------------------------------===//

struct LowerScan : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<FloatType>(op.getInputs().getType().getElementType());
    Lowering l(rewriter, loc, type);
    TensorMath &tm = l.tm;
    OpBuilder &b = rewriter;
    Value g = op.getInputs();
    auto gType = cast<RankedTensorType>(g.getType());
    SmallVector<OpFoldResult> sizes = tm.sizes(g);
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    auto stateType =
        RankedTensorType::get({gType.getDimSize(0), gType.getDimSize(1),
                               gType.getDimSize(3), gType.getDimSize(4)},
                              type);
    SmallVector<OpFoldResult> stateSizes{sizes[0], sizes[1], sizes[3],
                                         sizes[4]};

    // S_{-1}: the initial state broadcast over the batch, or zero.
    Value state = l.initialState(op.getInitial(), stateSizes);
    Value result = tensor::EmptyOp::create(b, loc, sizes, type);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value chunks = tm.indexValue(sizes[2]);
    auto loop =
        scf::ForOp::create(b, loc, c0, chunks, c1, ValueRange{state, result});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value n = loop.getInductionVar();
      Value s = loop.getRegionIterArgs()[0];
      Value acc = loop.getRegionIterArgs()[1];
      SmallVector<OpFoldResult> at{zero, zero, n, zero, zero};
      SmallVector<OpFoldResult> one5{sizes[0], sizes[1], one, sizes[3],
                                     sizes[4]};
      SmallVector<OpFoldResult> strides(5, one);
      // The chunk dimension is dropped and added by explicit reshapes: a
      // rank-reducing slice of [1, H, 1, F, E] leaves which unit dimension
      // it drops ambiguous, and folds after one iteration have picked the
      // batch's.
      SmallVector<ReassociationIndices> chunkGroup{{0}, {1}, {2, 3}, {4}};
      auto store = [&](Value value) {
        Value slice = tensor::ExpandShapeOp::create(
            b, loc,
            RankedTensorType::get({gType.getDimSize(0), gType.getDimSize(1), 1,
                                   gType.getDimSize(3), gType.getDimSize(4)},
                                  type),
            value, chunkGroup);
        return tensor::InsertSliceOp::create(b, loc, slice, acc, at, one5,
                                             strides)
            .getResult();
      };
      if (op.getMode() == ScanMode::exclusive)
        acc = store(s);
      Value gn = tensor::CollapseShapeOp::create(
          b, loc, stateType,
          tensor::ExtractSliceOp::create(b, loc, g, at, one5, strides),
          chunkGroup);
      Maps m{b.getContext(), 4};
      Value next;
      switch (op.getKind()) {
      case ScanKind::additive:
        next = tm.add(s, gn);
        break;
      case ScanKind::decayed: {
        auto decayType = RankedTensorType::get(
            {gType.getDimSize(0), gType.getDimSize(1)}, type);
        Value alpha = tensor::CollapseShapeOp::create(
            b, loc, decayType,
            tensor::ExtractSliceOp::create(
                b, loc, op.getDecay(), {zero, zero, n},
                {sizes[0], sizes[1], one}, {one, one, one}),
            SmallVector<ReassociationIndices>{{0}, {1, 2}});
        Value init = tensor::EmptyOp::create(b, loc, stateSizes, type);
        next = tm.generic(init.getType(), {s, alpha, gn}, init,
                          {m.dims({0, 1, 2, 3}), m.dims({0, 1}),
                           m.dims({0, 1, 2, 3}), m.dims({0, 1, 2, 3})},
                          iterators(4, 0), [](ScalarMath &sm, ValueRange v) {
                            return sm.add(sm.mul(v[1], v[0]), v[2]);
                          });
        break;
      }
      case ScanKind::affine:
      case ScanKind::residual_affine: {
        auto aType =
            RankedTensorType::get({gType.getDimSize(0), gType.getDimSize(1),
                                   gType.getDimSize(3), gType.getDimSize(3)},
                                  type);
        Value a = tensor::CollapseShapeOp::create(
            b, loc, aType,
            tensor::ExtractSliceOp::create(
                b, loc, op.getTransition(), at,
                {sizes[0], sizes[1], one, sizes[3], sizes[3]}, strides),
            chunkGroup);
        Maps m5{b.getContext(), 5}; // b, h, f, g, e
        Value base =
            op.getKind() == ScanKind::residual_affine ? tm.add(s, gn) : gn;
        next = tm.generic(gn.getType(), {a, s}, base,
                          {m5.dims({0, 1, 2, 3}), m5.dims({0, 1, 3, 4}),
                           m5.dims({0, 1, 2, 4})},
                          innerReduction(5), multiplyAdd);
        break;
      }
      }
      if (op.getMode() == ScanMode::inclusive)
        acc = store(next);
      scf::YieldOp::create(b, loc, ValueRange{next, acc});
    }
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, op.getType(),
                                                loop.getResult(1));
    return success();
  }
};

/// Additive and decayed scans as the doubling (Hillis-Steele) scan over
/// chunks (buildScan in LinAttnForms.h, an scf.while here): log2(N) rounds,
/// each one batched linalg op over every chunk, stream and state entry. The
/// initial state enters at the end, scaled by the cumulative decay of each
/// chunk. Affine scans stay sequential: composing F x F transitions would
/// cost log2(N) more products than the loop does.
struct LowerScanInParallel : OpRewritePattern<ScanOp> {
  LowerScanInParallel(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getKind() != ScanKind::additive && op.getKind() != ScanKind::decayed)
      return rewriter.notifyMatchFailure(op, "affine scans stay sequential");
    auto type = cast<FloatType>(op.getInputs().getType().getElementType());
    LinalgAlgebra alg(rewriter, op.getLoc(), type);
    Value result = buildScan(alg, op);
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, op.getType(), result);
    return success();
  }
};

/// Additive and decayed scans as one loop over chunks per state entry: an
/// scf.forall over (batch, head, row, column) whose body carries its entry's
/// state in a scalar through the chunks. It computes what the sequential
/// loop computes, in the same order; on a GPU it is one kernel, a thread per
/// entry with the state in a register (ttt-to-gpu moves foralls whose bodies
/// are scalar code onto the device), where the loop above would launch
/// kernels chunk by chunk.
struct LowerScanPerEntry : OpRewritePattern<ScanOp> {
  LowerScanPerEntry(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getKind() != ScanKind::additive && op.getKind() != ScanKind::decayed)
      return rewriter.notifyMatchFailure(op, "affine scans stay sequential");
    Location loc = op.getLoc();
    auto type = cast<FloatType>(op.getInputs().getType().getElementType());
    TensorMath tm(rewriter, loc, type);
    OpBuilder &b = rewriter;
    Value g = op.getInputs(), decay = op.getDecay(), initial = op.getInitial();
    auto gType = cast<RankedTensorType>(g.getType());
    SmallVector<OpFoldResult> sizes = tm.sizes(g);
    Value chunks = tm.indexValue(sizes[2]);
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value zeroState =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0));
    Value empty = tensor::EmptyOp::create(b, loc, sizes, type);
    SmallVector<OpFoldResult> entries{sizes[0], sizes[1], sizes[3], sizes[4]};
    auto forall =
        scf::ForallOp::create(b, loc, entries, ValueRange{empty}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getTerminator());
      SmallVector<Value> iv = forall.getInductionVars();
      Value bi = iv[0], hi = iv[1], fi = iv[2], ei = iv[3];
      Value out = forall.getRegionIterArgs()[0];
      OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      SmallVector<OpFoldResult> at{bi, hi, zero, fi, ei};
      SmallVector<OpFoldResult> extent{one, one, sizes[2], one, one};
      SmallVector<OpFoldResult> strides(5, one);
      auto columnType = RankedTensorType::get({gType.getDimSize(2)}, type);
      Value column = tensor::ExtractSliceOp::create(b, loc, columnType, out, at,
                                                    extent, strides);
      Value start = zeroState;
      if (initial) {
        // Per sample [B, H, F, E] or shared by the batch [H, F, E].
        bool perSample =
            cast<RankedTensorType>(initial.getType()).getRank() == 4;
        SmallVector<Value> index{hi, fi, ei};
        if (perSample)
          index.insert(index.begin(), bi);
        start = tensor::ExtractOp::create(b, loc, initial, index);
      }
      auto loop =
          scf::ForOp::create(b, loc, c0, chunks, c1, ValueRange{start, column});
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(loop.getBody());
        Value n = loop.getInductionVar();
        Value state = loop.getRegionIterArgs()[0];
        Value col = loop.getRegionIterArgs()[1];
        if (op.getMode() == ScanMode::exclusive)
          col = tensor::InsertOp::create(b, loc, state, col, ValueRange{n});
        Value gn =
            tensor::ExtractOp::create(b, loc, g, ValueRange{bi, hi, n, fi, ei});
        Value next;
        if (decay) {
          Value alpha =
              tensor::ExtractOp::create(b, loc, decay, ValueRange{bi, hi, n});
          Value decayed = arith::MulFOp::create(b, loc, alpha, state);
          next = arith::AddFOp::create(b, loc, decayed, gn);
        } else {
          next = arith::AddFOp::create(b, loc, state, gn);
        }
        if (op.getMode() == ScanMode::inclusive)
          col = tensor::InsertOp::create(b, loc, next, col, ValueRange{n});
        scf::YieldOp::create(b, loc, ValueRange{next, col});
      }
      b.setInsertionPointToEnd(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(b, loc, loop.getResult(1), out, at,
                                            extent, strides);
    }
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, op.getType(),
                                                forall.getResult(0));
    return success();
  }
};

struct LinAttnToLinalgPass
    : ttt::impl::LinAttnToLinalgBase<LinAttnToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    if (scan != "parallel" && scan != "sequential" && scan != "per-entry") {
      getOperation()->emitError("linattn-to-linalg: unknown scan strategy '")
          << scan << "' (expected 'parallel', 'sequential' or 'per-entry')";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateLinAttnToLinalgPatterns(patterns, scan);
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (isa<LinAttnDialect>(op->getDialect())) {
        op->emitOpError("could not be lowered to linalg");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::ttt::populateLinAttnToLinalgPatterns(RewritePatternSet &patterns,
                                                StringRef scan) {
  patterns.add<LowerFeatureMap, LowerChunkReduce, LowerChunkMean, LowerScan,
               LowerStateTransform, LowerChunkApply>(patterns.getContext());
  linattn::populateDecomposePatterns(patterns);
  if (scan == "parallel")
    patterns.add<LowerScanInParallel>(patterns.getContext());
  else if (scan == "per-entry")
    patterns.add<LowerScanPerEntry>(patterns.getContext());
}
