//===- LayerLayout.h - operands in the layer's layout -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The readers of `ttt.chunk_loop` name each dimension of an operand by its
// role (a stream, time, a feature); these helpers transpose and reshape the
// loop's sequences and states into `ttt.kvb_layer`'s `[B, H, T, D]` and its
// results back, whatever layout the program had.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_LINALGTOTTT_LAYERLAYOUT_H
#define TTT_LIB_CONVERSION_LINALGTOTTT_LAYERLAYOUT_H

#include "NewtonSchulzReading.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::ttt::linalg_raise {

/// Builds the layer op's operands and results in `[B, H, T, D]` and back.
class LayoutBuilder {
public:
  LayoutBuilder(RewriterBase &b, Location loc, ArrayRef<unsigned> streams)
      : b(b), loc(loc), streams(streams) {}

  /// Groups of dimensions for a reshape between `labels` and its labels
  /// that are not in `units`: each unit dimension joins the next other one
  /// (the last ones, the one before).
  static SmallVector<ReassociationIndices>
  unitGroups(ArrayRef<unsigned> labels, const llvm::DenseSet<unsigned> &units) {
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [d, label] : llvm::enumerate(labels)) {
      pending.push_back(d);
      if (units.contains(label))
        continue;
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      llvm::append_range(groups.back(), pending);
    return groups;
  }

  /// `value` without the dimensions whose labels are units.
  Value dropUnits(Value value, ArrayRef<unsigned> labels,
                  const llvm::DenseSet<unsigned> &units) {
    SmallVector<ReassociationIndices> groups = unitGroups(labels, units);
    if (groups.size() == labels.size())
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape;
    for (const ReassociationIndices &group : groups) {
      int64_t size = 1;
      for (int64_t d : group)
        size = type.isDynamicDim(d)          ? ShapedType::kDynamic
               : ShapedType::isDynamic(size) ? size
                                             : size * type.getDimSize(d);
      shape.push_back(size);
    }
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        groups);
  }

  /// `value`, whose dimensions are the non-unit ones of `labels`, with the
  /// unit ones put back.
  Value addUnits(Value value, ArrayRef<unsigned> labels,
                 const llvm::DenseSet<unsigned> &units) {
    SmallVector<ReassociationIndices> groups = unitGroups(labels, units);
    if (groups.size() == labels.size())
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
    SmallVector<int64_t> shape(labels.size(), 1);
    SmallVector<OpFoldResult> outputShape(labels.size(), b.getIndexAttr(1));
    for (auto [narrow, group] : llvm::enumerate(groups))
      for (int64_t d : group)
        if (!units.contains(labels[d])) {
          shape[d] = type.getDimSize(narrow);
          outputShape[d] = sizes[narrow];
        }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        groups, outputShape);
  }

  /// `value`, whose dimensions carry `labels`, with them in the order
  /// `order`.
  Value permute(Value value, ArrayRef<unsigned> labels,
                ArrayRef<unsigned> order) {
    SmallVector<int64_t> perm;
    for (unsigned label : order)
      perm.push_back(llvm::find(labels, label) - labels.begin());
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return value;
    SmallVector<OpFoldResult> valueSizes = tensor::getMixedSizes(b, loc, value);
    SmallVector<OpFoldResult> sizes;
    for (int64_t p : perm)
      sizes.push_back(valueSizes[p]);
    Value init = tensor::EmptyOp::create(b, loc, sizes,
                                         getElementTypeOrSelf(value.getType()));
    return linalg::TransposeOp::create(b, loc, value, init, perm)->getResult(0);
  }

  /// `[streams..., rest...]` as `[1, N, rest...]`, padded with unit
  /// dimensions at the end to `rank` (at least the current rank + 2 -
  /// #streams).
  Value toLayer(Value value, int64_t rank) {
    auto type = cast<RankedTensorType>(value.getType());
    int64_t numStreams = streams.size();
    // Collapse the streams into one (or add one) and append unit dims.
    SmallVector<ReassociationIndices> collapse;
    SmallVector<int64_t> collapsedShape;
    if (numStreams > 0) {
      ReassociationIndices group;
      int64_t n = 1;
      for (int64_t d = 0; d < numStreams; ++d) {
        group.push_back(d);
        n = type.isDynamicDim(d) || n == ShapedType::kDynamic
                ? ShapedType::kDynamic
                : n * type.getDimSize(d);
      }
      collapse.push_back(group);
      collapsedShape.push_back(n);
      for (int64_t d = numStreams; d < type.getRank(); ++d) {
        collapse.push_back({d});
        collapsedShape.push_back(type.getDimSize(d));
      }
      if (numStreams > 1)
        value = tensor::CollapseShapeOp::create(
            b, loc,
            RankedTensorType::get(collapsedShape, type.getElementType()), value,
            collapse);
    } else {
      collapsedShape.assign(type.getShape().begin(), type.getShape().end());
    }
    // [N, rest...] -> [1, N, rest..., 1...]  (or [rest...] -> [1, 1, rest...]).
    SmallVector<OpFoldResult> current = tensor::getMixedSizes(b, loc, value);
    SmallVector<ReassociationIndices> expand;
    SmallVector<OpFoldResult> outputShape;
    SmallVector<int64_t> shape;
    int64_t currentRank = collapsedShape.size();
    int64_t lead = numStreams > 0 ? 1 : 2;
    for (int64_t d = 0; d < currentRank; ++d) {
      ReassociationIndices group;
      if (d == 0)
        for (int64_t i = 0; i < lead; ++i) {
          group.push_back(shape.size());
          shape.push_back(1);
          outputShape.push_back(b.getIndexAttr(1));
        }
      group.push_back(shape.size());
      shape.push_back(collapsedShape[d]);
      outputShape.push_back(current[d]);
      if (d == currentRank - 1)
        while (static_cast<int64_t>(shape.size()) < rank) {
          group.push_back(shape.size());
          shape.push_back(1);
          outputShape.push_back(b.getIndexAttr(1));
        }
      expand.push_back(group);
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        expand, outputShape);
  }

  /// The inverse of toLayer for a `[1, N, rest...]` result: `[streams...,
  /// rest...]` with the streams' sizes of `like` (whose leading dimensions
  /// are the streams).
  Value fromLayer(Value value, Value like) {
    auto type = cast<RankedTensorType>(value.getType());
    auto likeType = cast<RankedTensorType>(like.getType());
    int64_t numStreams = streams.size();
    // [1, N, rest...] -> [N, rest...]  (or [1, 1, rest...] -> [rest...]).
    SmallVector<ReassociationIndices> collapse;
    SmallVector<int64_t> shape;
    int64_t lead = numStreams > 0 ? 2 : 3;
    ReassociationIndices first;
    for (int64_t d = 0; d < lead; ++d)
      first.push_back(d);
    collapse.push_back(first);
    shape.push_back(numStreams > 0 ? type.getDimSize(1) : type.getDimSize(2));
    for (int64_t d = lead; d < type.getRank(); ++d) {
      collapse.push_back({d});
      shape.push_back(type.getDimSize(d));
    }
    value = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        collapse);
    if (numStreams <= 1)
      return value;
    // [N, rest...] -> [streams..., rest...].
    SmallVector<ReassociationIndices> expand;
    SmallVector<int64_t> expanded;
    SmallVector<OpFoldResult> outputShape;
    SmallVector<OpFoldResult> likeSizes = tensor::getMixedSizes(b, loc, like);
    SmallVector<OpFoldResult> current = tensor::getMixedSizes(b, loc, value);
    ReassociationIndices group;
    for (int64_t d = 0; d < numStreams; ++d) {
      group.push_back(d);
      expanded.push_back(likeType.getDimSize(d));
      outputShape.push_back(likeSizes[d]);
    }
    expand.push_back(group);
    for (int64_t d = 1, e = shape.size(); d < e; ++d) {
      expand.push_back({static_cast<int64_t>(expanded.size())});
      expanded.push_back(shape[d]);
      outputShape.push_back(current[d]);
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(expanded, type.getElementType()), value,
        expand, outputShape);
  }

private:
  RewriterBase &b;
  Location loc;
  ArrayRef<unsigned> streams;
};

/// `value * factor`, elementwise.
Value scaled(RewriterBase &b, Location loc, Value value, double factor);

/// The layer op's schedule for `loop`: one chunk is a full-batch step,
/// several are chunked in `order`.
ScheduleAttr scheduleOf(ChunkLoopOp loop, UpdateOrder order);

/// Muon's attribute for a reading of its steps, or null without one.
NewtonSchulzAttr
newtonSchulzAttr(MLIRContext *context,
                 const std::optional<NewtonSchulzReading> &muon);

/// The layer op's output type `[B, H, Tq, Dout]` for its `q` and `v`.
RankedTensorType layerOutputType(Value q, Value v);

/// The loop's sequences as its chunks read them: a loop of several chunks
/// reads every sequence over the first one's length (a longer one's tail
/// is never read), so the others are cut to it unless their lengths are
/// known to be equal.
SmallVector<Value> sequencesOverTheLoopLength(RewriterBase &rewriter,
                                              ChunkLoopOp loop);

} // namespace mlir::ttt::linalg_raise

#endif // TTT_LIB_CONVERSION_LINALGTOTTT_LAYERLAYOUT_H
