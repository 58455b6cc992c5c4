//===- ChunkLoopForms.h - helpers of the passes that make chunk loops -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_CHUNKLOOPFORMS_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_CHUNKLOOPFORMS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::tensor {
class EmptyOp;
} // namespace mlir::tensor

namespace mlir::ttt {
class ChunkLoopOp;
class KVBLayerOp;
} // namespace mlir::ttt

namespace mlir::ttt::linalg_raise {

/// Removes the ops of `func` that return one of their operands' values (a
/// scaling by one, a double negation, a float64 round trip, a reshape and
/// its inverse, slices joined again), so that chunk steps that differ by
/// such no-ops compare equal. What the function computes is unchanged.
void foldNoOps(func::FuncOp func);

/// What a raised program's `cf.assert` says where a reading took two
/// run-time sizes as equal.
inline constexpr llvm::StringLiteral kEqualSizesMessage =
    "ttt: the raised TTT layer takes these two sizes as equal (numpy "
    "broadcasting of a dim of run-time size, such as a dynamic batch)";

/// Replaces each torch-mlir broadcast of a run-time size against another
/// (a gather `src[s == 1 ? 0 : i, ...]`) by its source, asserting before it
/// that the two sizes are equal: the program computes the same, or stops at
/// the assertion where the original would have broadcast a size of one.
void foldEqualSizeBroadcasts(func::FuncOp func);

/// Writes each constant of `func` whose elements are another constant's
/// with two dimensions swapped (an exporter's folded `w.transpose(1, 2)`)
/// as a `linalg.transpose` of that constant, so that readers of a chunk
/// step see one weight where the model has one. The elements are the same.
void spellConstantTransposes(func::FuncOp func);

/// Whether `op` is a linalg.generic summing or multiplying two inputs, so
/// that swapping them with their maps (swapCommutativeInputs) changes
/// nothing it computes: chunk steps that write `a + b` in one and `b + a` in
/// another are the same step.
bool isCommutativePair(Operation *op);
void swapCommutativeInputs(Operation *op);

/// Whether `value` is computed from `target` (through the ops that make it
/// and the ops nested in them).
bool readsValue(Value value, Value target);

/// The values `op` reads: its own operands and those its regions take from
/// outside it.
SmallVector<Value> readValues(Operation *op);

/// The block arguments (of the enclosing function) `value` is computed from.
llvm::SmallPtrSet<Value, 8> argumentsOf(Value value);

/// The loop sequence `leaf` is the window of (a window argument), if any.
std::optional<unsigned> windowIndex(ChunkLoopOp loop, Value leaf);

/// Why `loop` is no TTT layer at all (no state bound to keys and values, or
/// a state the data rescales, as chunked online softmax carries), or an
/// empty string when it is one.
std::string whyNotATTTLayer(ChunkLoopOp loop);

/// Why `ttt-raise-chunk-loops` leaves `loop` as it is (the reason its
/// explain remark gives), or an empty string when it raises it.
std::string whyNotAKVBLayer(ChunkLoopOp loop);

/// What remarks call `loop`: "chunk loop (3 chunks of 16, 6 state values)".
std::string describeChunkLoop(ChunkLoopOp loop);

/// What remarks call the form of a raised layer: "unrolled chunk loop (4
/// chunks of 16 tokens)", or "full-batch step".
std::string describeLayerForm(KVBLayerOp layer);

/// The tensor.empty that `value` is, or is a linalg.fill of: a fresh tensor
/// a linalg op writes into, which can be made again at other sizes; null
/// for any other value.
tensor::EmptyOp freshEmpty(Value value);

/// Retypes `op`, a clone of the chunk step op `original` whose operands
/// may now be of run-time size along the chunk's tokens (the body of a
/// ttt.chunk_loop whose last chunk is shorter than `chunk`), as shape
/// inference would; the fresh tensors a linalg op writes into are made
/// again at its new sizes. Returns the op that now stands for `op` (an
/// expansion is made again); fails, saying why, for an op whose type it
/// cannot tell.
FailureOr<Operation *> retypeForAnyChunkLength(OpBuilder &b, Operation *op,
                                               Operation *original,
                                               int64_t chunk, std::string &why);

/// Verifies `op` without reporting: its first diagnostic, or an empty string
/// when it verifies. A pass that builds a ttt.chunk_loop from what it proved
/// checks the op this way and, should it not verify, leaves the program as
/// it was and says why.
std::string verifyQuietly(Operation *op);

/// Whether `value` is made from nothing but constants: a constant, a
/// `tensor.empty` of constant sizes, a `linalg.fill` of such. A loop body
/// makes its own copy rather than take it as an invariant, so that readers
/// of the body see a zero accumulator as zero.
bool isRematerializable(Value value);

/// A linalg.generic that writes `factor * input` (read through
/// `inputMap`, which may broadcast and transpose) into `init`, added to it
/// with `accumulate`.
Value scaledInto(OpBuilder &builder, Location loc, Value input,
                 AffineMap inputMap, Value init, double factor,
                 bool accumulate);

/// Clones the ops that make `value` (isRematerializable) at `builder`'s
/// insertion point, unless `mapping` has them already; returns the copy.
Value rematerialize(OpBuilder &builder, Value value, IRMapping &mapping);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_CHUNKLOOPFORMS_H
