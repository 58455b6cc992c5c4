//===- JitFunction.h - calling the compiled entry function ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// JIT-compiles a module lowered by ttt-to-cpu and calls its entry function
// through the ExecutionEngine's packed wrapper, `void _mlir_NAME(void **)`.
// The wrapper takes one pointer per scalar of the LLVM signature: after
// func-to-llvm, each memref argument is expanded into (allocated pointer,
// aligned pointer, offset, sizes..., strides...), and the last pointer
// receives the return value, a struct of such descriptors (or the descriptor
// itself for a single result).
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_RUN_JITFUNCTION_H
#define TTT_TOOLS_TTT_RUN_JITFUNCTION_H

#include "ttt/Execution/EntrySignature.h"

#include "ttt/Support/Npy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"

#include <memory>
#include <string>
#include <vector>

namespace ttt::run {

struct JitOptions {
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 2;
  /// Shared libraries whose symbols the compiled code may call.
  std::vector<std::string> sharedLibs;
  /// Frees the buffers the function returns (ttt-to-gpu programs allocate
  /// them with the GPU runtime's allocator).
  void (*freeResult)(void *) = nullptr;
};

class JitFunction {
public:
  /// Compiles `lowered` (LLVM dialect) and looks up `signature.name`; `file`
  /// names the program in error messages.
  static llvm::Expected<std::unique_ptr<JitFunction>>
  create(mlir::ModuleOp lowered, const EntrySignature &signature,
         const JitOptions &options, llvm::StringRef file);

  /// Calls the function. It may write to `inputs` in place (One-Shot
  /// Bufferize lets functions update their arguments), so callers pass
  /// copies they can lose. Returns the results as dense arrays, and the wall
  /// time of the call alone in `seconds`.
  llvm::Expected<std::vector<npy::Array>> call(std::vector<npy::Array> &inputs,
                                               double &seconds);

private:
  JitFunction() = default;

  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*packed)(void **) = nullptr;
  void (*freeResult)(void *) = nullptr;
  EntrySignature signature;
  std::string file;
};

} // namespace ttt::run

#endif // TTT_TOOLS_TTT_RUN_JITFUNCTION_H
