//===- GPUPasses.h - the steps of the ttt-to-gpu pipeline -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The project's own steps of `ttt-to-gpu`, between upstream passes. They are
// registered (ttt-gpu-*) so that tests and debugging can run them alone, but
// they only make sense in the order the pipeline runs them.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_PIPELINES_GPUPASSES_H
#define TTT_LIB_PIPELINES_GPUPASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::ttt {

/// `ttt-gpu-bf16-operands` (on tensors or buffers): in every linalg.generic
/// with a reduction iterator (a contraction), rounds each f32 input operand of
/// an arith.mulf to bf16 and back (truncf + extf), so products see bf16
/// operands while sums stay f32.
std::unique_ptr<Pass> createGPUBf16OperandsPass();

/// `ttt-gpu-prepare-linalg` (on buffers): memref.copy becomes linalg.copy
/// (copies run as kernels too, not on the host), named linalg ops become
/// linalg.generic, and every generic's loops are interchanged so that its
/// parallel loops come first (then one kernel covers the op; a reduction in
/// front would otherwise stay a host loop launching a kernel per step).
std::unique_ptr<Pass> createGPUPrepareLinalgPass();

/// `ttt-gpu-map-parallel-loops{tile-x tile-y}` (on buffers): every outermost
/// scf.parallel without reductions that is not already on the device becomes
/// a gpu.launch. For a nest of n parallel dims d0..d(n-1):
///   - thread x <- d(n-1) within a tile of tile-x, thread y <- d(n-2) within
///     a tile of tile-y (n == 1: tile-x * tile-y threads along d0);
///   - block x <- the linearized (d0, ..., d(n-3), tile of d(n-2), tile of
///     d(n-1)), last fastest: for the linattn lowering that is batch x heads
///     x chunks (x rows) x tiles. A grid-stride loop covers grids larger than
///     the hardware's limit; guards cover partial tiles;
///   - loops inside the nest (reductions, scf.for) run sequentially in each
///     thread.
/// Sizes may all be dynamic: the launch sizes are computed on the host from
/// the loop bounds.
std::unique_ptr<Pass> createGPUMapParallelLoopsPass(unsigned tileX = 32,
                                                    unsigned tileY = 8);

/// `ttt-gpu-host-boundary` (on buffers, after bufferization and
/// deallocation): every public function copies its memref arguments, and
/// every function the globals (memref.get_global) it uses, into fresh
/// buffers at entry, so that kernels never see host-only memory once
/// memref.alloc means device-accessible managed memory. The copies are freed
/// before returning; arguments the program may write to are copied back
/// first.
std::unique_ptr<Pass> createGPUHostBoundaryPass();

/// `ttt-gpu-merge-modules` (after gpu-kernel-outlining, which makes one
/// gpu.module per kernel): moves every kernel into the first gpu.module, so
/// that the program has one binary (one ptxas run, one module load).
std::unique_ptr<Pass> createGPUMergeModulesPass();

/// `ttt-gpu-launch-to-loops`: every gpu.launch becomes sequential scf.for
/// loops over its blocks and threads on the host (kernels without barriers,
/// shared memory or async tokens only, as the mapping above makes them).
/// `ttt-to-gpu{emulate=true}` uses it to check the mapping numerically on
/// machines without a GPU.
std::unique_ptr<Pass> createGPULaunchToLoopsPass();

/// Registers the passes above.
void registerGPUPipelinePasses();

} // namespace mlir::ttt

#endif // TTT_LIB_PIPELINES_GPUPASSES_H
