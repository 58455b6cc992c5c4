//===- InitAllDialects.h - register the ttt dialects ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_INITALLDIALECTS_H
#define TTT_INITALLDIALECTS_H

#include "mlir/IR/DialectRegistry.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnDialect.h"
#include "ttt/Dialect/TTT/IR/TTTDialect.h"

namespace mlir::ttt {

/// Adds the project's own dialects (ttt, linattn) to `registry`.
inline void registerTTTDialects(DialectRegistry &registry) {
  registry.insert<ttt::TTTDialect, linattn::LinAttnDialect>();
}

} // namespace mlir::ttt

#endif // TTT_INITALLDIALECTS_H
