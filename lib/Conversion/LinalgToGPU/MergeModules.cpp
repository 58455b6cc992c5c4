//===- MergeModules.cpp - one gpu.module for all kernels ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-merge-modules` (after gpu-kernel-outlining, which makes one
// gpu.module per kernel): moves every kernel into the first gpu.module, so
// that the program has one binary (one ptxas run, one module load).
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPUMERGEMODULES
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPUMergeModulesPass
    : public ttt::impl::TTTGPUMergeModulesBase<TTTGPUMergeModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto modules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    gpu::GPUModuleOp target = modules.front();
    if (target.getOffloadingHandlerAttr())
      return; // hand-written modules with their own handlers stay apart
    SymbolTable symbols(target);
    // (module, kernel) -> new kernel name in the target module.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp source : llvm::drop_begin(modules)) {
      if (source.getTargetsAttr() != target.getTargetsAttr() ||
          source.getOffloadingHandlerAttr())
        continue;
      for (Operation &op :
           llvm::make_early_inc_range(source.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        if (!symbol)
          continue;
        StringAttr name = symbol.getNameAttr();
        if (isa<gpu::GPUFuncOp>(op)) {
          // Outlined kernels all share their function's name; the modules'
          // names are unique.
          if (symbols.lookup(name))
            SymbolTable::setSymbolName(&op, source.getNameAttr());
          op.moveBefore(target.getBody(), target.getBody()->end());
          symbols.insert(&op); // renames further if it still clashes
          renamed[{source.getNameAttr(), name}] =
              SymbolTable::getSymbolName(&op);
          continue;
        }
        if (Operation *existing = symbols.lookup(name)) {
          // Outlining clones the same callee into every module using it.
          if (!isa<FunctionOpInterface>(existing) ||
              !isa<FunctionOpInterface>(op)) {
            op.emitError("ttt-gpu-merge-modules: symbol clash");
            return signalPassFailure();
          }
          continue;
        }
        op.moveBefore(target.getBody(), target.getBody()->end());
        symbols.insert(&op);
      }
      source.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};
} // namespace
