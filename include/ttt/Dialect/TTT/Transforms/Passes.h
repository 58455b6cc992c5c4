//===- Passes.h - ttt dialect passes ----------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_TRANSFORMS_PASSES_H
#define TTT_DIALECT_TTT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ttt {

#define GEN_PASS_DECL
#include "ttt/Dialect/TTT/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ttt/Dialect/TTT/Transforms/Passes.h.inc"

} // namespace mlir::ttt

#endif // TTT_DIALECT_TTT_TRANSFORMS_PASSES_H
