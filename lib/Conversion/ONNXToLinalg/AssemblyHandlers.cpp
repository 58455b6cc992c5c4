//===- AssemblyHandlers.cpp - ScatterND, ScatterElements, Pad, fills -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exporters assemble chunk outputs by writing each chunk into a buffer: a
// PyTorch slice assignment `out[:, s:e] = o` becomes a ScatterND whose
// constant indices enumerate a box, `select_scatter` a ScatterElements whose
// indices are one constant plane. Such a write is a `tensor.insert_slice`,
// the spelling the chunk-loop formers read as assembly; a scatter whose
// indices are not a box stays opaque. Pad is a fill, ConstantOfShape a
// splat constant.
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

/// Whether the node's `reduction` attribute (opset 16 on) is absent or
/// "none": a plain overwrite.
static bool overwrites(const NodeView &node) {
  auto reduction =
      dyn_cast_or_null<StringAttr>(node.node.getONNXAttr("reduction"));
  return !reduction || reduction.getValue() == "none";
}

/// The data, the updates and the constant indices of a scatter whose
/// result has the data's type, or failure with `why` set.
static LogicalResult
scatterOperands(const NodeView &node, RankedTensorType &data,
                RankedTensorType &updates, RankedTensorType &indexType,
                SmallVector<int64_t> &indices, std::string &why) {
  data = node.inputType(0);
  updates = node.inputType(2);
  indexType = dyn_cast<RankedTensorType>(node.node.getInputs()[1].getType());
  std::optional<SmallVector<int64_t>> constant = node.constantInts(1);
  if (!data || !updates || node.resultType() != data ||
      updates.getElementType() != data.getElementType() || !indexType ||
      !indexType.hasStaticShape() || !constant) {
    why = "its data or updates are not converted tensors of static shape, or "
          "its indices are not a constant";
    return failure();
  }
  if (!overwrites(node)) {
    why = "it reduces into its data";
    return failure();
  }
  indices = std::move(*constant);
  return success();
}

/// ScatterND whose index tuples enumerate a box of the data's leading dims
/// in row-major order: index[p] = offset + p.
static LogicalResult scatterND(OpBuilder &b, const NodeView &node,
                               SmallVectorImpl<Value> &results,
                               std::string &why) {
  RankedTensorType data, updates, indexType;
  SmallVector<int64_t> indices;
  if (failed(scatterOperands(node, data, updates, indexType, indices, why)))
    return failure();
  int64_t depth = indexType.getShape().back();
  ArrayRef<int64_t> grid = indexType.getShape().drop_back();
  int64_t rank = data.getRank();
  SmallVector<int64_t> box(grid);
  if (depth >= 1 && depth <= rank)
    llvm::append_range(box, data.getShape().drop_front(depth));
  if (depth < 1 || depth > rank || static_cast<int64_t>(grid.size()) != depth ||
      updates.getShape() != ArrayRef<int64_t>(box)) {
    why = "its indices do not address a box of its data's leading dims";
    return failure();
  }
  SmallVector<int64_t> offsets(rank, 0);
  for (int64_t d = 0; d < depth; ++d) {
    offsets[d] = indices[d] < 0 ? indices[d] + data.getDimSize(d) : indices[d];
    if (offsets[d] < 0 || offsets[d] + grid[d] > data.getDimSize(d)) {
      why = "its indices leave its data";
      return failure();
    }
  }
  // Walk the grid in row-major order; each tuple must be offset + position.
  SmallVector<int64_t> position(depth, 0);
  for (size_t tuple = 0; tuple * depth < indices.size(); ++tuple) {
    for (int64_t d = 0; d < depth; ++d) {
      int64_t index = indices[tuple * depth + d];
      if (index < 0)
        index += data.getDimSize(d);
      if (index != offsets[d] + position[d]) {
        why = "its indices do not address a box of its data's leading dims";
        return failure();
      }
    }
    for (int64_t d = depth - 1; d >= 0; --d) {
      if (++position[d] < grid[d])
        break;
      position[d] = 0;
    }
  }
  results.push_back(
      insertBox(b, node.loc(), node.inputs[2], node.inputs[0], offsets));
  return success();
}

/// ScatterElements whose indices, along `axis`, are offset + position and
/// whose updates span the data's other dims: a window of that axis.
static LogicalResult scatterElements(OpBuilder &b, const NodeView &node,
                                     SmallVectorImpl<Value> &results,
                                     std::string &why) {
  RankedTensorType data, updates, indexType;
  SmallVector<int64_t> indices;
  if (failed(scatterOperands(node, data, updates, indexType, indices, why)))
    return failure();
  int64_t rank = data.getRank();
  int64_t axis = node.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank || indexType.getShape() != updates.getShape()) {
    why = "its axis is outside its data, or its indices are not shaped as "
          "its updates";
    return failure();
  }
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && updates.getDimSize(d) != data.getDimSize(d)) {
      why = "its updates do not span its data off the scattered axis";
      return failure();
    }
  int64_t dim = data.getDimSize(axis);
  int64_t offset = indices.empty() ? 0 : indices.front();
  if (offset < 0)
    offset += dim;
  if (offset < 0 || offset + updates.getDimSize(axis) > dim) {
    why = "its indices leave its data";
    return failure();
  }
  SmallVector<int64_t> strides = computeStrides(updates.getShape());
  for (auto [flat, index] : llvm::enumerate(indices)) {
    int64_t along =
        (static_cast<int64_t>(flat) / strides[axis]) % updates.getDimSize(axis);
    if ((index < 0 ? index + dim : index) != offset + along) {
      why = "its indices are not one window of the scattered axis";
      return failure();
    }
  }
  SmallVector<int64_t> offsets(rank, 0);
  offsets[axis] = offset;
  results.push_back(
      insertBox(b, node.loc(), node.inputs[2], node.inputs[0], offsets));
  return success();
}

/// Pad in "constant" mode with constant, non-negative pads (an input from
/// opset 11, an attribute before): the input written into a fill.
static LogicalResult pad(OpBuilder &b, const NodeView &node,
                         SmallVectorImpl<Value> &results, std::string &why,
                         bool padsAsInput) {
  RankedTensorType type = node.resultType();
  RankedTensorType input = node.inputType(0);
  if (!type || !input || !isa<FloatType>(type.getElementType())) {
    why = "its input or result is not a converted float tensor of static "
          "shape";
    return failure();
  }
  auto mode = dyn_cast_or_null<StringAttr>(node.node.getONNXAttr("mode"));
  if (mode && mode.getValue() != "constant") {
    why = "it pads in mode '" + mode.getValue().str() + "'";
    return failure();
  }
  std::optional<SmallVector<int64_t>> pads =
      padsAsInput ? node.constantInts(1) : node.intsAttr("pads");
  double value = 0.0;
  if (padsAsInput && node.hasInput(2)) {
    std::optional<double> constant = node.constantFloat(2);
    if (!constant) {
      why = "its pad value is not a constant";
      return failure();
    }
    value = *constant;
  } else if (!padsAsInput) {
    value = node.floatAttr("value").value_or(0.0);
  }
  int64_t rank = input.getRank();
  SmallVector<int64_t> axes;
  if (padsAsInput && node.hasInput(3)) {
    std::optional<SmallVector<int64_t>> given = node.constantInts(3);
    if (!given) {
      why = "its axes are not a constant";
      return failure();
    }
    axes = *given;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (!pads || pads->size() != 2 * axes.size()) {
    why = "its pads are not a constant of two per axis";
    return failure();
  }
  SmallVector<int64_t> offsets(rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0)
      axis += rank;
    int64_t before = (*pads)[i], after = (*pads)[i + axes.size()];
    if (axis < 0 || axis >= rank || before < 0 || after < 0 ||
        input.getDimSize(axis) + before + after != type.getDimSize(axis)) {
      why = "its pads are negative, or do not give its result's shape";
      return failure();
    }
    offsets[axis] = before;
  }
  Value fill = filledTensor(b, node.loc(), type, value);
  results.push_back(insertBox(b, node.loc(), node.inputs[0], fill, offsets));
  return success();
}

template <bool PadsAsInput>
static LogicalResult padNode(OpBuilder &b, const NodeView &node,
                             SmallVectorImpl<Value> &results,
                             std::string &why) {
  return pad(b, node, results, why, PadsAsInput);
}

/// ConstantOfShape of a float value into a static result: a splat constant.
static LogicalResult constantOfShape(OpBuilder &b, const NodeView &node,
                                     SmallVectorImpl<Value> &results,
                                     std::string &why) {
  RankedTensorType type = node.resultType();
  auto value = dyn_cast_or_null<ElementsAttr>(node.node.getONNXAttr("value"));
  if (!type) {
    why = "its result is not a tensor of static shape";
    return failure();
  }
  if (!isa<FloatType>(type.getElementType())) {
    results.push_back(Value()); // an integer tensor, read from the graph
    return success();
  }
  double scalar = 0.0;
  if (value) {
    auto floats = dyn_cast<DenseFPElementsAttr>(value);
    if (!floats || floats.getNumElements() != 1) {
      why = "its value is not one float";
      return failure();
    }
    scalar = (*floats.value_begin<APFloat>()).convertToDouble();
  }
  // A constant, spelled as a Constant node's splat would be.
  results.push_back(arith::ConstantOp::create(
      b, node.loc(),
      DenseElementsAttr::get(
          type, FloatAttr::get(type.getElementType(), scalar).getValue())));
  return success();
}

ArrayRef<HandlerRow> onnx_to_linalg::assemblyHandlers() {
  static const HandlerRow rows[] = {
      {"ConstantOfShape", 9, constantOfShape},
      {"Pad", 2, padNode<false>},
      {"Pad", 11, padNode<true>},
      {"ScatterElements", 11, scatterElements},
      {"ScatterND", 11, scatterND},
  };
  return rows;
}
