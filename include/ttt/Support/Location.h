//===- Location.h - MLIR locations in one-line messages ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The "where" of the project's one-line diagnostics ("layer.mlir:10:8",
// "model.onnx: node '/layer/Concat'"). ttt-opt, ttt-run and the C++ API all
// use this, so a location reads the same in every tool, and the API's layer
// reports can be matched with its remarks by location.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_SUPPORT_LOCATION_H
#define TTT_SUPPORT_LOCATION_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace ttt {

/// Formats `loc` for a one-line message, or returns `fallback` if it holds
/// no file:
///  - a file position is "file:line:col"; line 0 is "file" alone: the ONNX
///    reader locates everything of a model at "file":0:0, a protobuf having
///    no lines;
///  - a name on such a line-0 location is the reader's location of a node,
///    "file: node 'name'"; any other name is an annotation, and the position
///    under it is what finds the op, so it is left out;
///  - a fused location is its first part that holds a file; a call site is
///    its callee, else its caller; an opaque location is its fallback.
std::string formatLocation(mlir::Location loc, llvm::StringRef fallback = "");

/// Whether the file location formatLocation names is a position in a source
/// text (it has a line), which an llvm::SourceMgr can show with its line.
bool hasSourcePosition(mlir::Location loc);

} // namespace ttt

#endif // TTT_SUPPORT_LOCATION_H
