//===- LoopReadings.h - loops read as the shadow graph reads them -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The shadow graph reads a chunk loop as an scf.for with constant-size
// chunks. Programs spell chunk loops in other ways too: as a counted
// scf.while, as torch-mlir's scf.while (a 0-d tensor counter, a carried
// condition, clamped offsets), with a partial last chunk. Each reading here
// is a copy of the function beside it, rewritten without changing what it
// computes into the form the shadow graph reads; the pass keeps a copy's
// body only if it raises a layer in it.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_LOOPREADINGS_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_LOOPREADINGS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ttt::linalg_raise {

/// A copy of `func` whose counted scf.while loops are scf.for loops
/// (upstream's uplift, after normalizeWhileLoops), which the shadow graph
/// reads as Loop nodes; null when `func` has no such loop. The copy sits
/// next to `func` under another name until the caller keeps its body or
/// erases it. Says, in a remark, why a tensor-carrying scf.while is not
/// read as a loop over chunks.
func::FuncOp withWhileLoopsAsFor(func::FuncOp func);

/// A copy of `func` in which every scf.for with constant bounds and a
/// partial last chunk (affine.min of its counter) is unrolled, and the chunk
/// sizes folded to constants, so that the shadow graph reads each chunk at
/// its own static size, as in a traced program; null when there is no such
/// loop. Like withWhileLoopsAsFor, the copy sits next to `func`.
func::FuncOp withPartialChunkLoopsUnrolled(func::FuncOp func);

/// Brings the scf.while loops of `func` that torch-mlir makes of torch's
/// `while_loop` into the form upstream's uplift reads: 0-d tensors carried
/// as scalars, 0-d linalg.generic ops as scalar arithmetic, a reduction of
/// zeros as its init, and a condition carried from the end of the body
/// (a do-while) computed at the start of the next iteration instead, where
/// the condition the loop starts with is provably the same. Whether it
/// changed `func`.
bool normalizeWhileLoops(func::FuncOp func);

/// Folds, in `func`, integer comparisons and signed min/max whose outcome
/// the ranges of their operands decide (upstream's integer range analysis,
/// which knows the bounds of an scf.for counter): PyTorch's slice bounds
/// clamp a chunk offset i * C to [0, T], which in a loop over the chunks
/// changes nothing.
void foldClampsByRange(func::FuncOp func);

/// Applies the canonicalization patterns of every loaded dialect and
/// registered op to `func`, and `extra`.
void canonicalize(func::FuncOp func, RewritePatternSet &&extra);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_LOOPREADINGS_H
