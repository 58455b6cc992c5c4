//===- ProtoChecks.h - ONNX checker and inference, no-throw -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ONNX checker and shape inference report problems with C++ exceptions,
// which the rest of the project is built without. ProtoChecks.cpp is the one
// file built with -fexceptions; it catches everything and returns plain
// values.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_TARGET_ONNX_PROTOCHECKS_H
#define TTT_LIB_TARGET_ONNX_PROTOCHECKS_H

#include "ProtoUtils.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::ttt::onnx {

/// Why a model failed a check; `node` is set when one node of the main graph
/// is at fault (its description then leads the message).
struct CheckFailure {
  const pb::NodeProto *node = nullptr;
  std::string reason;
};

/// The IR version this build's ONNX library knows (its checker rejects
/// newer models, so newer ones are checked by these rules).
int64_t getLibraryIrVersion();

/// The opset versions the ONNX library knows for `domain`, or std::nullopt
/// for a domain it has no operators of (a custom domain).
std::optional<std::pair<int64_t, int64_t>>
getKnownOpsetRange(llvm::StringRef domain);

/// Runs the ONNX checker on `model`: the model-level rules, then the main
/// graph input by input, initializer by initializer and node by node (so
/// that a failure names its node), then model-local functions. External
/// data files are looked up in `modelDir` (empty or ending in a separator).
std::optional<CheckFailure> checkModel(const pb::ModelProto &model,
                                       const std::string &modelDir,
                                       const OpsetTable &opsets);

/// Runs ONNX shape inference on `model` in this process, best effort: nodes
/// it cannot infer are skipped. Returns why inference stopped early, or an
/// empty string. ONNX's inference functions have read out of bounds on some
/// invalid attributes; ShapeInference.h runs this in a child process.
std::string inferShapesInProcess(pb::ModelProto &model);

} // namespace mlir::ttt::onnx

#endif // TTT_LIB_TARGET_ONNX_PROTOCHECKS_H
