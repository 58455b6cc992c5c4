//===- LaunchToLoops.cpp - gpu.launch as host loops -----------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-launch-to-loops`: every gpu.launch becomes sequential scf.for
// loops over its blocks and threads on the host (kernels without barriers,
// shared memory or async tokens only, as ttt-gpu-map-parallel-loops makes
// them). `ttt-to-gpu{emulate=true}` uses it to check the mapping
// numerically on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPULAUNCHTOLOOPS
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPULaunchToLoopsPass
    : public ttt::impl::TTTGPULaunchToLoopsBase<TTTGPULaunchToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
          !launch.getWorkgroupAttributions().empty() ||
          !launch.getPrivateAttributions().empty() ||
          !llvm::hasSingleElement(launch.getBody())) {
        launch.emitError("ttt-gpu-launch-to-loops: only synchronous "
                         "single-block launches without attributions");
        return signalPassFailure();
      }
      bool hasBarrier = false;
      launch.walk([&](gpu::BarrierOp) { hasBarrier = true; });
      if (hasBarrier) {
        launch.emitError("ttt-gpu-launch-to-loops: barriers need threads");
        return signalPassFailure();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      IRMapping mapping;
      gpu::KernelDim3 gridArgs = launch.getGridSize();
      gpu::KernelDim3 blockArgs = launch.getBlockSize();
      mapping.map(gridArgs.x, grid.x);
      mapping.map(gridArgs.y, grid.y);
      mapping.map(gridArgs.z, grid.z);
      mapping.map(blockArgs.x, block.x);
      mapping.map(blockArgs.y, block.y);
      mapping.map(blockArgs.z, block.z);
      gpu::KernelDim3 blockIds = launch.getBlockIds();
      gpu::KernelDim3 threadIds = launch.getThreadIds();
      std::pair<Value, Value> loops[] = {
          {blockIds.z, grid.z},   {blockIds.y, grid.y},
          {blockIds.x, grid.x},   {threadIds.z, block.z},
          {threadIds.y, block.y}, {threadIds.x, block.x}};
      for (auto [id, size] : loops) {
        auto loop = scf::ForOp::create(b, loc, zero, size, one);
        mapping.map(id, loop.getInductionVar());
        b.setInsertionPointToStart(loop.getBody());
      }
      for (Operation &op : launch.getBody().front().without_terminator())
        b.clone(op, mapping);
      launch.erase();
    }
  }
};
} // namespace
