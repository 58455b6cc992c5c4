//===- LowerRecurrent.h - patterns of ttt-lower-recurrent -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_TTTTOLINALG_LOWERRECURRENT_H
#define TTT_LIB_CONVERSION_TTTTOLINALG_LOWERRECURRENT_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::ttt {
void populateLowerKVBLayerPatterns(RewritePatternSet &patterns);
void populateLowerDWConvLayerPatterns(RewritePatternSet &patterns);
void populateLowerChunkLoopPatterns(RewritePatternSet &patterns);
} // namespace mlir::ttt

#endif // TTT_LIB_CONVERSION_TTTTOLINALG_LOWERRECURRENT_H
