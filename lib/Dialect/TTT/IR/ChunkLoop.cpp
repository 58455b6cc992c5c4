//===- ChunkLoop.cpp - ttt.chunk_loop and its canonical body -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The verifier of ttt.chunk_loop is the definition of the canonical form:
// what a body may contain is decided here and nowhere else, so that the
// readers of the math see one vocabulary whatever the front end was.
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/IR/TTTOps.h"
#include "ttt/Support/ShapeChecker.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ttt;

Block::BlockArgListType ChunkLoopOp::getStateArgs() {
  return getBody().front().getArguments().take_front(getInits().size());
}

Block::BlockArgListType ChunkLoopOp::getWindowArgs() {
  return getBody()
      .front()
      .getArguments()
      .drop_front(getInits().size())
      .take_front(getSequences().size());
}

Block::BlockArgListType ChunkLoopOp::getInvariantArgs() {
  return getBody().front().getArguments().drop_front(getInits().size() +
                                                     getSequences().size());
}

ChunkYieldOp ChunkLoopOp::getYield() {
  return cast<ChunkYieldOp>(getBody().front().getTerminator());
}

/// True if every operand and result of `op` is an index.
static bool isIndexArithmetic(Operation *op) {
  auto isIndex = [](Type type) { return type.isIndex(); };
  return op->getNumResults() > 0 &&
         llvm::all_of(op->getOperandTypes(), isIndex) &&
         llvm::all_of(op->getResultTypes(), isIndex);
}

std::string ChunkLoopOp::whyNotCanonical(Operation *op) {
  if (isa<ChunkYieldOp, tensor::EmptyOp, tensor::ExtractSliceOp,
          tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ConcatOp,
          tensor::DimOp, arith::ConstantOp>(op))
    return "";
  if (op->getDialect() && isa<arith::ArithDialect>(op->getDialect()) &&
      isIndexArithmetic(op))
    return "";
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalgOp.hasPureTensorSemantics())
      return "it reads or writes buffers; the body works on tensors";
    Operation *effectful = nullptr;
    op->walk([&](Operation *inner) {
      if (inner != op && !isMemoryEffectFree(inner) && !effectful)
        effectful = inner;
    });
    if (effectful)
      return ("its region holds '" + effectful->getName().getStringRef() +
              "', which has memory effects")
          .str();
    return "";
  }
  return "the body admits only linalg structured ops on tensors, "
         "tensor.empty, tensor.extract_slice, tensor.expand_shape, "
         "tensor.collapse_shape, tensor.concat, tensor.dim, arith.constant "
         "and index arithmetic";
}

/// The size every window of a sequence of length `length` has along the
/// time axis, or dynamic when chunks differ (a shorter last one). Of a
/// run-time length, a window may say C: the loop then takes C to divide the
/// length, as a program that cuts C-token windows up to it does.
static int64_t uniformWindowSize(int64_t length, int64_t chunk) {
  if (ShapedType::isDynamic(length))
    return chunk == 0 ? ShapedType::kDynamic : chunk;
  if (chunk == 0)
    return length;
  if (length <= chunk)
    return length;
  return length % chunk == 0 ? chunk : ShapedType::kDynamic;
}

/// Whether `window` is `sequence` with dimension `axis` replaced by
/// `size`, or by a dynamic size.
static bool isWindowType(RankedTensorType window, RankedTensorType sequence,
                         int64_t axis, int64_t size) {
  if (window.getRank() != sequence.getRank() ||
      window.getElementType() != sequence.getElementType() ||
      window.getEncoding() != sequence.getEncoding())
    return false;
  for (int64_t d = 0, e = window.getRank(); d < e; ++d) {
    if (d != axis) {
      if (window.getDimSize(d) != sequence.getDimSize(d))
        return false;
      continue;
    }
    if (!window.isDynamicDim(d) && window.getDimSize(d) != size)
      return false;
  }
  return true;
}

/// `sequence` with dimension `axis` of size `size`.
static RankedTensorType windowOf(RankedTensorType sequence, int64_t axis,
                                 int64_t size) {
  SmallVector<int64_t> shape(sequence.getShape());
  shape[axis] = size;
  return sequence.clone(shape);
}

LogicalResult ChunkLoopOp::verify() {
  ArrayRef<int64_t> windowAxes = getWindowAxes();
  if (windowAxes.size() != getSequences().size())
    return emitOpError() << "has " << getSequences().size() << " sequences but "
                         << windowAxes.size()
                         << " window axes; give one axis per sequence";
  if (getOutputAxes().size() != getOutputs().size())
    return emitOpError() << "has " << getOutputs().size() << " outputs but "
                         << getOutputAxes().size()
                         << " output axes; give one axis per output";
  if (getFinalStates().size() != getInits().size())
    return emitOpError() << "carries " << getInits().size()
                         << " state values but returns "
                         << getFinalStates().size()
                         << " final states; they must match one to one";
  for (auto [index, init, final] :
       llvm::enumerate(getInits().getTypes(), getFinalStates().getTypes()))
    if (init != final)
      return emitOpError() << "final state #" << index << " has type " << final
                           << " but its initial value has type " << init;
  if (!isSingleChunk() && getSequences().empty())
    return emitOpError() << "is cut into chunks of " << getChunk()
                         << " tokens but has no sequences to cut; a loop "
                            "without windows is chunk(0)";

  // Chunked windows cut one common length.
  int64_t length = ShapedType::kDynamic;
  for (auto [index, sequence, axis] :
       llvm::enumerate(getSequences().getTypes(), windowAxes)) {
    auto type = cast<RankedTensorType>(sequence);
    if (axis < 0 || axis >= type.getRank())
      return emitOpError() << "window axis " << axis << " of sequence #"
                           << index << " is outside its rank "
                           << type.getRank();
    if (isSingleChunk())
      continue;
    int64_t size = type.getDimSize(axis);
    if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(length) &&
        size != length)
      return emitOpError() << "sequence #" << index << " has " << size
                           << " tokens along axis " << axis
                           << " but an earlier sequence has " << length
                           << "; the chunks of a loop cut one length";
    length = mergeDim(length, size);
  }
  for (auto [index, output, axis] :
       llvm::enumerate(getOutputs().getTypes(), getOutputAxes())) {
    auto type = cast<RankedTensorType>(output);
    if (axis < 0 || axis >= type.getRank())
      return emitOpError() << "output axis " << axis << " of output #" << index
                           << " is outside its rank " << type.getRank();
    int64_t size = type.getDimSize(axis);
    if (!isSingleChunk() && !ShapedType::isDynamic(size) &&
        !ShapedType::isDynamic(length) && size != length)
      return emitOpError() << "output #" << index << " has " << size
                           << " tokens along axis " << axis
                           << " but the sequences have " << length;
  }
  return success();
}

LogicalResult ChunkLoopOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.empty() || !isa<ChunkYieldOp>(body.back()))
    return emitOpError() << "body must end with ttt.chunk_yield";
  size_t expected =
      getInits().size() + getSequences().size() + getInvariants().size();
  if (body.getNumArguments() != expected)
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments but the loop passes " << expected
                         << " (state, windows, invariants)";
  for (auto [index, init, arg] : llvm::enumerate(
           getInits().getTypes(), ValueRange(getStateArgs()).getTypes()))
    if (init != arg)
      return emitOpError() << "body argument for state #" << index
                           << " has type " << arg << " but the state has type "
                           << init;
  for (auto [index, sequence, arg, axis] : llvm::enumerate(
           getSequences().getTypes(), ValueRange(getWindowArgs()).getTypes(),
           getWindowAxes())) {
    auto sequenceType = cast<RankedTensorType>(sequence);
    auto windowType = dyn_cast<RankedTensorType>(arg);
    int64_t size = uniformWindowSize(sequenceType.getDimSize(axis), getChunk());
    if (!windowType || !isWindowType(windowType, sequenceType, axis,
                                     ShapedType::isDynamic(size) ? -1 : size))
      return emitOpError() << "body argument for the window of sequence #"
                           << index << " has type " << arg
                           << " but a window of " << sequence << " along axis "
                           << axis << " is "
                           << windowOf(sequenceType, axis, size);
  }
  for (auto [index, invariant, arg] :
       llvm::enumerate(getInvariants().getTypes(),
                       ValueRange(getInvariantArgs()).getTypes()))
    if (invariant != arg)
      return emitOpError() << "body argument for invariant #" << index
                           << " has type " << arg
                           << " but the invariant has type " << invariant;

  ChunkYieldOp yield = getYield();
  if (yield.getOutputs().size() != getOutputs().size())
    return yield.emitOpError()
           << "yields " << yield.getOutputs().size() << " outputs but the loop "
           << "has " << getOutputs().size();
  if (yield.getNextState().size() != getInits().size())
    return yield.emitOpError()
           << "yields " << yield.getNextState().size()
           << " state values but the loop carries " << getInits().size();
  for (auto [index, next, init] :
       llvm::enumerate(yield.getNextState().getTypes(), getInits().getTypes()))
    if (next != init)
      return yield.emitOpError() << "next state #" << index << " has type "
                                 << next << " but the state has type " << init;
  for (auto [index, chunkOutput, output, axis] :
       llvm::enumerate(yield.getOutputs().getTypes(), getOutputs().getTypes(),
                       getOutputAxes())) {
    auto chunkType = cast<RankedTensorType>(chunkOutput);
    auto type = cast<RankedTensorType>(output);
    bool matches = chunkType.getRank() == type.getRank() &&
                   chunkType.getElementType() == type.getElementType();
    for (int64_t d = 0, e = type.getRank(); matches && d < e; ++d)
      matches = (d == axis && !isSingleChunk()) ||
                chunkType.getDimSize(d) == type.getDimSize(d);
    if (!matches)
      return yield.emitOpError()
             << "output #" << index << " of a chunk has type " << chunkOutput
             << ", which does not assemble along axis " << axis << " into "
             << output;
  }

  for (Operation &op : body) {
    std::string why = whyNotCanonical(&op);
    if (!why.empty())
      return op.emitOpError() << "is not in the canonical body of a "
                                 "ttt.chunk_loop: "
                              << why;
  }
  return success();
}
