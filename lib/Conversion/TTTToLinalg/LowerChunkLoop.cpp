//===- LowerChunkLoop.cpp - ttt.chunk_loop as an scf.for over chunks ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference meaning of ttt.chunk_loop, spelled in upstream ops: one
// scf.for iteration per chunk, the windows cut by tensor.extract_slice, the
// body cloned, each chunk's outputs written into its place along the output
// axis. The body's ops are upstream ops already, so nothing else changes.
//
//===----------------------------------------------------------------------===//

#include "LowerRecurrent.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ttt;

namespace {

/// Builds the pieces of one lowered loop at the rewriter's insertion point.
class ChunkLoopLowering {
public:
  ChunkLoopLowering(PatternRewriter &rewriter, ChunkLoopOp op)
      : b(rewriter), op(op), loc(op.getLoc()) {}

  /// The window `[start, start + size)` of every sequence along its axis.
  SmallVector<Value> windows(Value start, Value size) {
    SmallVector<Value> result;
    for (auto [sequence, arg, axis] : llvm::zip_equal(
             op.getSequences(), op.getWindowArgs(), op.getWindowAxes())) {
      auto type = cast<RankedTensorType>(arg.getType());
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
          sizes = tensor::getMixedSizes(b, loc, sequence),
          strides(rank, b.getIndexAttr(1));
      offsets[axis] = start;
      sizes[axis] = type.isDynamicDim(axis)
                        ? OpFoldResult(size)
                        : OpFoldResult(b.getIndexAttr(type.getDimSize(axis)));
      result.push_back(tensor::ExtractSliceOp::create(b, loc, type, sequence,
                                                      offsets, sizes, strides));
    }
    return result;
  }

  /// The body run on `state` and `windows`: the chunk's outputs, then the
  /// next state.
  SmallVector<Value> runBody(ValueRange state, ValueRange windows) {
    IRMapping mapping;
    mapping.map(op.getStateArgs(), state);
    mapping.map(op.getWindowArgs(), windows);
    mapping.map(op.getInvariantArgs(), op.getInvariants());
    Block &body = op.getBody().front();
    for (Operation &inner : body.without_terminator())
      b.clone(inner, mapping);
    SmallVector<Value> yielded;
    for (Value value : op.getYield()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(value));
    return yielded;
  }

  /// A tensor of `type` with `length` along `axis` and the other dynamic
  /// sizes of `like` (or 0 without it).
  Value emptyResult(RankedTensorType type, int64_t axis, Value length,
                    Value like) {
    SmallVector<Value> dynamic;
    for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d == axis)
        dynamic.push_back(length);
      else if (like)
        dynamic.push_back(tensor::DimOp::create(b, loc, like, d));
      else
        dynamic.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    }
    return tensor::EmptyOp::create(b, loc, type, dynamic);
  }

  /// `chunk` written into `into` at `start` along `axis`.
  Value insert(Value chunk, Value into, int64_t axis, Value start) {
    int64_t rank = cast<RankedTensorType>(chunk.getType()).getRank();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
        sizes = tensor::getMixedSizes(b, loc, chunk),
        strides(rank, b.getIndexAttr(1));
    offsets[axis] = start;
    return tensor::InsertSliceOp::create(b, loc, chunk, into, offsets, sizes,
                                         strides);
  }

  /// The sequences' common length.
  Value length() {
    return tensor::DimOp::create(b, loc, op.getSequences().front(),
                                 op.getWindowAxes().front());
  }

  PatternRewriter &b;
  ChunkLoopOp op;
  Location loc;
};

struct LowerChunkLoop : OpRewritePattern<ChunkLoopOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ChunkLoopOp op,
                                PatternRewriter &rewriter) const override {
    ChunkLoopLowering lowering(rewriter, op);
    Location loc = op.getLoc();
    if (op.isSingleChunk()) {
      rewriter.replaceOp(op,
                         lowering.runBody(op.getInits(), op.getSequences()));
      return success();
    }
    unsigned numOutputs = op.getOutputs().size();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value chunk = arith::ConstantIndexOp::create(rewriter, loc, op.getChunk());
    Value length = lowering.length();
    Value numChunks = arith::CeilDivUIOp::create(rewriter, loc, length, chunk);

    // An output's other sizes, where dynamic, are known once a chunk has
    // run; before the first one its buffer is a placeholder. An empty
    // sequence has no chunk: its outputs take their sizes from the body run
    // on empty windows, which only an empty sequence executes.
    auto staticOtherSizes = [&](Type type, int64_t axis) {
      auto tensor = cast<RankedTensorType>(type);
      for (int64_t d = 0, e = tensor.getRank(); d < e; ++d)
        if (d != axis && tensor.isDynamicDim(d))
          return false;
      return true;
    };
    bool placeholders = !llvm::all_of(
        llvm::zip_equal(op.getOutputs().getTypes(), op.getOutputAxes()),
        [&](auto pair) {
          return staticOtherSizes(std::get<0>(pair), std::get<1>(pair));
        });
    SmallVector<Type> outputTypes(op.getOutputs().getTypes());
    SmallVector<Value> buffers;
    if (!placeholders) {
      for (auto [type, axis] : llvm::zip_equal(outputTypes, op.getOutputAxes()))
        buffers.push_back(lowering.emptyResult(cast<RankedTensorType>(type),
                                               axis, length, nullptr));
    } else {
      Value isEmpty = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, length, zero);
      auto noTokens = scf::IfOp::create(rewriter, loc, outputTypes, isEmpty,
                                        /*withElseRegion=*/true);
      llvm::append_range(buffers, noTokens.getResults());
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(noTokens.thenBlock());
      SmallVector<Value> yielded =
          lowering.runBody(op.getInits(), lowering.windows(zero, zero));
      SmallVector<Value> empties;
      for (auto [index, type, axis] :
           llvm::enumerate(outputTypes, op.getOutputAxes()))
        empties.push_back(lowering.emptyResult(cast<RankedTensorType>(type),
                                               axis, zero, yielded[index]));
      scf::YieldOp::create(rewriter, loc, empties);
      rewriter.setInsertionPointToStart(noTokens.elseBlock());
      SmallVector<Value> unsized;
      for (auto [type, axis] : llvm::zip_equal(outputTypes, op.getOutputAxes()))
        unsized.push_back(lowering.emptyResult(cast<RankedTensorType>(type),
                                               axis, length, nullptr));
      scf::YieldOp::create(rewriter, loc, unsized);
    }

    SmallVector<Value> carried(op.getInits());
    llvm::append_range(carried, buffers);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, numChunks, one, carried,
        [&](OpBuilder &, Location, Value index, ValueRange iterArgs) {
          ValueRange state = iterArgs.take_front(op.getInits().size());
          ValueRange outputBuffers = iterArgs.drop_front(op.getInits().size());
          Value start = arith::MulIOp::create(rewriter, loc, index, chunk);
          Value left = arith::SubIOp::create(rewriter, loc, length, start);
          Value size = arith::MinUIOp::create(rewriter, loc, chunk, left);
          SmallVector<Value> yielded =
              lowering.runBody(state, lowering.windows(start, size));
          Value first =
              placeholders
                  ? arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::eq, index, zero)
                  : Value();
          SmallVector<Value> next(
              ArrayRef<Value>(yielded).drop_front(numOutputs));
          for (auto [slot, buffer, axis] :
               llvm::enumerate(outputBuffers, op.getOutputAxes())) {
            if (!placeholders) {
              next.push_back(
                  lowering.insert(yielded[slot], buffer, axis, start));
              continue;
            }
            auto allocate = scf::IfOp::create(
                rewriter, loc, TypeRange{buffer.getType()}, first, true);
            {
              OpBuilder::InsertionGuard guard(rewriter);
              rewriter.setInsertionPointToStart(allocate.thenBlock());
              Value sized =
                  lowering.emptyResult(cast<RankedTensorType>(buffer.getType()),
                                       axis, length, yielded[slot]);
              scf::YieldOp::create(rewriter, loc, sized);
              rewriter.setInsertionPointToStart(allocate.elseBlock());
              scf::YieldOp::create(rewriter, loc, buffer);
            }
            next.push_back(lowering.insert(yielded[slot], allocate.getResult(0),
                                           axis, start));
          }
          scf::YieldOp::create(rewriter, loc, next);
        });

    SmallVector<Value> results(
        loop.getResults().drop_front(op.getInits().size()));
    llvm::append_range(results,
                       loop.getResults().take_front(op.getInits().size()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::ttt::populateLowerChunkLoopPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerChunkLoop>(patterns.getContext());
}
