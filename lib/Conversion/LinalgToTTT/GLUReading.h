//===- GLUReading.h - a GLU layer off a loop --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ViT^3's fast weights are a gated linear unit with no output layer,
// `(x Wa) * silu(x Wg)`, trained by one step of the dot loss whose
// gradient may be clipped per output column (`G / (|G| + 1)`). This reader
// finds that model in what a chunk loop's output computes (the sigmoid is
// the one leaf that is no sum of products), gives every dimension of both
// weights its role, and proves each weight's update to be the loss's
// descent step: the gradient the model implies, written as an einsum
// polynomial over the body's own values, must equal the one the body
// computes (inside the clipping, where it clips) term for term.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_GLUREADING_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_GLUREADING_H

#include "FastWeightLayer.h"

#include <string>

namespace mlir::ttt::linalg_raise {

/// Whether the loop's output is a GLU of two of its states (then `isGLU` is
/// set even when the rest cannot be read); the layer, or failure with the
/// reason.
FailureOr<FastWeightLayer> readGLULayer(ChunkLoopOp loop, bool &isGLU,
                                        std::string &why);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_GLUREADING_H
