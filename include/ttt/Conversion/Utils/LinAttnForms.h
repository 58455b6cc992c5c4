//===- LinAttnForms.h - linattn ops built on the shared algebra -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The linattn ops whose whole computation is back-end neutral, built once on
// TensorAlgebra: the linalg lowering and the ONNX export both call these.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_UTILS_LINATTNFORMS_H
#define TTT_CONVERSION_UTILS_LINATTNFORMS_H

#include "ttt/Conversion/Utils/Algebra.h"
#include "ttt/Dialect/LinAttn/IR/LinAttnOps.h"

namespace mlir::ttt {

/// phi(x) of a linattn.feature_map (before the cast to the op's type).
Value buildFeatureMap(TensorAlgebra &t, linattn::FeatureMapOp op);

/// The orthogonalized, scaled states of a linattn.state_transform.
Value buildStateTransform(TensorAlgebra &t, linattn::StateTransformOp op);

/// Per-chunk sums k_c^T (eta v_c) * factor (/ chunk length): [B, H, N, F, E].
Value buildChunkReduce(TensorAlgebra &t, linattn::ChunkReduceOp op);

/// The mean of each chunk: [B, H, T] -> [B, H, N].
Value buildChunkMean(TensorAlgebra &t, linattn::ChunkMeanOp op);

/// The chunk states of a linattn.scan in the chunk-parallel form: the
/// doubling scan (or the back end's own prefix sum for an additive scan),
/// the initial state carried through the cumulative transitions, and the
/// shift by one chunk of an exclusive scan.
Value buildScan(TensorAlgebra &t, linattn::ScanOp op);

/// q_c S_c per chunk, plus the causal intra-chunk term when the op has one.
Value buildChunkApply(TensorAlgebra &t, linattn::ChunkApplyOp op);

} // namespace mlir::ttt

#endif // TTT_CONVERSION_UTILS_LINATTNFORMS_H
