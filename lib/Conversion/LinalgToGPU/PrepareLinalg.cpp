//===- PrepareLinalg.cpp - linalg ops ready to be kernels -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-prepare-linalg` (on buffers): memref.copy becomes linalg.copy
// (copies run as kernels too, not on the host), named linalg ops become
// linalg.generic, and every generic's loops are interchanged so that its
// parallel loops come first (then one kernel covers the op; a reduction in
// front would otherwise stay a host loop launching a kernel per step).
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPUPREPARELINALG
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPUPrepareLinalgPass
    : public ttt::impl::TTTGPUPrepareLinalgBase<TTTGPUPrepareLinalgPass> {
  static bool onHost(Operation *op) {
    return !op->getParentOfType<gpu::GPUModuleOp>() &&
           !op->getParentOfType<gpu::LaunchOp>();
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Copies run as kernels like every other linalg op, not on the host.
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp op) {
      if (onHost(op))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      rewriter.setInsertionPoint(op);
      linalg::CopyOp::create(rewriter, op.getLoc(), ValueRange{op.getSource()},
                             ValueRange{op.getTarget()});
      rewriter.eraseOp(op);
    }
    // Named ops as generics.
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp>(op) && onHost(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op->emitError("ttt-to-gpu: cannot generalize this op");
        return signalPassFailure();
      }
    }
    // Parallel loops first: convert-linalg-to-parallel-loops makes one
    // scf.parallel of the leading parallel loops, which becomes the kernel;
    // a reduction loop in front would stay a host loop around a launch per
    // step.
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (onHost(op))
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics) {
      // A full reduction has no parallel loop to map; one thread does it on
      // the device, in a one-iteration scf.parallel (rather than the host,
      // which would pull the data back from the device).
      if (op.getNumParallelLoops() == 0 && op.getNumLoops() > 0) {
        rewriter.setInsertionPoint(op);
        Location loc = op.getLoc();
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                              ValueRange{one}, ValueRange{one});
        op->moveBefore(single.getBody()->getTerminator());
        continue;
      }
      SmallVector<unsigned> order;
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      for (auto [i, kind] : llvm::enumerate(iterators))
        if (kind == utils::IteratorType::parallel)
          order.push_back(i);
      for (auto [i, kind] : llvm::enumerate(iterators))
        if (kind != utils::IteratorType::parallel)
          order.push_back(i);
      bool identity = true;
      for (auto [i, dim] : llvm::enumerate(order))
        identity &= i == dim;
      if (identity)
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op->emitError("ttt-to-gpu: cannot move the parallel loops first");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
