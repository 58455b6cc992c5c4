//===- ImportONNX.h - read an ONNX model into the onnx dialect --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX reader: ModelProto (the ONNX library + protobuf) to the `onnx`
// dialect. It depends on the dialect and on protobuf only; ttt-opt, the
// fuzzer and the Python bindings call it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TARGET_ONNX_IMPORTONNX_H
#define TTT_TARGET_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace mlir::ttt::onnx {

struct ImportOptions {
  /// Tensors (initializers, tensor attributes) larger than this many bytes
  /// become `dense_resource` blobs instead of inline `dense<...>` literals.
  size_t resourceThreshold = 1024;
  /// Run ONNX shape inference so that intermediate values get tensor types;
  /// without it only what the model declares is known.
  bool inferShapes = true;
  /// If set, the stages of reading (parse, check, shape inference, IR)
  /// are timed as scopes nested in it (ttt-opt --timing).
  TimingScope *timing = nullptr;
};

/// Imports the serialized ModelProto `bytes`. `fileName` names the model in
/// messages and locations; external data files are looked up relative to
/// `modelDir` (empty: the working directory).
///
/// On failure, emits exactly one error diagnostic at an unknown location
/// whose message is one line starting with `fileName` -- e.g.
/// "m.onnx: not a valid ONNX model (...)" or
/// "m.onnx: node 'n' (ai.onnx::Loop, opset 17): ..." -- and returns null.
/// Non-fatal findings are warning diagnostics.
OwningOpRef<ModuleOp> importONNXModel(llvm::StringRef bytes,
                                      llvm::StringRef fileName,
                                      llvm::StringRef modelDir,
                                      MLIRContext *context,
                                      const ImportOptions &options = {});

/// Reads the file `path` (memory-mapped) and imports it; external data is
/// looked up next to it.
OwningOpRef<ModuleOp> importONNXFile(llvm::StringRef path, MLIRContext *context,
                                     const ImportOptions &options = {});

/// True if `bytes` parse as an ONNX ModelProto with a graph (and are neither
/// MLIR text nor MLIR bytecode): how inputs without a .onnx name (`-`, a
/// .pb file) are recognized.
bool looksLikeONNXModel(llvm::StringRef bytes);

/// Adds the dialects imported IR uses to `registry`.
void registerONNXImportDialects(DialectRegistry &registry);

} // namespace mlir::ttt::onnx

#endif // TTT_TARGET_ONNX_IMPORTONNX_H
