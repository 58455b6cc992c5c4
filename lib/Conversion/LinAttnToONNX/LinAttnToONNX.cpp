//===- LinAttnToONNX.cpp - linattn ops as standard ONNX nodes -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites linattn ops inside an onnx.graph into default-domain onnx.node ops
// (opset 17) that compute the chunk-parallel form. Every op is built as the
// linalg lowering builds it (LinAttnForms.h and LinAttnAlgorithms.h), here
// as ONNX nodes (OnnxAlgebra.h):
//
//   chunked view   Pad T up to N * C with zeros, Reshape to [B, H, N, C, ..]
//   chunk_reduce   MatMul(K_c^T, eta V_c) * factor (/ chunk lengths)
//   chunk_mean     ReduceSum over each chunk / chunk lengths
//   scan           CumSum (additive), or a Hillis-Steele scan in a Loop over
//                  doubling offsets (decayed, affine, residual affine)
//   state_transform  Newton-Schulz with batched MatMuls
//   chunk_apply    MatMul(Q_c, S_c), Reshape back and Slice to T tokens
//
// Sizes that are dynamic (B, T and so N) are computed at run time from Shape
// nodes, so one exported model serves every batch and sequence length.
// Intermediate results get ranked types with dynamic dims; the value that
// replaces a linattn op gets the op's own result type.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/LinAttnToONNX/LinAttnToONNX.h"
#include "OnnxAlgebra.h"
#include "ttt/Conversion/Passes.h"
#include "ttt/Conversion/Utils/LinAttnAlgorithms.h"
#include "ttt/Conversion/Utils/LinAttnForms.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"
#include "ttt/Dialect/LinAttn/Transforms/Passes.h"
#include "ttt/Dialect/ONNX/IR/ONNXBuilder.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_LINATTNTOONNX
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::linattn;
namespace tonnx = mlir::ttt::onnx;
using tonnx::OnnxAlgebra;
using tonnx::OnnxBuilder;
using tonnx::OnnxMath;

namespace {

//===----------------------------------------------------------------------===//
// Support checks
//===----------------------------------------------------------------------===//

bool hasStaticDims(Value v, ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(v.getType());
  return llvm::all_of(dims, [&](int64_t d) { return !type.isDynamicDim(d); });
}

} // namespace

bool mlir::ttt::canExportToONNX(Operation *op, std::string &why) {
  // linattn ops verify their float tensor types; the checks below are about
  // the forms the patterns support.
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](FeatureMapOp) { return true; })
      .Case([&](ChunkReduceOp) { return true; })
      .Case([&](ChunkMeanOp) { return true; })
      .Case([&](ScanOp scan) {
        if (scan.getKind() == ScanKind::residual_affine &&
            !hasStaticDims(scan.getInputs(), {3})) {
          why = "a residual affine scan needs a static state row count (the "
                "identity of I + A is a constant)";
          return false;
        }
        return true;
      })
      .Case([&](StateTransformOp st) {
        if (!hasStaticDims(st.getInputs(), {3, 4})) {
          why = "Newton-Schulz needs static state dims (whether to transpose "
                "depends on them)";
          return false;
        }
        return true;
      })
      .Case([&](ChunkApplyOp) { return true; })
      // Decomposed into the chunk ops (linattn-decompose) on the way.
      .Case([&](AttentionOp) { return true; })
      // A 16-bit layer's operands widened for its f32 form, its output
      // rounded back.
      .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *cast) {
        if (isa<RankedTensorType>(cast->getResult(0).getType()))
          return true;
        why = "a float conversion of a scalar has no ONNX form here";
        return false;
      })
      .Default([&](Operation *) {
        why = "it has no ONNX form (only linattn ops are rewritten)";
        return false;
      });
}

namespace {

/// Common prologue of every pattern: the op must be inside an onnx.graph and
/// supported.
LogicalResult checkExportable(Operation *op, PatternRewriter &rewriter) {
  if (!op->getParentOfType<tonnx::GraphOp>())
    return rewriter.notifyMatchFailure(op, "not inside an onnx.graph");
  std::string why;
  if (!canExportToONNX(op, why))
    return rewriter.notifyMatchFailure(op, why);
  return success();
}

/// The frame every pattern shares: check that the op can go, build its
/// value with an OnnxBuilder on the op's element type
/// (`Derived::build(b, op)`), and replace the op by it.
template <typename Derived, typename Op>
struct ToONNXPattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const final {
    if (failed(checkExportable(op, rewriter)))
      return failure();
    OnnxBuilder b(rewriter, op.getLoc(), getElementTypeOrSelf(op.getType()));
    Value result = static_cast<const Derived *>(this)->build(b, op);
    rewriter.replaceOp(op, b.retype(result, op.getType()));
    return success();
  }
};

/// Builds a linattn op on the shared algebra (LinAttnForms.h), as nodes.
template <typename Op, Value (*form)(TensorAlgebra &, Op)>
struct FormToONNX : ToONNXPattern<FormToONNX<Op, form>, Op> {
  using ToONNXPattern<FormToONNX<Op, form>, Op>::ToONNXPattern;
  Value build(OnnxBuilder &b, Op op) const {
    OnnxAlgebra t(b, "");
    return form(t, op);
  }
};

using FeatureMapToONNX = FormToONNX<FeatureMapOp, buildFeatureMap>;
using ChunkReduceToONNX = FormToONNX<ChunkReduceOp, buildChunkReduce>;
using ChunkMeanToONNX = FormToONNX<ChunkMeanOp, buildChunkMean>;
using StateTransformToONNX = FormToONNX<StateTransformOp, buildStateTransform>;
using ChunkApplyToONNX = FormToONNX<ChunkApplyOp, buildChunkApply>;

/// A float conversion of a whole tensor: one Cast node.
template <typename Op> struct CastToONNX : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const final {
    if (failed(checkExportable(op, rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    OnnxBuilder b(rewriter, op.getLoc(), type.getElementType());
    rewriter.replaceOp(op, b.node("Cast", {op.getIn()}, type,
                                  {b.attr("to", OnnxBuilder::floatTypeCode(
                                                    type.getElementType()))}));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// scan
//===----------------------------------------------------------------------===//

/// The scan as LinAttnForms builds it (CumSum for an additive scan, a Loop
/// over doubling offsets for the others), with its Loop's names made unique.
struct ScanToONNX : ToONNXPattern<ScanToONNX, ScanOp> {
  using ToONNXPattern::ToONNXPattern;
  Value build(OnnxBuilder &b, ScanOp op) const {
    OnnxAlgebra t(b, loopPrefix(op));
    return buildScan(t, op);
  }

  /// A name prefix for the Loop body's inputs and outputs, unique in the
  /// graph: ONNX names must not repeat across a graph and its subgraphs.
  /// It numbers the graph's Loop nodes: those already there are counted once
  /// per graph (a walk per scan made the pass quadratic in the graph), and
  /// each Loop built here takes the next number.
  std::string loopPrefix(ScanOp op) const {
    Operation *graph = op->getParentOfType<tonnx::GraphOp>();
    auto [it, inserted] = loopCounts.try_emplace(graph, 0);
    if (inserted)
      graph->walk([&, &count = it->second](tonnx::NodeOp node) {
        if (node.getOpType() == "Loop")
          ++count;
      });
    return "linattn_scan" + std::to_string(it->second++) + "_";
  }

  /// Loop nodes per onnx.graph, for loopPrefix (patterns are const while
  /// they rewrite; the pattern set lives for one run of the pass).
  mutable llvm::DenseMap<Operation *, unsigned> loopCounts;
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

bool isONNXOp(Operation *op) {
  return isa<tonnx::ONNXDialect>(op->getDialect());
}

struct LinAttnToONNXPass : ttt::impl::LinAttnToONNXBase<LinAttnToONNXPass> {
  void runOnOperation() override {
    SmallVector<tonnx::GraphOp> graphs;
    getOperation()->walk([&](tonnx::GraphOp g) { graphs.push_back(g); });

    // Check every op first, so that a failure leaves the IR untouched.
    bool exportable = true;
    for (tonnx::GraphOp graph : graphs)
      graph.walk([&](Operation *op) {
        if (op == graph || isONNXOp(op))
          return;
        std::string why;
        if (!canExportToONNX(op, why)) {
          op->emitError("linattn-to-onnx: cannot rewrite '")
              << op->getName() << "' into ONNX nodes: " << why;
          exportable = false;
        }
      });
    if (!exportable)
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    populateLinAttnToONNXPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.enableFolding(false);
    // Loop bodies must keep their signature (iteration number and condition
    // included, used or not); nothing here needs region simplification.
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    // Only the ops to rewrite (and what their rewrite creates): the graph's
    // own nodes stay exactly as they are, unused ones included.
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    for (tonnx::GraphOp graph : graphs) {
      SmallVector<Operation *> ops;
      graph.walk([&](Operation *op) {
        if (op != graph && !isONNXOp(op))
          ops.push_back(op);
      });
      if (ops.empty())
        continue;
      if (failed(applyOpPatternsGreedily(ops, frozen, config))) {
        graph.emitError("linattn-to-onnx: the rewrite did not converge");
        return signalPassFailure();
      }
      WalkResult left = graph.walk([](Operation *op) {
        if (isONNXOp(op))
          return WalkResult::advance();
        op->emitError("linattn-to-onnx: '")
            << op->getName() << "' is left inside the onnx.graph";
        return WalkResult::interrupt();
      });
      if (left.wasInterrupted())
        return signalPassFailure();
    }
  }
};

} // namespace

void mlir::ttt::populateLinAttnToONNXPatterns(RewritePatternSet &patterns) {
  patterns.add<FeatureMapToONNX, ChunkReduceToONNX, ChunkMeanToONNX, ScanToONNX,
               StateTransformToONNX, ChunkApplyToONNX,
               CastToONNX<arith::ExtFOp>, CastToONNX<arith::TruncFOp>>(
      patterns.getContext());
  linattn::populateDecomposePatterns(patterns);
}
