//===- VectorizableMath.cpp - math functions LLVM can vectorize -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libm's scalar expf keeps LLVM's loop vectorizer out of every loop that
// calls it. MLIR's polynomial approximations are arithmetic only, so the
// elementwise loops around them vectorize.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTVECTORIZABLEMATH
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTVectorizableMathPass
    : public ttt::impl::TTTVectorizableMathBase<TTTVectorizableMathPass> {
  void runOnOperation() override {
    // Only these: their approximations take f32 as it is (others would
    // first widen f16 and bf16, or are less accurate than libm by more).
    auto approximated = [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::ExpM1Op::getOperationName() ||
             name == math::TanhOp::getOperationName();
    };
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
