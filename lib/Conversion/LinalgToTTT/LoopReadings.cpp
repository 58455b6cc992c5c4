//===- LoopReadings.cpp - loops read as the shadow graph reads them -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LoopReadings.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::linalg_raise;

void linalg_raise::canonicalize(func::FuncOp func, RewritePatternSet &&extra) {
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(std::move(extra));
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, context);
  // A fixed point not reached in the driver's rounds still leaves a function
  // that computes what it did.
  (void)applyPatternsGreedily(func, std::move(patterns));
}

/// A copy of `func` right before it, named `func`'s name plus `suffix`: a
/// reading of the function that the pass keeps only if it raises a layer.
static func::FuncOp cloneBeside(func::FuncOp func, StringRef suffix) {
  OpBuilder b(func);
  auto copy = cast<func::FuncOp>(b.clone(*func));
  copy.setSymName((func.getSymName() + suffix).str());
  return copy;
}

/// If `loop` runs while its counter i < T and advances it by its chunk's
/// length min(C, T - i) (an `affine.min` of the counter and T), and its
/// last counter is not read: the `arith.addi` that advances it, which of
/// its operands is the chunk's length, and C.
/// Advancing by C instead takes the loop through the same counters (i + C
/// and i + min(C, T - i) differ only when both reach T or beyond), so the
/// loop is counted.
namespace {
struct ChunkAdvance {
  arith::AddIOp add;
  unsigned lengthOperand;
  int64_t chunk;
};
} // namespace
static std::optional<ChunkAdvance> advanceByChunkLength(scf::WhileOp loop) {
  auto condition =
      dyn_cast<scf::ConditionOp>(loop.getBeforeBody()->getTerminator());
  auto cmp = condition ? condition.getCondition().getDefiningOp<arith::CmpIOp>()
                       : arith::CmpIOp();
  if (!cmp || (cmp.getPredicate() != arith::CmpIPredicate::slt &&
               cmp.getPredicate() != arith::CmpIPredicate::ult))
    return std::nullopt;
  auto counter = dyn_cast<BlockArgument>(cmp.getLhs());
  Value bound = cmp.getRhs();
  if (!counter || counter.getOwner() != loop.getBeforeBody() ||
      !bound.getParentRegion()->isProperAncestor(&loop.getBefore()))
    return std::nullopt;
  // The counter goes on, unchanged, as the same result and after argument.
  unsigned index = counter.getArgNumber();
  auto forwarded = llvm::find(condition.getArgs(), counter);
  if (forwarded == condition.getArgs().end())
    return std::nullopt;
  unsigned position = forwarded - condition.getArgs().begin();
  if (!loop.getResult(position).use_empty())
    return std::nullopt;
  Value i = loop.getAfterArguments()[position];
  auto yield = cast<scf::YieldOp>(loop.getAfterBody()->getTerminator());
  auto add = yield.getOperand(index).getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  Value length = add.getLhs() == i ? add.getRhs() : add.getLhs();
  auto min = length.getDefiningOp<affine::AffineMinOp>();
  if ((add.getLhs() != i && add.getRhs() != i) || !min ||
      min.getMapOperands().empty() || min.getMapOperands()[0] != i)
    return std::nullopt;
  AffineMap map = min.getAffineMap();
  MLIRContext *context = loop.getContext();
  AffineExpr d0 = getAffineDimExpr(0, context);
  // T - i: T a symbol operand, or a constant when T is one.
  AffineExpr rest;
  if (map.getNumDims() == 1 && map.getNumSymbols() == 1 &&
      min.getMapOperands()[1] == bound)
    rest = getAffineSymbolExpr(0, context) - d0;
  else if (std::optional<int64_t> t = getConstantIntValue(bound);
           t && map.getNumDims() == 1 && map.getNumSymbols() == 0)
    rest = getAffineConstantExpr(*t, context) - d0;
  if (!rest || map.getNumResults() != 2)
    return std::nullopt;
  std::optional<int64_t> chunk;
  for (AffineExpr result : map.getResults())
    if (auto c = dyn_cast<AffineConstantExpr>(result))
      chunk = c.getValue();
    else if (result != rest)
      return std::nullopt;
  if (!chunk || *chunk < 1)
    return std::nullopt;
  return ChunkAdvance{add, add.getLhs() == i ? 1u : 0u, *chunk};
}

/// Says why `loop`, which may carry a fast weight (a tensor), is not read
/// as a loop over chunks: a TTT layer in it would otherwise go unreported
/// behind "no TTT layer found". Loops of scalars only say nothing.
static void explainUncountedLoop(scf::WhileOp loop) {
  if (llvm::none_of(loop.getInits(), [](Value init) {
        return isa<RankedTensorType>(init.getType());
      }))
    return;
  Block *before = loop.getBeforeBody();
  Value condition = loop.getConditionOp().getCondition();
  auto cmp = condition.getDefiningOp<arith::CmpIOp>();
  StringRef why;
  if (auto arg = dyn_cast<BlockArgument>(condition);
      arg && arg.getOwner() == before)
    why = "its condition is an i1 that it carries from one iteration to the "
          "next (computed at the end of its body), not a comparison of a "
          "counter with a bound, and not read as one: that takes a condition "
          "computed only from the values the body yields, and a first "
          "condition that is the same computation on the loop's first values";
  else if (!cmp)
    why = "its condition is not an integer comparison of a counter with a "
          "bound";
  else if (!llvm::hasSingleElement(before->without_terminator()))
    why = "its condition region computes more than the comparison of a "
          "counter with a bound";
  else
    why = "its condition is not `counter < bound` with the bound defined "
          "before the loop and the counter stepped by a loop-invariant "
          "amount in its body";
  emitRemark(loop.getLoc())
      << "scf.while not read as a loop over chunks: " << why
      << "; ttt reads a loop whose condition region only "
         "compares a counter with a bound (i < n) and whose "
         "body adds a step to that counter";
}

func::FuncOp linalg_raise::withWhileLoopsAsFor(func::FuncOp func) {
  if (!func.walk([](scf::WhileOp) { return WalkResult::interrupt(); })
           .wasInterrupted())
    return {};
  func::FuncOp copy = cloneBeside(func, "__ttt_while_as_for");
  bool normalized = normalizeWhileLoops(copy);
  // Post-order, inner loops first: uplifting an outer loop moves the inner
  // ones into the new scf.for, which keeps them.
  SmallVector<scf::WhileOp> loops;
  llvm::SmallPtrSet<Operation *, 32> old;
  copy.walk([&](Operation *op) {
    old.insert(op);
    if (auto loop = dyn_cast<scf::WhileOp>(op))
      loops.push_back(loop);
  });
  // A loop that advances by its chunk's length is read as the counted loop
  // it is (its step made the constant chunk size).
  for (scf::WhileOp loop : loops)
    if (std::optional<ChunkAdvance> advance = advanceByChunkLength(loop)) {
      OpBuilder b(loop);
      Value step =
          arith::ConstantIndexOp::create(b, loop->getLoc(), advance->chunk);
      old.insert(step.getDefiningOp());
      advance->add->setOperand(advance->lengthOperand, step);
    }
  IRRewriter rewriter(func.getContext());
  bool changed = false;
  for (scf::WhileOp loop : loops) {
    // Where a pattern driver would build: at the loop.
    rewriter.setInsertionPoint(loop);
    if (succeeded(scf::upliftWhileToForLoop(rewriter, loop)))
      changed = true;
    else
      explainUncountedLoop(loop);
  }
  if (!changed) {
    copy.erase();
    return {};
  }
  // The uplift computes each counter's value after its loop; unread, it goes.
  SmallVector<Operation *> made;
  copy.walk([&](Operation *op) {
    if (!old.contains(op))
      made.push_back(op);
  });
  for (Operation *op : llvm::reverse(made))
    if (isOpTriviallyDead(op))
      op->erase();
  // torch-mlir's loops carry their inputs along unchanged and clamp their
  // chunk offsets; as scf.for loops, both go.
  if (normalized)
    foldClampsByRange(copy);
  return copy;
}

/// Whether `loop` has a chunk of its own size: a value in its body that
/// depends on its induction variable through affine.min (the last chunk of a
/// sequence that the step does not divide).
static bool hasPartialLastChunk(scf::ForOp loop) {
  return loop.getBody()
      ->walk([&](affine::AffineMinOp min) {
        return llvm::is_contained(min.getOperands(), loop.getInductionVar())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

func::FuncOp linalg_raise::withPartialChunkLoopsUnrolled(func::FuncOp func) {
  // Unrolling is for chunk loops, not for long loops of another kind (such
  // as the tile loops of a tiled program), and it must not make a huge
  // function: at most kMaxChunks iterations a loop, kMaxOps ops in all.
  constexpr int64_t kMaxChunks = 4096;
  constexpr int64_t kMaxOps = 250000;
  auto unrollable = [](scf::ForOp loop) -> int64_t {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips || trips->ugt(kMaxChunks) || !hasPartialLastChunk(loop))
      return 0;
    return trips->getZExtValue();
  };
  // The outermost such loops (a nested one is copied with its parent).
  auto outermost = [&](func::FuncOp f) {
    SmallVector<scf::ForOp> loops;
    f.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      if (!unrollable(loop))
        return WalkResult::advance();
      loops.push_back(loop);
      return WalkResult::skip();
    });
    return loops;
  };
  SmallVector<scf::ForOp> loops = outermost(func);
  if (loops.empty())
    return {};
  int64_t ops = 0;
  for (scf::ForOp loop : loops) {
    int64_t body = 0;
    loop.getBody()->walk([&](Operation *) { ++body; });
    ops += unrollable(loop) * body;
  }
  if (ops > kMaxOps)
    return {};
  func::FuncOp copy = cloneBeside(func, "__ttt_unrolled");
  loops = outermost(copy);
  for (scf::ForOp loop : loops)
    if (failed(loopUnrollFull(loop))) {
      copy.erase();
      return {};
    }
  canonicalize(copy, RewritePatternSet(func.getContext()));
  return copy;
}
