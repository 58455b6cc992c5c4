//===- Passes.h - linattn dialect passes ------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_LINATTN_TRANSFORMS_PASSES_H
#define TTT_DIALECT_LINATTN_TRANSFORMS_PASSES_H

#include "ttt/Dialect/LinAttn/IR/LinAttnDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::linattn {

#define GEN_PASS_DECL
#include "ttt/Dialect/LinAttn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ttt/Dialect/LinAttn/Transforms/Passes.h.inc"

/// The rewrite of linattn.attention into chunk_reduce, scan and chunk_apply,
/// which every back end includes so that it lowers only the chunk ops.
void populateDecomposePatterns(RewritePatternSet &patterns);

} // namespace mlir::linattn

#endif // TTT_DIALECT_LINATTN_TRANSFORMS_PASSES_H
