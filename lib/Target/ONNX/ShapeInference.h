//===- ShapeInference.h - ONNX shape inference, crash-isolated --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_TARGET_ONNX_SHAPEINFERENCE_H
#define TTT_LIB_TARGET_ONNX_SHAPEINFERENCE_H

#include "ProtoUtils.h"

#include <string>

namespace mlir::ttt::onnx {

/// Runs ONNX shape inference on `model` and records what it finds in the
/// value_info (and subgraph input/output types) of every graph. ONNX's
/// inference functions crash on some models that pass the checker (an
/// out-of-range axis is read out of bounds), so on POSIX systems inference
/// runs in a forked child that sends back only the types it found; a crash
/// there leaves the model untouched. Returns why inference did not complete
/// (empty if it did).
std::string inferShapes(pb::ModelProto &model);

} // namespace mlir::ttt::onnx

#endif // TTT_LIB_TARGET_ONNX_SHAPEINFERENCE_H
