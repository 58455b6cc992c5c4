//===- ttt-opt.cpp - the ttt optimizer driver -----------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An mlir-opt-style driver: the ttt and linattn dialects, every upstream
// dialect, pass and extension that the ttt pipelines lower through, and the
// project's passes and pipelines. Reads and writes ONNX models too: an input
// or -o file ending in .onnx (or --input-format=onnx / --emit=onnx) goes
// through the ONNX reader/writer (ONNXDriver.cpp) instead of MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "ttt/InitAllDialects.h"
#include "ttt/InitAllPasses.h"
#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Target/ONNX/ImportONNX.h"

#include "ONNXDriver.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::ttt::registerTTTPipelines();
  mlir::ttt::registerAllTTTPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::ttt::registerTTTDialects(registry);
  mlir::ttt::onnx::registerONNXImportDialects(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "ttt optimizer driver: finds test-time-training layers, rewrites them "
      "into linear attention and lowers them to a parallel chunked scan\n",
      registry);
  if (mlir::ttt::isONNXRequested(inputFilename, outputFilename))
    return mlir::asMainReturnCode(mlir::ttt::runONNXOptMain(
        argc, argv, inputFilename, outputFilename, registry));
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, inputFilename, outputFilename, registry));
}
