//===- TTTPlugin.cpp - ttt as an mlir-opt plug-in -------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/InitAllDialects.h"
#include "ttt/InitAllPasses.h"
#include "ttt/Pipelines/Pipelines.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TTT", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::ttt::registerTTTDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TTTPasses", LLVM_VERSION_STRING, []() {
            // Pipelines are looked up when a --pass-pipeline string is
            // parsed, so use builtin.module(ttt-to-cpu) with mlir-opt.
            mlir::ttt::registerAllTTTPasses();
            mlir::ttt::registerTTTPipelines();
          }};
}
