//===- FuseElementwise.cpp - elementwise fusion that keeps GEMMs ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream's elementwise fusion, with one restriction: nothing is fused into
// an op with a reduction loop. A contraction whose operand is computed in
// its body is no longer a GEMM (ttt-contractions-to-blas could not call
// BLAS for it), and its producer would be recomputed once per reduction
// step. A producer is fused only into its only user, so no work is
// duplicated.
//
// A negated operand of a contraction moves to its result when that is the
// smaller tensor: k^T (-v) over a chunk of tokens becomes -(k^T v), a
// negation of a state-sized matrix instead of a chunk-sized one, which then
// fuses into the update that consumes it. Negation is exact, so the values
// do not change.
//
//===----------------------------------------------------------------------===//

#include "ContractionBody.h"
#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTFUSEELEMENTWISE
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
bool fusesIntoLoops(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  return producer && producer->hasOneUse() && consumer &&
         consumer.getNumReductionLoops() == 0;
}

/// The value a generic negates, when it is `yield -x` over identity maps.
Value negatedInput(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto neg = yield.getValues().front().getDefiningOp<arith::NegFOp>();
  if (!neg || neg.getOperand() != body.getArgument(0))
    return {};
  return op.getDpsInputs()[0];
}

/// The product of loop sizes; a dynamic size (a chunk's token count, which a
/// min makes dynamic) counts as larger than any static one.
int64_t timesOrLarge(int64_t product, int64_t size) {
  constexpr int64_t large = std::numeric_limits<int64_t>::max();
  if (ShapedType::isDynamic(size) || product == large ||
      (size != 0 && product > large / size))
    return large;
  return product * size;
}

/// C = A (-B) with C zero-filled first, as C = -(A B), where C has fewer
/// elements than B (the loops B spans and C does not, the reductions, are
/// longer than those C spans and B does not). The same for a negated A.
struct NegationThroughContraction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
        !ttt::isMultiplyAccumulate(op))
      return rewriter.notifyMatchFailure(op, "not a contraction acc + a * b");
    auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getDpsInputs()[0], m_PosZeroFloat()))
      return rewriter.notifyMatchFailure(op, "C is not zero-filled");
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    AffineMap mapC = op.getIndexingMapsArray()[2];
    for (unsigned i = 0; i < 2; ++i) {
      auto producer = op.getDpsInputs()[i].getDefiningOp<linalg::GenericOp>();
      Value source = producer ? negatedInput(producer) : Value();
      if (!source || !producer->hasOneUse())
        continue;
      // Elements of the operand against elements of C, over the loops that
      // only one of them spans.
      AffineMap map = op.getIndexingMapsArray()[i];
      int64_t onlyOperand = 1, onlyC = 1;
      for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
        bool inOperand = map.isFunctionOfDim(d), inC = mapC.isFunctionOfDim(d);
        if (inOperand && !inC)
          onlyOperand = timesOrLarge(onlyOperand, ranges[d]);
        if (inC && !inOperand)
          onlyC = timesOrLarge(onlyC, ranges[d]);
      }
      if (onlyC >= onlyOperand)
        continue;
      Location loc = op.getLoc();
      rewriter.modifyOpInPlace(op, [&] { op->setOperand(i, source); });
      rewriter.setInsertionPointAfter(op);
      Value result = op.getResult(0);
      auto type = cast<RankedTensorType>(result.getType());
      // Sized from C's fill, not the result: every use of the result but
      // the negation's becomes the negation's.
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, op.getDpsInits()[0]);
      Value init =
          tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
      AffineMap id = rewriter.getMultiDimIdentityMap(
          static_cast<unsigned>(type.getRank()));
      auto negated = linalg::GenericOp::create(
          rewriter, loc, type, ValueRange{result}, ValueRange{init},
          ArrayRef<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            Value neg = arith::NegFOp::create(b, l, args[0]);
            linalg::YieldOp::create(b, l, neg);
          });
      rewriter.replaceAllUsesExcept(result, negated.getResult(0), negated);
      rewriter.eraseOp(producer);
      return success();
    }
    return rewriter.notifyMatchFailure(
        op, "no negated operand larger than the result");
  }
};

struct TTTFuseElementwisePass
    : public ttt::impl::TTTFuseElementwiseBase<TTTFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, fusesIntoLoops);
    patterns.add<NegationThroughContraction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
