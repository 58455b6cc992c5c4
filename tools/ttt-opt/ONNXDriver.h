//===- ONNXDriver.h - ttt-opt's ONNX input and output -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_OPT_ONNXDRIVER_H
#define TTT_TOOLS_TTT_OPT_ONNXDRIVER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::ttt {

/// True if, after the command line was parsed, ttt-opt reads or writes ONNX:
/// by `--input-format=onnx` / `--emit=onnx`, or (by default) because the
/// input file or the `-o` file ends in `.onnx`.
bool isONNXRequested(llvm::StringRef inputFilename,
                     llvm::StringRef outputFilename);

/// mlir-opt's flow with ONNX at either end: read the model (or the MLIR
/// file), run the pass pipeline of the command line, write ONNX (or MLIR
/// text/bytecode). Failures print one-line errors and leave no output file.
LogicalResult runONNXOptMain(int argc, char **argv,
                             llvm::StringRef inputFilename,
                             llvm::StringRef outputFilename,
                             DialectRegistry &registry);

} // namespace mlir::ttt

#endif // TTT_TOOLS_TTT_OPT_ONNXDRIVER_H
