//===- LoopBounds.h - does a chunk Loop walk the sequence -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A scripted export computes its Loop's trip count and each iteration's
// token window from the sequence length at run time. The raise may only
// claim a chunked ttt.kvb_layer if that integer arithmetic cuts the sequence
// into the layer's chunks: it evaluates it for sample lengths (the sequence
// length and the iteration number are the only unknowns) and compares.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_LOOPBOUNDS_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_LOOPBOUNDS_H

#include "GraphQueries.h"

#include <string>

namespace mlir::ttt::raise {

/// Checks that `loop` runs while chunks remain (ceil(T / C) iterations, or
/// (T - 1) / C when `tail` is given), that iteration i's `window` cuts
/// tokens [iC, min(iC + C, T)), and that `tail` cuts from the last loop chunk
/// to the end. `sequences` are the tensors whose time axis is the sequence,
/// the queries first (a sequence one rank below them has time last).
LogicalResult checkLoopWalksChunks(onnx::NodeOp loop, const SliceChain &window,
                                   const SliceChain *tail, int64_t chunkSize,
                                   ArrayRef<Value> sequences, std::string &why);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_LOOPBOUNDS_H
