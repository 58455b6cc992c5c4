//===- ONNXDriver.h - ttt-opt's ONNX input and output -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_OPT_ONNXDRIVER_H
#define TTT_TOOLS_TTT_OPT_ONNXDRIVER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::ttt {

/// True if, after the command line was parsed, ttt-opt reads or writes ONNX:
/// by `--input-format=onnx` / `--emit=onnx`, or (by default) because the
/// input file or the `-o` file ends in `.onnx`, or the input (`input`, the
/// file's content if it could be read) is an ONNX model.
bool isONNXRequested(llvm::StringRef inputFilename,
                     llvm::StringRef outputFilename,
                     const llvm::MemoryBuffer *input);

/// mlir-opt's flow with ONNX at either end: read the model (or the MLIR
/// file), run the pass pipeline of the command line, write ONNX (or MLIR
/// text/bytecode). Failures print one-line errors and leave no output file.
/// `input` is the input's content when the caller read it already
/// (standard input can be read only once).
LogicalResult runONNXOptMain(int argc, char **argv,
                             llvm::StringRef inputFilename,
                             llvm::StringRef outputFilename,
                             DialectRegistry &registry,
                             std::unique_ptr<llvm::MemoryBuffer> input);

} // namespace mlir::ttt

#endif // TTT_TOOLS_TTT_OPT_ONNXDRIVER_H
