//===- Location.cpp - MLIR locations in one-line messages -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ttt-opt, ttt-run and the C++ API had a formatter each; these rules keep
// every message their tests check. For a parsed MLIR file (lines start at 1)
// they name the first file position, as ttt-run did. Line 0 is "file", not
// the API's "file:0:0", as ttt-opt wrote it: a model has no lines. Names are
// shown only on line 0, where they are the ONNX reader's nodes; ttt-opt also
// showed other names, which only hand-written MLIR locations carry.
//
//===----------------------------------------------------------------------===//

#include "ttt/Support/Location.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

using namespace mlir;

namespace ttt {

namespace {
/// The file location a message names, and the ONNX node it locates, if any.
struct Where {
  FileLineColRange file;
  StringAttr node;
};
} // namespace

static std::optional<Where> findWhere(Location loc) {
  if (auto file = dyn_cast<FileLineColRange>(loc))
    return Where{file, {}};
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::optional<Where> where = findWhere(name.getChildLoc());
    if (where && !where->node && where->file.getStartLine() == 0)
      where->node = name.getName();
    return where;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (std::optional<Where> where = findWhere(part))
        return where;
    return std::nullopt;
  }
  if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    if (std::optional<Where> where = findWhere(call.getCallee()))
      return where;
    return findWhere(call.getCaller());
  }
  if (auto opaque = dyn_cast<OpaqueLoc>(loc))
    return findWhere(opaque.getFallbackLocation());
  return std::nullopt;
}

std::string formatLocation(Location loc, llvm::StringRef fallback) {
  std::optional<Where> where = findWhere(loc);
  if (!where)
    return fallback.str();
  std::string text = where->file.getFilename().str();
  if (unsigned line = where->file.getStartLine())
    text += ":" + std::to_string(line) + ":" +
            std::to_string(where->file.getStartColumn());
  if (where->node)
    text += ": node '" + where->node.str() + "'";
  return text;
}

bool hasSourcePosition(Location loc) {
  std::optional<Where> where = findWhere(loc);
  return where && where->file.getStartLine() != 0;
}

} // namespace ttt
