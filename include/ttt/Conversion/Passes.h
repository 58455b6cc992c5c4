//===- Passes.h - ttt conversion passes -------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_PASSES_H
#define TTT_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnDialect.h"

namespace mlir::ttt {

#define GEN_PASS_DECL
#include "ttt/Conversion/Passes.h.inc"

/// Adds the patterns that lower ttt layer ops to their recurrent reference.
void populateTTTLowerRecurrentPatterns(RewritePatternSet &patterns);

/// Adds the patterns that lower linattn ops to linalg on tensors; `scan` is
/// linattn-to-linalg's option (parallel, sequential or per-entry).
void populateLinAttnToLinalgPatterns(RewritePatternSet &patterns,
                                     StringRef scan = "parallel");

#define GEN_PASS_REGISTRATION
#include "ttt/Conversion/Passes.h.inc"

} // namespace mlir::ttt

#endif // TTT_CONVERSION_PASSES_H
