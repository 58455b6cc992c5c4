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

/// One of ttt-simplify's model-changing simplifications: its option name and
/// its flag in the pass options.
struct SimplifyVariant {
  llvm::StringLiteral option;
  bool TTTSimplifyOptions::*flag;
};

/// Every model-changing simplification of ttt-simplify, in the paper's order
/// (Variants 1-6). The C++ API and the Python package take their list from
/// here.
llvm::ArrayRef<SimplifyVariant> getSimplifyVariants();

} // namespace mlir::ttt

#endif // TTT_DIALECT_TTT_TRANSFORMS_PASSES_H
