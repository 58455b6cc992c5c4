//===- Decompose.cpp - linattn.attention into the chunk ops ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// linattn.attention is the general form a front end writes; the back ends
// lower only the chunk ops. Each mask becomes chunk_reduce, scan and
// chunk_apply (docs/Dialects.md has the equations).
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"
#include "ttt/Dialect/LinAttn/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNDECOMPOSE
#include "ttt/Dialect/LinAttn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {

/// The token tile of a token-causal mask without decay: the intra-tile term
/// keeps the mask exact whatever its size; 64 keeps the per-tile score
/// matrices small.
constexpr int64_t kCausalTile = 64;

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Mask mask = op.getMask();
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    Value decay = op.getDecay(), scale = op.getScale();
    auto qType = cast<RankedTensorType>(q.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    bool causal = mask == Mask::token_causal;
    // Chunk size: none for the full mask (one chunk of every token), the
    // op's own for the chunk masks, one token per chunk for a decayed token
    // mask.
    std::optional<int64_t> chunk;
    if (mask == Mask::chunk_strict || mask == Mask::chunk_inclusive)
      chunk = *op.getChunkSize();
    else if (causal)
      chunk = decay ? 1 : kCausalTile;
    IntegerAttr chunkAttr =
        chunk ? rewriter.getI64IntegerAttr(*chunk) : IntegerAttr();
    int64_t chunks = chunk ? ShapedType::kDynamic : 1;
    auto statesType =
        RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1), chunks,
                               qType.getDimSize(3), vType.getDimSize(3)},
                              qType.getElementType());
    FloatAttr factor = op.getFactorAttr();
    UnitAttr mean = op.getMeanAttr();
    IntegerAttr column = op.getScaleColumnAttr();

    Value states = ChunkReduceOp::create(rewriter, loc, statesType, k, v, scale,
                                         column, chunkAttr, factor, mean);
    // A tiled token mask reads the tiles before its own from the states and
    // its own tile from the intra-tile term.
    bool intra = causal && !decay;
    bool exclusive = mask == Mask::chunk_strict || intra;
    if (mask != Mask::full || op.getInitial())
      states = ScanOp::create(
          rewriter, loc, statesType, states, op.getInitial(), decay, Value(),
          decay ? ScanKind::decayed : ScanKind::additive,
          exclusive ? ScanMode::exclusive : ScanMode::inclusive);
    rewriter.replaceOpWithNewOp<ChunkApplyOp>(
        op, op.getType(), q, states, intra ? k : Value(), intra ? v : Value(),
        intra ? scale : Value(), intra ? column : rewriter.getI64IntegerAttr(0),
        chunkAttr, intra ? factor : rewriter.getF64FloatAttr(1.0), UnitAttr());
    return success();
  }
};

struct LinAttnDecomposePass
    : linattn::impl::LinAttnDecomposeBase<LinAttnDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::linattn::populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention>(patterns.getContext());
}
