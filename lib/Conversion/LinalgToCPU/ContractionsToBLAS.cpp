//===- ContractionsToBLAS.cpp - fp32 contractions as GEMM calls -----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A linalg.generic on buffers that computes C += A * B (one reduction loop
// k, a body `acc + a * b`) is a GEMM per point of its batch loops. Each is
// rewritten into
//
//   scf.if (ttt_blas_available() != 0) {
//     scf.parallel (batch loops) { ttt_sgemm(M, N, K, A, B, C views) }
//   } else {
//     the original linalg.generic
//   }
//
// so the code runs at BLAS speed where a BLAS library loads, and runs its
// own loops where none does. The views are passed as addresses, offsets and
// strides (BlasRuntime.h); the runtime picks the transposes.
//
//===----------------------------------------------------------------------===//

#include "ContractionBody.h"
#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTCONTRACTIONSTOBLAS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;
using namespace mlir::ttt;

namespace {

constexpr StringLiteral kAvailable = "ttt_blas_available";
constexpr StringLiteral kSgemm = "ttt_sgemm";
constexpr StringLiteral kCublasAvailable = "ttt_cublas_available";
constexpr StringLiteral kCublasSgemm = "ttt_cublas_sgemm";
constexpr StringLiteral kCublasSgemmTF32 = "ttt_cublas_sgemm_tf32";

/// Which loops of a contraction are its GEMM's m, n and k; every other loop
/// is a batch loop. A GEMM without an m (n) loop has one row (column).
struct GemmLoops {
  std::optional<unsigned> m, n;
  unsigned k;
  SmallVector<unsigned> batch;
};

/// The result position at which `map` reads loop `dim` as a bare dimension,
/// when it reads `dim` nowhere else.
std::optional<unsigned> bareResultOf(AffineMap map, unsigned dim) {
  std::optional<unsigned> found;
  for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(dim))
      continue;
    auto bare = dyn_cast<AffineDimExpr>(expr);
    if (!bare || found)
      return std::nullopt;
    found = pos;
  }
  return found;
}

bool isF32StridedBuffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isF32() && type.isStrided();
}

FailureOr<GemmLoops> matchGemm(linalg::GenericOp op, RewriterBase &rewriter) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return rewriter.notifyMatchFailure(op, "not C += A * B on buffers");
  for (Value operand : op->getOperands())
    if (!isF32StridedBuffer(operand))
      return rewriter.notifyMatchFailure(op, "an operand is not a strided "
                                             "f32 memref");
  if (!isMultiplyAccumulate(op))
    return rewriter.notifyMatchFailure(op, "body is not acc + a * b");
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (reductions.size() != 1)
    return rewriter.notifyMatchFailure(op, "not exactly one reduction loop");

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap mapA = maps[0], mapB = maps[1], mapC = maps[2];
  GemmLoops loops;
  loops.k = reductions.front();
  unsigned numLoops = op.getNumLoops();
  // C has one bare result per parallel loop, so each is a GEMM row, column
  // or batch index.
  if (mapC.getNumResults() != numLoops - 1 || !mapC.isProjectedPermutation())
    return rewriter.notifyMatchFailure(op, "C is not indexed by every "
                                           "parallel loop once");
  if (mapC.isFunctionOfDim(loops.k))
    return rewriter.notifyMatchFailure(op, "C is indexed by the reduction");
  if (!bareResultOf(mapA, loops.k) || !bareResultOf(mapB, loops.k))
    return rewriter.notifyMatchFailure(op, "A or B reads k other than as a "
                                           "dimension of its own");
  // The GEMM's rows and columns: the innermost loops (in C's order) that
  // only A, respectively only B, reads as a dimension of its own.
  for (AffineExpr expr : mapC.getResults()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    bool inA = mapA.isFunctionOfDim(dim), inB = mapB.isFunctionOfDim(dim);
    if (inA && !inB && bareResultOf(mapA, dim)) {
      if (loops.m)
        loops.batch.push_back(*loops.m);
      loops.m = dim;
    } else if (inB && !inA && bareResultOf(mapB, dim)) {
      if (loops.n)
        loops.batch.push_back(*loops.n);
      loops.n = dim;
    } else {
      loops.batch.push_back(dim);
    }
  }
  // Outer loops first, as the op nests them.
  llvm::sort(loops.batch);
  return loops;
}

/// The linalg.fill with 0 that writes C just before `op` (with only pure
/// ops in between), if any: the GEMM can then overwrite C (beta = 0)
/// instead of adding to it.
linalg::FillOp findZeroFillOfC(linalg::GenericOp op) {
  Value c = op.getDpsInits()[0];
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getDpsInits()[0] != c)
        return {};
      auto value = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
      auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : FloatAttr();
      return zero && zero.getValue().isPosZero() ? fill : linalg::FillOp();
    }
    if (!isPure(prev))
      return {};
  }
  return {};
}

func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

/// One operand's view of the GEMM at a point of the batch loops: its
/// buffer's address and, in elements, the offset of its (0, 0) element and
/// its row and column strides.
struct View {
  Value address, offset, rowStride, colStride;
};

class GemmEmitter {
public:
  GemmEmitter(OpBuilder &b, Location loc)
      : b(b), loc(loc), zero(arith::ConstantIndexOp::create(b, loc, 0)) {}

  Value getZero() const { return zero; }

  /// The view of `buffer`, read through `map` at the batch point `point`
  /// (zero for m, n and k), with rows and columns the loops `row` and `col`
  /// (stride zero for an absent one).
  View view(Value buffer, AffineMap map, ArrayRef<Value> point,
            std::optional<unsigned> row, std::optional<unsigned> col) {
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    View v;
    v.address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    v.offset = metadata.getOffset();
    v.rowStride = zero;
    v.colStride = zero;
    auto isLoop = [&](AffineExpr expr, std::optional<unsigned> loop) {
      return loop && expr == b.getAffineDimExpr(*loop);
    };
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      Value stride = metadata.getStrides()[pos];
      if (isLoop(expr, row)) {
        v.rowStride = stride;
        continue;
      }
      if (isLoop(expr, col)) {
        v.colStride = stride;
        continue;
      }
      // m, n and k only appear as bare dimensions: this result is a
      // function of the batch loops alone.
      Value index;
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        index = point[dim.getPosition()];
      else
        index = affine::AffineApplyOp::create(
            b, loc, AffineMap::get(map.getNumDims(), 0, expr), point);
      Value step = arith::MulIOp::create(b, loc, index, stride);
      v.offset = arith::AddIOp::create(b, loc, v.offset, step);
    }
    return v;
  }

private:
  OpBuilder &b;
  Location loc;
  Value zero;
};

void rewriteToCall(linalg::GenericOp op, const GemmLoops &loops,
                   func::FuncOp available, func::FuncOp sgemm,
                   bool sequentialBatch, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  linalg::FillOp zeroFill = findZeroFillOfC(op);
  rewriter.setInsertionPoint(op);
  Value accumulate =
      arith::ConstantIndexOp::create(rewriter, loc, zeroFill ? 0 : 1);
  Value flag =
      func::CallOp::create(rewriter, loc, available, ValueRange{}).getResult(0);
  Value zeroI32 = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  Value haveBlas = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ne, flag, zeroI32);
  auto branch = scf::IfOp::create(rewriter, loc, haveBlas,
                                  /*withElseRegion=*/true);

  // Without BLAS: the op itself, which later passes turn into loops; a zero
  // fill of C before it moves along, and BLAS overwrites C instead.
  rewriter.setInsertionPointToStart(branch.elseBlock());
  if (zeroFill)
    rewriter.moveOpBefore(zeroFill, branch.elseBlock(),
                          branch.elseBlock()->begin());
  rewriter.clone(*op);

  rewriter.setInsertionPointToStart(branch.thenBlock());
  SmallVector<Range> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(rewriter, loc);
  auto size = [&](std::optional<unsigned> dim) -> Value {
    if (!dim)
      return arith::ConstantIndexOp::create(rewriter, loc, 1);
    return getValueOrCreateConstantIndexOp(rewriter, loc, ranges[*dim].size);
  };
  Value m = size(loops.m);
  Value n = size(loops.n);
  Value k = size(loops.k);
  SmallVector<Value> lower, upper, steps;
  for (unsigned dim : loops.batch) {
    lower.push_back(arith::ConstantIndexOp::create(rewriter, loc, 0));
    upper.push_back(size(dim));
    steps.push_back(arith::ConstantIndexOp::create(rewriter, loc, 1));
  }

  auto emitCall = [&](OpBuilder &b, Location nestedLoc, ValueRange ivs) {
    GemmEmitter emitter(b, nestedLoc);
    SmallVector<Value> point(op.getNumLoops(), emitter.getZero());
    for (auto [dim, iv] : llvm::zip_equal(loops.batch, ivs))
      point[dim] = iv;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    View a =
        emitter.view(op.getDpsInputs()[0], maps[0], point, loops.m, loops.k);
    View bv =
        emitter.view(op.getDpsInputs()[1], maps[1], point, loops.k, loops.n);
    View c =
        emitter.view(op.getDpsInits()[0], maps[2], point, loops.m, loops.n);
    func::CallOp::create(
        b, nestedLoc, sgemm,
        ValueRange{m, n, k, a.address, a.offset, a.rowStride, a.colStride,
                   bv.address, bv.offset, bv.rowStride, bv.colStride, c.address,
                   c.offset, c.rowStride, c.colStride, accumulate});
  };
  if (loops.batch.empty()) {
    emitCall(rewriter, loc, {});
  } else if (sequentialBatch) {
    // Calls made by the host one after the other, each a whole GEMM on the
    // device: a parallel loop here would become a kernel of its own.
    scf::buildLoopNest(rewriter, loc, lower, upper, steps, emitCall);
  } else {
    scf::ParallelOp::create(
        rewriter, loc, lower, upper, steps,
        [&](OpBuilder &b, Location nestedLoc, ValueRange ivs) {
          emitCall(b, nestedLoc, ivs);
        });
  }
  rewriter.eraseOp(op);
}

struct TTTContractionsToBLASPass
    : public ttt::impl::TTTContractionsToBLASBase<TTTContractionsToBLASPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (library != "blas" && library != "cublas" && library != "cublas-tf32") {
      module.emitError("ttt-contractions-to-blas: unknown library '")
          << library << "' (expected 'blas', 'cublas' or 'cublas-tf32')";
      return signalPassFailure();
    }
    bool cublas = library != "blas";
    MLIRContext *ctx = module.getContext();
    IRRewriter rewriter(ctx);
    // Named contractions (linalg.matmul, linalg.batch_matmul, ...) as the
    // generics read below; fills and other named ops stay as they are.
    SmallVector<linalg::LinalgOp> named;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp>(op) && op.hasPureBufferSemantics() &&
          linalg::isaContractionOpInterface(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    SmallVector<std::pair<linalg::GenericOp, GemmLoops>> gemms;
    module.walk([&](linalg::GenericOp op) {
      FailureOr<GemmLoops> loops = matchGemm(op, rewriter);
      if (succeeded(loops))
        gemms.emplace_back(op, *loops);
    });
    if (gemms.empty())
      return;
    Type index = IndexType::get(ctx);
    auto available =
        declare(module, cublas ? kCublasAvailable : kAvailable,
                FunctionType::get(ctx, {}, {IntegerType::get(ctx, 32)}));
    auto sgemm =
        declare(module,
                library == "cublas-tf32" ? kCublasSgemmTF32
                : cublas                 ? kCublasSgemm
                                         : kSgemm,
                FunctionType::get(ctx, SmallVector<Type>(16, index), {}));
    for (auto &[op, loops] : gemms)
      rewriteToCall(op, loops, available, sgemm, /*sequentialBatch=*/cublas,
                    rewriter);
  }
};

} // namespace
