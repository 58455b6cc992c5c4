//===- ExportONNX.h - write the onnx dialect as an ONNX model ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX writer: a module holding one onnx.graph (and onnx.* model
// attributes) to a ModelProto, checked with the ONNX checker before anything
// is written.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TARGET_ONNX_EXPORTONNX_H
#define TTT_TARGET_ONNX_EXPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::ttt::onnx {

struct ExportOptions {
  /// The IR version and default-domain opset written when the module does
  /// not record them (a module that was not imported from ONNX).
  int64_t defaultIrVersion = 8;
  int64_t defaultOpset = 17;
  /// If set, the stages of writing (protobuf, check, file) are timed as
  /// scopes nested in it (ttt-opt --timing).
  TimingScope *timing = nullptr;
};

/// Writes `module` as an ONNX model to `path` ("-": stdout). Initializers
/// marked `external_data`, and the largest ones if the model would not fit
/// in protobuf's 2 GiB otherwise, go to `<path>.data` next to it. The model
/// passes the ONNX checker before anything is written, and both files appear
/// whole or not at all (written to temporaries, then renamed).
///
/// On failure, emits one error diagnostic at an unknown location whose
/// one-line message starts with `path` (and names the node at fault, if
/// one is) and leaves no output file behind.
LogicalResult exportONNXFile(ModuleOp module, llvm::StringRef path,
                             const ExportOptions &options = {});

/// Serializes `module` as an ONNX model into `bytes` with all tensor data
/// inline, after the same checks; `fileName` names it in messages.
LogicalResult exportONNXToString(ModuleOp module, llvm::StringRef fileName,
                                 std::string &bytes,
                                 const ExportOptions &options = {});

} // namespace mlir::ttt::onnx

#endif // TTT_TARGET_ONNX_EXPORTONNX_H
