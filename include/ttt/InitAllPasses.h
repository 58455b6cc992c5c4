//===- InitAllPasses.h - register the ttt passes ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_INITALLPASSES_H
#define TTT_INITALLPASSES_H

#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/LinAttn/Transforms/Passes.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"

namespace mlir::ttt {

/// Registers every pass of the project (not the pipelines).
inline void registerAllTTTPasses() {
  registerTTTConversionPasses();
  registerTTTPasses();
  linattn::registerLinAttnPasses();
}

} // namespace mlir::ttt

#endif // TTT_INITALLPASSES_H
