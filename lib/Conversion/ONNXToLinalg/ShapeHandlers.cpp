//===- ShapeHandlers.cpp - constants, views, slices and casts ------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Nodes that move or cut data: every reshape (Reshape, Squeeze, Unsqueeze)
// is one collapse and one expansion of the static shapes, a Slice one
// `tensor.extract_slice`, a Concat one `tensor.concat`. Integer constants get
// no counterpart: the handlers that read shapes and bounds read them from
// the graph.
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

/// The static types of the node's first input and result, or false with
/// `why` set.
static bool staticInputAndResult(const NodeView &node, RankedTensorType &type,
                                 RankedTensorType &input, std::string &why) {
  type = node.resultType();
  input = node.inputType(0);
  if (type && input)
    return true;
  why = "its input or result is not a converted tensor of static shape";
  return false;
}

static LogicalResult constant(OpBuilder &b, const NodeView &node,
                              SmallVectorImpl<Value> &results,
                              std::string &why) {
  auto value = dyn_cast_or_null<ElementsAttr>(node.node.getONNXAttr("value"));
  if (!value) {
    why = "its value is not a tensor attribute";
    return failure();
  }
  if (!isa<FloatType>(value.getElementType()) &&
      !value.getElementType().isInteger(1)) {
    results.push_back(Value()); // shapes and indices, read from the graph
    return success();
  }
  results.push_back(
      arith::ConstantOp::create(b, node.loc(), cast<TypedAttr>(value)));
  return success();
}

static LogicalResult identity(OpBuilder &, const NodeView &node,
                              SmallVectorImpl<Value> &results,
                              std::string &why) {
  if (!node.inputs.empty() && node.inputs[0] &&
      node.inputs[0].getType() == node.node->getResult(0).getType()) {
    results.push_back(node.inputs[0]);
    return success();
  }
  why = "its input is not converted, or its type differs from its result's";
  return failure();
}

static LogicalResult castNode(OpBuilder &b, const NodeView &node,
                              SmallVectorImpl<Value> &results,
                              std::string &why) {
  // Positions computed once as integers (a rotary embedding's) and cast to
  // float: a float constant.
  RankedTensorType result = node.resultType();
  std::optional<SmallVector<int64_t>> ints = node.constantInts(0);
  if (result && ints && isa<FloatType>(result.getElementType()) &&
      static_cast<int64_t>(ints->size()) == result.getNumElements()) {
    SmallVector<APFloat> values;
    auto semantics =
        &cast<FloatType>(result.getElementType()).getFloatSemantics();
    for (int64_t v : *ints) {
      APFloat value(*semantics);
      (void)value.convertFromAPInt(APInt(64, v, /*isSigned=*/true),
                                   /*IsSigned=*/true,
                                   APFloat::rmNearestTiesToEven);
      values.push_back(value);
    }
    results.push_back(arith::ConstantOp::create(
        b, node.loc(), DenseElementsAttr::get(result, values)));
    return success();
  }
  RankedTensorType type, input;
  if (!staticInputAndResult(node, type, input, why))
    return failure();
  if (input == type) {
    results.push_back(node.inputs[0]);
    return success();
  }
  auto from = dyn_cast<FloatType>(input.getElementType());
  auto to = dyn_cast<FloatType>(type.getElementType());
  bool toBool = type.getElementType().isInteger(1);
  bool fromBool = input.getElementType().isInteger(1);
  if (input.getShape() == type.getShape() &&
      ((from && toBool) || (fromBool && to))) {
    // A mask: true where the float is not zero (NaN included), and back.
    results.push_back(broadcastElementwise(
        b, node.loc(), node.inputs.take_front(), type,
        [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
          if (fromBool)
            return arith::UIToFPOp::create(nb, loc, to, args[0]);
          Value zero = arith::ConstantOp::create(nb, loc, from,
                                                 nb.getFloatAttr(from, 0.0));
          return arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UNE,
                                       args[0], zero);
        }));
    return success();
  }
  if (!from || !to || input.getShape() != type.getShape()) {
    why = "it casts other than between float types, or between a float "
          "and a bool tensor";
    return failure();
  }
  bool widens = to.getWidth() > from.getWidth();
  results.push_back(broadcastElementwise(
      b, node.loc(), node.inputs.take_front(), type,
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        if (widens)
          return arith::ExtFOp::create(nb, loc, to, args[0]);
        return arith::TruncFOp::create(nb, loc, to, args[0]);
      }));
  return success();
}

static LogicalResult transpose(OpBuilder &b, const NodeView &node,
                               SmallVectorImpl<Value> &results,
                               std::string &why) {
  RankedTensorType type, input;
  if (!staticInputAndResult(node, type, input, why))
    return failure();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> given = node.intsAttr("perm"))
    perm = *given;
  else
    for (int64_t d = input.getRank(); d-- > 0;)
      perm.push_back(d);
  if (!isPermutationVector(perm) ||
      static_cast<int64_t>(perm.size()) != input.getRank()) {
    why = "its perm is not a permutation of its input's dims";
    return failure();
  }
  Value init = emptyTensor(b, node.loc(), type);
  results.push_back(
      linalg::TransposeOp::create(b, node.loc(), node.inputs[0], init, perm)
          ->getResult(0));
  return success();
}

/// Reshape, Squeeze, Unsqueeze, Flatten: the static result shape says it
/// all.
static LogicalResult reshape(OpBuilder &b, const NodeView &node,
                             SmallVectorImpl<Value> &results,
                             std::string &why) {
  RankedTensorType type = node.resultType();
  RankedTensorType input = node.inputType(0);
  if (!type || !input || input.getElementType() != type.getElementType()) {
    why = "its input or result is not a converted tensor of static shape";
    return failure();
  }
  Value result = reshapeTo(b, node.loc(), node.inputs[0], type);
  if (!result) {
    why = "its shapes are not a regrouping of contiguous dims";
    return failure();
  }
  results.push_back(result);
  return success();
}

static LogicalResult expand(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType type = node.resultType();
  RankedTensorType input = node.inputType(0);
  if (!type || !input || input.getElementType() != type.getElementType()) {
    why = "its input or result is not a converted tensor of static shape";
    return failure();
  }
  Value result = broadcastElementwise(
      b, node.loc(), node.inputs.take_front(), type,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  if (!result) {
    why = "its input does not broadcast to its result";
    return failure();
  }
  results.push_back(result);
  return success();
}

/// Tile: a dim of size n repeated r times is the [r, n] broadcast of an
/// [1, n] view, merged back (`w.repeat(b, 1, 1)`, a weight tiled over the
/// batch); a dim of size 1 is a broadcast.
static LogicalResult tile(OpBuilder &b, const NodeView &node,
                          SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType type = node.resultType();
  RankedTensorType input = node.inputType(0);
  std::optional<SmallVector<int64_t>> repeats = node.constantInts(1);
  if (!type || !input || input.getElementType() != type.getElementType() ||
      input.getRank() != type.getRank()) {
    why = "its input or result is not a converted tensor of static shape";
    return failure();
  }
  if (!repeats || static_cast<int64_t>(repeats->size()) != input.getRank()) {
    why = "its repeats are not a constant, one per dimension";
    return failure();
  }
  SmallVector<int64_t> split, broadcast;
  for (auto [size, repeat, result] :
       llvm::zip(input.getShape(), *repeats, type.getShape())) {
    if (repeat < 0 || result != size * repeat) {
      why = "its result is not its input repeated";
      return failure();
    }
    if (size != 1 && repeat != 1) {
      split.append({1, size});
      broadcast.append({repeat, size});
    } else {
      split.push_back(size);
      broadcast.push_back(result);
    }
  }
  Type element = type.getElementType();
  Value view = reshapeTo(b, node.loc(), node.inputs[0],
                         RankedTensorType::get(split, element));
  Value repeated =
      view ? broadcastElementwise(
                 b, node.loc(), view, RankedTensorType::get(broadcast, element),
                 [](OpBuilder &, Location, ValueRange args) { return args[0]; })
           : Value();
  Value result = repeated ? reshapeTo(b, node.loc(), repeated, type) : Value();
  if (!result) {
    why = "its input does not broadcast to its result";
    return failure();
  }
  results.push_back(result);
  return success();
}

/// Slice with its bounds as attributes (opset 1) or as constant inputs
/// (opset 10 on).
static LogicalResult sliceWith(OpBuilder &b, const NodeView &node,
                               SmallVectorImpl<Value> &results,
                               std::string &why, bool boundsAsInputs) {
  RankedTensorType type, input;
  if (!staticInputAndResult(node, type, input, why))
    return failure();
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (boundsAsInputs) {
    starts = node.constantInts(1);
    ends = node.constantInts(2);
    if (node.hasInput(3))
      axes = node.constantInts(3);
    if (node.hasInput(4))
      steps = node.constantInts(4);
    if (!starts || !ends || (node.hasInput(3) && !axes) ||
        (node.hasInput(4) && !steps)) {
      why = "its bounds are not constants";
      return failure();
    }
  } else {
    starts = node.intsAttr("starts");
    ends = node.intsAttr("ends");
    axes = node.intsAttr("axes");
    if (!starts || !ends) {
      why = "it has no starts and ends";
      return failure();
    }
  }
  int64_t rank = input.getRank();
  size_t count = starts->size();
  if (ends->size() != count || (axes && axes->size() != count) ||
      (steps && steps->size() != count)) {
    why = "its bounds differ in length";
    return failure();
  }
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(input.getDimSize(d)));
  llvm::SmallDenseSet<int64_t> seen;
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axes ? (*axes)[i] : static_cast<int64_t>(i);
    if (axis < 0)
      axis += rank;
    int64_t step = steps ? (*steps)[i] : 1;
    if (axis < 0 || axis >= rank || !seen.insert(axis).second || step <= 0) {
      why = "it cuts an axis twice, outside its input, or backwards";
      return failure();
    }
    int64_t dim = input.getDimSize(axis);
    auto clamp = [&](int64_t at) {
      if (at < 0)
        at = at < -dim ? 0 : at + dim;
      return std::min(at, dim);
    };
    int64_t start = clamp((*starts)[i]);
    int64_t end = clamp((*ends)[i]);
    int64_t size = end > start ? (end - start + step - 1) / step : 0;
    if (size == 0) {
      why = "it cuts an empty slice";
      return failure();
    }
    offsets[axis] = b.getIndexAttr(start);
    sizes[axis] = b.getIndexAttr(size);
    strides[axis] = b.getIndexAttr(step);
    if (size != type.getDimSize(axis)) {
      why = "its bounds do not give its result's shape";
      return failure();
    }
  }
  results.push_back(tensor::ExtractSliceOp::create(
      b, node.loc(), type, node.inputs[0], offsets, sizes, strides));
  return success();
}

static LogicalResult sliceAttrs(OpBuilder &b, const NodeView &node,
                                SmallVectorImpl<Value> &results,
                                std::string &why) {
  return sliceWith(b, node, results, why, /*boundsAsInputs=*/false);
}

static LogicalResult sliceInputs(OpBuilder &b, const NodeView &node,
                                 SmallVectorImpl<Value> &results,
                                 std::string &why) {
  return sliceWith(b, node, results, why, /*boundsAsInputs=*/true);
}

static LogicalResult concat(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType type = node.resultType();
  if (!type || node.numInputs() == 0) {
    why = "its result is not a tensor of static shape";
    return failure();
  }
  for (unsigned i = 0; i < node.numInputs(); ++i)
    if (!node.inputType(i) ||
        node.inputType(i).getElementType() != type.getElementType()) {
      why = "input " + std::to_string(i) + " is not a converted tensor";
      return failure();
    }
  int64_t axis = node.intAttr("axis", 0);
  if (axis < 0)
    axis += type.getRank();
  if (axis < 0 || axis >= type.getRank()) {
    why = "its axis is outside its result";
    return failure();
  }
  if (node.numInputs() == 1) {
    results.push_back(node.inputs[0]);
    return success();
  }
  results.push_back(
      tensor::ConcatOp::create(b, node.loc(), type, axis, node.inputs));
  return success();
}

/// Split into the sizes the node gives (an input from opset 13, an
/// attribute before), or into equal parts (`num_outputs` from opset 18).
static LogicalResult split(OpBuilder &b, const NodeView &node,
                           SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType input = node.inputType(0);
  if (!input) {
    why = "its input is not a converted tensor of static shape";
    return failure();
  }
  int64_t rank = input.getRank();
  int64_t axis = node.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    why = "its axis is outside its input";
    return failure();
  }
  // The results' own static types say the sizes, whichever way the node
  // spelled them.
  int64_t offset = 0;
  for (unsigned i = 0; i < node.node->getNumResults(); ++i) {
    RankedTensorType type = node.resultType(i);
    if (!type || type.getRank() != rank) {
      why = "a result is not a tensor of static shape";
      return failure();
    }
    int64_t size = type.getDimSize(axis);
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    offsets[axis] = b.getIndexAttr(offset);
    if (size == 0) {
      why = "it makes an empty part";
      return failure();
    }
    results.push_back(tensor::ExtractSliceOp::create(
        b, node.loc(), type, node.inputs[0], offsets, sizes, strides));
    offset += size;
  }
  if (offset != input.getDimSize(axis)) {
    why = "its parts do not cover its input";
    return failure();
  }
  return success();
}

/// Gather with constant indices: a slice per index, the indexed dim
/// dropped for a scalar index and the slices concatenated for a list.
static LogicalResult gather(OpBuilder &b, const NodeView &node,
                            SmallVectorImpl<Value> &results, std::string &why) {
  RankedTensorType input = node.inputType(0);
  RankedTensorType type = node.resultType();
  std::optional<SmallVector<int64_t>> indices = node.constantInts(1);
  auto indexType =
      dyn_cast<RankedTensorType>(node.node.getInputs()[1].getType());
  if (!input || !type || !indices || !indexType || indexType.getRank() > 1 ||
      indices->empty()) {
    why = "its data is not converted, or its indices are not a constant "
          "scalar or list";
    return failure();
  }
  int64_t rank = input.getRank();
  int64_t axis = node.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank) {
    why = "its axis is outside its input";
    return failure();
  }
  int64_t dim = input.getDimSize(axis);
  // A list of consecutive indices is one window: one slice, the spelling
  // a Slice would have.
  SmallVector<int64_t> normalized;
  for (int64_t index : *indices)
    normalized.push_back(index < 0 ? index + dim : index);
  bool consecutive = indexType.getRank() == 1 && normalized.front() >= 0 &&
                     normalized.back() < dim;
  for (size_t i = 1; consecutive && i < normalized.size(); ++i)
    consecutive = normalized[i] == normalized[i - 1] + 1;
  // `size` entries of the data from `offset` along the axis.
  auto window = [&](int64_t offset, int64_t size) -> Value {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    for (int64_t extent : shape)
      sizes.push_back(b.getIndexAttr(extent));
    offsets[axis] = b.getIndexAttr(offset);
    return tensor::ExtractSliceOp::create(
        b, node.loc(), RankedTensorType::get(shape, input.getElementType()),
        node.inputs[0], offsets, sizes, strides);
  };
  Value gathered;
  if (consecutive) {
    gathered =
        window(normalized.front(), static_cast<int64_t>(normalized.size()));
  } else {
    SmallVector<Value> pieces;
    for (int64_t index : normalized) {
      if (index < 0 || index >= dim) {
        why = "an index is outside its data";
        return failure();
      }
      pieces.push_back(window(index, 1));
    }
    gathered = pieces.front();
    if (pieces.size() > 1)
      gathered = tensor::ConcatOp::create(b, node.loc(), axis, pieces);
  }
  Value result = reshapeTo(b, node.loc(), gathered, type);
  if (!result) {
    why = "its result's shape is not its data's with the indexed dim";
    return failure();
  }
  results.push_back(result);
  return success();
}

ArrayRef<HandlerRow> onnx_to_linalg::shapeHandlers() {
  static const HandlerRow rows[] = {
      {"Constant", 9, constant}, {"Identity", 1, identity},
      {"Cast", 6, castNode},     {"Transpose", 1, transpose},
      {"Reshape", 5, reshape},   {"Squeeze", 1, reshape},
      {"Unsqueeze", 1, reshape}, {"Flatten", 1, reshape},
      {"Expand", 8, expand},     {"Tile", 6, tile},
      {"Slice", 1, sliceAttrs},  {"Slice", 10, sliceInputs},
      {"Concat", 4, concat},     {"Split", 2, split},
      {"Gather", 1, gather},
  };
  return rows;
}
