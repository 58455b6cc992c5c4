//===- Pipelines.h - the ttt pass pipelines ---------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Named pipelines that take ttt programs to something executable. They are
// built here once and used by ttt-opt (--ttt-to-cpu), the mlir-opt plug-in
// and ttt-run, so every tool compiles the same way.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_PIPELINES_PIPELINES_H
#define TTT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::ttt {

/// Options of the `ttt-to-cpu` pipeline.
struct TTTToCPUOptions : public PassPipelineOptions<TTTToCPUOptions> {
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run the parallel loops of linalg ops as OpenMP "
                     "parallel regions (the program then needs libomp)"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Threads per OpenMP parallel region; 0 leaves the "
                     "choice to the OpenMP runtime (OMP_NUM_THREADS)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer-consumer chains of elementwise linalg "
                     "ops before bufferization, saving temporaries"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> runtimeVerification{
      *this, "runtime-verification",
      llvm::cl::desc("Insert run-time checks of op preconditions (such as "
                     "matching dynamic sizes); a failing check prints the op "
                     "and aborts"),
      llvm::cl::init(false)};
};

/// Lowers the project's own dialects (ttt, linattn) to upstream
/// func/tensor/linalg/scf/arith/math ops. The first step of every pipeline.
void addTTTToUpstreamPasses(OpPassManager &pm);

/// Builds `ttt-to-cpu`: from a module of func/tensor/linalg/scf/arith/math
/// ops on (possibly dynamically shaped) tensors, or of ttt ops, down to the
/// LLVM dialect, ready for mlir-translate or the ExecutionEngine. Public
/// functions keep their names and take and return memrefs with the identity
/// layout; returned buffers are freshly allocated with malloc and owned by
/// the caller.
void buildTTTToCPUPipeline(OpPassManager &pm, const TTTToCPUOptions &options);

/// Registers the pipelines with the global pass registry (`ttt-to-cpu`).
/// Safe to call more than once.
void registerTTTPipelines();

} // namespace mlir::ttt

#endif // TTT_PIPELINES_PIPELINES_H
