//===- LoopBounds.h - does a chunk Loop walk the sequence -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A scripted export computes its Loop's trip count and each iteration's
// token window from the sequence length at run time. The raise may only
// claim a chunked ttt.kvb_layer if that integer arithmetic cuts the sequence
// into the layer's chunks, for every length. The arithmetic exporters write
// (Add, Sub, Neg, Mul by a constant, Div and Mod by a positive constant,
// Min, Max, on the length T and the iteration number i) is quasi-affine:
// each claim "f(T, i) = g(T, i) wherever the loop runs" is proven by
// showing, with MLIR's Presburger library, that no integer point of the
// loop's domain (T >= 1, 0 <= i < trips) has f != g. Min and Max split the
// domain into the pieces where each operand is the smaller.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_LOOPBOUNDS_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_LOOPBOUNDS_H

#include "GraphQueries.h"

#include <string>

namespace mlir::ttt::raise {

/// Proves that `loop` runs while chunks remain (ceil(T / C) iterations, or
/// (T - 1) / C when `tail` is given), that iteration i's `window` cuts
/// tokens [iC, min(iC + C, T)), that `tail` cuts from the last loop chunk
/// to the end, and that `chunkLength` (if given) is the number of tokens
/// iteration i cuts. `sequences` are the tensors whose time axis is the
/// sequence, the queries first (a sequence one rank below them has time
/// last).
LogicalResult checkLoopWalksChunks(onnx::NodeOp loop, const SliceChain &window,
                                   const SliceChain *tail, int64_t chunkSize,
                                   ArrayRef<Value> sequences, Value chunkLength,
                                   std::string &why);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_LOOPBOUNDS_H
