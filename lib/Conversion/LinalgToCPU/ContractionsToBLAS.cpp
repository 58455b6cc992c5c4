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
// strides (BlasRuntime.h); the runtime picks the transposes. A GEMM that
// no parallel loop encloses gets the threads through blocks of its rows (or
// columns) instead, one call each, as the parallel loop's last dimension.
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

/// Multiply-adds below which a GEMM runs as one call: an OpenMP region costs
/// a few microseconds, a GEMM of 2^21 multiply-adds about 20 on one core.
constexpr int64_t kMinSplitWork = int64_t(1) << 21;
/// The fewest rows (columns) a block gets: BLAS kernels lose little on
/// blocks of 64 rows against whole 512-row chunks, and much below.
constexpr int64_t kMinBlockSize = 64;

/// A GEMM to be cut into blocks of its rows (or columns), each its own call.
struct BlockSplit {
  bool rows;      // split along m (else n)
  int64_t wanted; // blocks that would keep every thread busy
};

/// Whether `op`'s GEMMs are cut so that their calls keep `threads` cores
/// busy: only a GEMM that no parallel loop encloses (its program has no
/// other work for the cores meanwhile), with fewer batch points than
/// threads. How many blocks is decided at run time (a chunk's length may be
/// known only then): none below kMinSplitWork, none under kMinBlockSize.
std::optional<BlockSplit> chooseBlockSplit(linalg::GenericOp op,
                                           const GemmLoops &loops,
                                           unsigned threads) {
  if (threads < 2 || op->getParentOfType<scf::ParallelOp>() ||
      op->getParentOfType<scf::ForallOp>())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t points = 1;
  for (unsigned dim : loops.batch) {
    if (ShapedType::isDynamic(ranges[dim]))
      return std::nullopt;
    points *= ranges[dim];
  }
  if (points >= int64_t(threads))
    return std::nullopt;
  auto size = [&](std::optional<unsigned> dim) {
    return dim ? ranges[*dim] : int64_t(1);
  };
  int64_t m = size(loops.m), n = size(loops.n), k = size(loops.k);
  if (!llvm::any_of(ArrayRef<int64_t>{m, n, k}, ShapedType::isDynamic) &&
      points * m * n * k < kMinSplitWork)
    return std::nullopt;
  BlockSplit split;
  // The longer side; one of run-time size (a chunk's tokens) over a static
  // one.
  split.rows =
      ShapedType::isDynamic(m) || (!ShapedType::isDynamic(n) && m >= n);
  int64_t side = split.rows ? m : n;
  if (!ShapedType::isDynamic(side) && side < 2 * kMinBlockSize)
    return std::nullopt;
  split.wanted = llvm::divideCeil(int64_t(threads), points);
  return split;
}

void rewriteToCall(linalg::GenericOp op, const GemmLoops &loops,
                   std::optional<BlockSplit> split, func::FuncOp available,
                   func::FuncOp sgemm, bool sequentialBatch,
                   RewriterBase &rewriter) {
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

  // One call per batch point and, with `blockSize` set, per block of
  // `blockSize` rows (columns), the block index the last induction variable.
  auto emitCall = [&](OpBuilder &b, Location nestedLoc, ValueRange ivs,
                      Value blockSize) {
    GemmEmitter emitter(b, nestedLoc);
    SmallVector<Value> point(op.getNumLoops(), emitter.getZero());
    for (auto [dim, iv] :
         llvm::zip_equal(loops.batch, ivs.take_front(loops.batch.size())))
      point[dim] = iv;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    View a =
        emitter.view(op.getDpsInputs()[0], maps[0], point, loops.m, loops.k);
    View bv =
        emitter.view(op.getDpsInputs()[1], maps[1], point, loops.k, loops.n);
    View c =
        emitter.view(op.getDpsInits()[0], maps[2], point, loops.m, loops.n);
    Value rows = m, cols = n;
    if (blockSize) {
      // Block r: rows (columns) [r * blockSize, min((r + 1) * blockSize,
      // size)) of A and C (B and C).
      Value first = arith::MulIOp::create(b, nestedLoc, ivs.back(), blockSize);
      Value left =
          arith::SubIOp::create(b, nestedLoc, split->rows ? m : n, first);
      Value extent = arith::MinSIOp::create(b, nestedLoc, blockSize, left);
      auto advance = [&](View &view, Value stride) {
        Value step = arith::MulIOp::create(b, nestedLoc, first, stride);
        view.offset = arith::AddIOp::create(b, nestedLoc, view.offset, step);
      };
      if (split->rows) {
        rows = extent;
        advance(a, a.rowStride);
        advance(c, c.rowStride);
      } else {
        cols = extent;
        advance(bv, bv.colStride);
        advance(c, c.colStride);
      }
    }
    func::CallOp::create(
        b, nestedLoc, sgemm,
        ValueRange{rows, cols, k, a.address, a.offset, a.rowStride, a.colStride,
                   bv.address, bv.offset, bv.rowStride, bv.colStride, c.address,
                   c.offset, c.rowStride, c.colStride, accumulate});
  };
  // The calls over the batch points and `blocks` blocks (none: whole GEMMs).
  auto emitCalls = [&](OpBuilder &b, Location l, Value blocks,
                       Value blockSize) {
    SmallVector<Value> lo(lower), up(upper), st(steps);
    if (blocks) {
      lo.push_back(arith::ConstantIndexOp::create(b, l, 0));
      up.push_back(blocks);
      st.push_back(arith::ConstantIndexOp::create(b, l, 1));
    }
    auto body = [&](OpBuilder &nested, Location nestedLoc, ValueRange ivs) {
      emitCall(nested, nestedLoc, ivs, blockSize);
    };
    if (lo.empty()) {
      body(b, l, {});
    } else if (sequentialBatch) {
      // Calls made by the host one after the other, each a whole GEMM on
      // the device: a parallel loop here would become a kernel of its own.
      scf::buildLoopNest(b, l, lo, up, st, body);
    } else {
      scf::ParallelOp::create(b, l, lo, up, st, body);
    }
  };
  if (!split) {
    emitCalls(rewriter, loc, Value(), Value());
    rewriter.eraseOp(op);
    return;
  }
  // blocks = min(wanted, side / kMinBlockSize), cut only when that is two
  // or more and the GEMMs have kMinSplitWork multiply-adds in all (static
  // sizes fold this to one branch).
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  Value side = split->rows ? m : n;
  Value byLength =
      arith::DivSIOp::create(rewriter, loc, side, constant(kMinBlockSize));
  Value blocks =
      arith::MinSIOp::create(rewriter, loc, byLength, constant(split->wanted));
  Value work = arith::MulIOp::create(rewriter, loc, m, n);
  work = arith::MulIOp::create(rewriter, loc, work, k);
  for (Value points : upper)
    work = arith::MulIOp::create(rewriter, loc, work, points);
  Value enough = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                       work, constant(kMinSplitWork));
  Value several = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::sgt, blocks, constant(1));
  Value cut = arith::AndIOp::create(rewriter, loc, enough, several);
  scf::IfOp::create(
      rewriter, loc, cut,
      [&](OpBuilder &b, Location l) {
        Value blockSize = arith::CeilDivSIOp::create(b, l, side, blocks);
        emitCalls(b, l, blocks, blockSize);
        scf::YieldOp::create(b, l);
      },
      [&](OpBuilder &b, Location l) {
        emitCalls(b, l, Value(), Value());
        scf::YieldOp::create(b, l);
      });
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
    for (auto &[op, loops] : gemms) {
      std::optional<BlockSplit> split;
      if (!cublas)
        split = chooseBlockSplit(op, loops, threads);
      rewriteToCall(op, loops, split, available, sgemm,
                    /*sequentialBatch=*/cublas, rewriter);
    }
  }
};

} // namespace
