//===- MapParallelLoops.cpp - scf.parallel onto blocks and threads --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-map-parallel-loops{tile-x tile-y}` (on buffers): every outermost
// scf.parallel without reductions that is not already on the device becomes
// a gpu.launch. For a nest of n parallel dims d0..d(n-1):
//   - thread x <- d(n-1) within a tile of tile-x, thread y <- d(n-2) within
//     a tile of tile-y (n == 1: tile-x * tile-y threads along d0);
//   - block x <- the linearized (d0, ..., d(n-3), tile of d(n-2), tile of
//     d(n-1)), last fastest: for the linattn lowering that is batch x heads
//     x chunks (x rows) x tiles. A grid-stride loop covers grids larger than
//     the hardware's limit; guards cover partial tiles;
//   - loops inside the nest (reductions, scf.for) run sequentially in each
//     thread.
// Sizes may all be dynamic: the launch sizes are computed on the host from
// the loop bounds.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPUMAPPARALLELLOOPS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPUMapParallelLoopsPass
    : public ttt::impl::TTTGPUMapParallelLoopsBase<TTTGPUMapParallelLoopsPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // What the rest of ttt-to-gpu needs from the context, so that any tool
    // (ttt-opt, the mlir-opt plug-in, ttt-run) can run the pipeline:
    // gpu-module-to-binary serializes kernels through the NVVM target and
    // the LLVM IR translation, and the host's gpu.binary / launch_func ops
    // translate through the GPU offloading interface.
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    uint64_t x = tileX, y = tileY;
    if (x == 0 || y == 0 || x * y > 1024) {
      getOperation().emitError()
          << "ttt-to-gpu: tile-x * tile-y must be 1 to 1024 threads per "
             "block, got "
          << x << " x " << y;
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> roots;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>() || op.getNumReductions())
        return;
      roots.push_back(op);
    });
    for (scf::ParallelOp op : roots)
      mapToLaunch(op);
  }

  void mapToLaunch(scf::ParallelOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    auto ceilDiv = [&](Value a, Value d) -> Value {
      Value one = constant(1);
      Value sum = arith::AddIOp::create(b, loc, a,
                                        arith::SubIOp::create(b, loc, d, one));
      return arith::DivUIOp::create(b, loc, sum, d);
    };
    Value zero = constant(0), one = constant(1);

    // Trip counts of each dimension (0 for empty ranges); steps are positive.
    unsigned n = op.getNumLoops();
    SmallVector<Value> trips;
    for (unsigned i = 0; i < n; ++i) {
      Value span = arith::SubIOp::create(b, loc, op.getUpperBound()[i],
                                         op.getLowerBound()[i]);
      span = arith::MaxSIOp::create(b, loc, span, zero);
      trips.push_back(ceilDiv(span, op.getStep()[i]));
    }
    int64_t threadsX = n >= 2 ? tileX : tileX * tileY;
    int64_t threadsY = n >= 2 ? tileY : 1;
    Value tx = constant(threadsX), ty = constant(threadsY);
    Value tilesX = ceilDiv(trips[n - 1], tx);
    Value tilesY = n >= 2 ? ceilDiv(trips[n - 2], ty) : one;
    Value blocks = arith::MulIOp::create(b, loc, tilesX, tilesY);
    for (unsigned i = 0; i + 2 < n; ++i)
      blocks = arith::MulIOp::create(b, loc, blocks, trips[i]);
    // At least one block (CUDA rejects empty grids), at most the limit of
    // gridDim.x; the grid-stride loop below covers the rest.
    Value grid = arith::MinUIOp::create(b, loc, blocks,
                                        constant((int64_t(1) << 31) - 1));
    grid = arith::MaxUIOp::create(b, loc, grid, one);

    auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, tx, ty, one);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);
    Value threadX = launch.getThreadIds().x;
    Value threadY = launch.getThreadIds().y;
    auto stride = scf::ForOp::create(b, loc, launch.getBlockIds().x, blocks,
                                     launch.getGridSize().x);
    b.setInsertionPointToStart(stride.getBody());
    // block -> (d0, ..., d(n-3), tile y, tile x), last fastest.
    Value rest = stride.getInductionVar();
    Value tileXIndex = arith::RemUIOp::create(b, loc, rest, tilesX);
    rest = arith::DivUIOp::create(b, loc, rest, tilesX);
    Value tileYIndex = arith::RemUIOp::create(b, loc, rest, tilesY);
    rest = arith::DivUIOp::create(b, loc, rest, tilesY);
    SmallVector<Value> index(n);
    for (int i = int(n) - 3; i >= 0; --i) {
      index[i] = i == 0 ? rest : arith::RemUIOp::create(b, loc, rest, trips[i]);
      if (i > 0)
        rest = arith::DivUIOp::create(b, loc, rest, trips[i]);
    }
    index[n - 1] = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, tileXIndex, tx), threadX);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         index[n - 1], trips[n - 1]);
    if (n >= 2) {
      index[n - 2] = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tileYIndex, ty), threadY);
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index[n - 2],
                                trips[n - 2]));
    }
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping mapping;
    for (unsigned i = 0; i < n; ++i) {
      Value scaled = arith::MulIOp::create(b, loc, index[i], op.getStep()[i]);
      mapping.map(op.getInductionVars()[i],
                  arith::AddIOp::create(b, loc, op.getLowerBound()[i], scaled)
                      .getResult());
    }
    for (Operation &inner : op.getBody()->without_terminator())
      b.clone(inner, mapping);
    op.erase();
  }
};
} // namespace
