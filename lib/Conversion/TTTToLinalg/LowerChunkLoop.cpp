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
    unsigned numStates = op.getInits().size();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value chunk = arith::ConstantIndexOp::create(rewriter, loc, op.getChunk());
    Value length = lowering.length();
    Value numChunks = arith::CeilDivUIOp::create(rewriter, loc, length, chunk);
    SmallVector<Type> outputTypes(op.getOutputs().getTypes());
    ArrayRef<int64_t> axes = op.getOutputAxes();

    // Chunks `from` .. last, carrying the state and the output buffers.
    auto chunkLoop = [&](Value from, ValueRange state, ValueRange buffers) {
      SmallVector<Value> carried(state);
      llvm::append_range(carried, buffers);
      return scf::ForOp::create(
          rewriter, loc, from, numChunks, one, carried,
          [&](OpBuilder &, Location, Value index, ValueRange iterArgs) {
            Value start = arith::MulIOp::create(rewriter, loc, index, chunk);
            Value left = arith::SubIOp::create(rewriter, loc, length, start);
            Value size = arith::MinUIOp::create(rewriter, loc, chunk, left);
            SmallVector<Value> yielded = lowering.runBody(
                iterArgs.take_front(numStates), lowering.windows(start, size));
            SmallVector<Value> next(
                ArrayRef<Value>(yielded).drop_front(numOutputs));
            for (auto [slot, buffer, axis] :
                 llvm::enumerate(iterArgs.drop_front(numStates), axes))
              next.push_back(
                  lowering.insert(yielded[slot], buffer, axis, start));
            scf::YieldOp::create(rewriter, loc, next);
          });
    };
    // Loop results (state, buffers) as the op's (outputs, final state).
    auto reordered = [&](ValueRange results) {
      SmallVector<Value> ordered(results.drop_front(numStates));
      llvm::append_range(ordered, results.take_front(numStates));
      return ordered;
    };

    auto staticOtherSizes = [&](Type type, int64_t axis) {
      auto tensor = cast<RankedTensorType>(type);
      for (int64_t d = 0, e = tensor.getRank(); d < e; ++d)
        if (d != axis && tensor.isDynamicDim(d))
          return false;
      return true;
    };
    bool known = llvm::all_of(llvm::zip_equal(outputTypes, axes), [&](auto p) {
      return staticOtherSizes(std::get<0>(p), std::get<1>(p));
    });
    if (known) {
      SmallVector<Value> buffers;
      for (auto [type, axis] : llvm::zip_equal(outputTypes, axes))
        buffers.push_back(lowering.emptyResult(cast<RankedTensorType>(type),
                                               axis, length, nullptr));
      rewriter.replaceOp(
          op, reordered(chunkLoop(zero, op.getInits(), buffers).getResults()));
      return success();
    }

    // An output's other sizes, where dynamic, are those of the chunk's
    // output: the first chunk runs before the loop, which then never changes
    // a buffer's shape. An empty sequence has no chunk: its outputs take
    // their sizes from the body run on empty windows, which only an empty
    // sequence executes, and the state stays as it came.
    SmallVector<Type> resultTypes(outputTypes);
    llvm::append_range(resultTypes, op.getInits().getTypes());
    Value isEmpty = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, length, zero);
    auto split = scf::IfOp::create(rewriter, loc, resultTypes, isEmpty,
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(split.thenBlock());
      SmallVector<Value> yielded =
          lowering.runBody(op.getInits(), lowering.windows(zero, zero));
      SmallVector<Value> empty;
      for (auto [index, type, axis] : llvm::enumerate(outputTypes, axes))
        empty.push_back(lowering.emptyResult(cast<RankedTensorType>(type), axis,
                                             zero, yielded[index]));
      llvm::append_range(empty, op.getInits());
      scf::YieldOp::create(rewriter, loc, empty);

      rewriter.setInsertionPointToStart(split.elseBlock());
      Value size = arith::MinUIOp::create(rewriter, loc, chunk, length);
      SmallVector<Value> first =
          lowering.runBody(op.getInits(), lowering.windows(zero, size));
      SmallVector<Value> buffers;
      for (auto [index, type, axis] : llvm::enumerate(outputTypes, axes)) {
        Value buffer = lowering.emptyResult(cast<RankedTensorType>(type), axis,
                                            length, first[index]);
        buffers.push_back(lowering.insert(first[index], buffer, axis, zero));
      }
      auto rest = chunkLoop(one, ArrayRef<Value>(first).drop_front(numOutputs),
                            buffers);
      scf::YieldOp::create(rewriter, loc, reordered(rest.getResults()));
    }
    SmallVector<Value> results(split.getResults());
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::ttt::populateLowerChunkLoopPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerChunkLoop>(patterns.getContext());
}
