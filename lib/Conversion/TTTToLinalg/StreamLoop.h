//===- StreamLoop.h - one scf.forall iteration per stream -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Both layer ops are independent per (batch, head) or (batch, channel)
// stream: their recurrent lowering is an scf.forall over those two indices
// whose body computes one stream and inserts its pieces into [B, X, r, c]
// outputs. This builds that frame.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_TTTTOLINALG_STREAMLOOP_H
#define TTT_LIB_CONVERSION_TTTTOLINALG_STREAMLOOP_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ttt {

/// The type a layer with elements of `elementType` computes in: f32 for
/// 16-bit types (the reference models accumulate in f32), else itself.
FloatType getComputeType(FloatType elementType, Builder &builder);

/// Builds `scf.forall (i, j) in (outer[0], outer[1]) shared_outs(outputs)`.
/// `body(i, j, slices)` (built inside the loop) gets the stream's rank-2
/// slices of the shared outputs and returns one rank-2 piece per output,
/// which is inserted at [i, j, 0, 0]. A piece computed into its slice (the
/// slice as the init of the ops that write it) bufferizes in place, without
/// a copy. Returns the loop's results.
SmallVector<Value> buildStreamLoop(
    OpBuilder &builder, Location loc, ArrayRef<OpFoldResult> outer,
    ValueRange outputs,
    function_ref<SmallVector<Value>(Value i, Value j, ValueRange slices)> body);

} // namespace mlir::ttt

#endif // TTT_LIB_CONVERSION_TTTTOLINALG_STREAMLOOP_H
