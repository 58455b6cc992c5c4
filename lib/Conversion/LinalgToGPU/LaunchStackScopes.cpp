//===- LaunchStackScopes.cpp - free each launch's argument array ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-launch-stack-scopes` (after gpu-to-llvm): brackets every
// gpu.launch_func with llvm.intr.stacksave / llvm.intr.stackrestore.
//
// The translation to LLVM IR writes each launch's kernel arguments into
// `alloca`s at the launch itself. Inside a loop such an alloca is dynamic: it
// is freed only when the function returns, so a host loop of many launches
// (the recurrent form at B*H = 128 streams and 128 chunks) overflows the
// stack. Restoring the stack pointer after each launch frees them at once,
// as clang does for a variable-length array in a loop body. The driver has
// copied the arguments by the time the launch call returns.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPULAUNCHSTACKSCOPES
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPULaunchStackScopesPass
    : public ttt::impl::TTTGPULaunchStackScopesBase<
          TTTGPULaunchStackScopesPass> {
  void runOnOperation() override {
    auto pointer = LLVM::LLVMPointerType::get(&getContext());
    getOperation()->walk([&](gpu::LaunchFuncOp launch) {
      OpBuilder builder(launch);
      Value saved =
          LLVM::StackSaveOp::create(builder, launch.getLoc(), pointer);
      builder.setInsertionPointAfter(launch);
      LLVM::StackRestoreOp::create(builder, launch.getLoc(), saved);
    });
  }
};
} // namespace
