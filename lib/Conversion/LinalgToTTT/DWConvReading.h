//===- DWConvReading.h - a depth-wise convolution layer off a loop -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ViT^3's second inner model is a depth-wise convolution kernel, one per
// channel: the queries are convolved with the kernel after one gradient
// step of the dot loss, whose gradient at kernel position (dy, dx) is the
// sum over positions of the keys shifted by (dy, dx) times the values,
// clipped per channel by `G / (|G|_F + 1)`. This reader reads that off a
// one-chunk loop from the indexing maps of the convolution (an input read
// at output plus kernel position), the offsets of the shifted key windows
// into one zero-padded key map, and the order in which the per-position
// sums are stacked into the kernel's shape; it builds `ttt.dwconv_layer`.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_DWCONVREADING_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_DWCONVREADING_H

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::ttt::linalg_raise {

/// A depth-wise convolution layer read off a one-chunk loop: the values
/// outside the loop its operands are made of (each channel-major, its
/// elements in the order of the op's [1, N, H, W] operand), and its knobs.
struct DWConvLayer {
  Value q, k, v;
  unsigned state = 0;
  int64_t channels = 0, height = 0, width = 0, kh = 0, kw = 0;
  /// The dot loss's factor (negative: ascent) and the step.
  double lossScale = 1.0, step = 1.0;
  bool clipped = false;
};

/// Whether the loop's output convolves a window with its one state (then
/// `isConv` is set even when the rest cannot be read); the layer, or
/// failure with the reason.
FailureOr<DWConvLayer> readDWConvLayer(ChunkLoopOp loop, bool &isConv,
                                       std::string &why);

/// Replaces `loop` by the `ttt.dwconv_layer` of `layer`.
void buildDWConvLayer(RewriterBase &rewriter, ChunkLoopOp loop,
                      const DWConvLayer &layer);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_DWCONVREADING_H
