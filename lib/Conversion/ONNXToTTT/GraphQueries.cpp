//===- GraphQueries.cpp - dataflow questions on ONNX graphs ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GraphQueries.h"
#include "Normalize.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::raise;

/// The number of inputs the raise reads from a node of `opType`: a node
/// with fewer (possible in hand-written IR, which no ONNX checker saw) is
/// never matched. Binary ops must have exactly two.
static std::pair<unsigned, bool> inputsRead(StringRef opType) {
  return llvm::StringSwitch<std::pair<unsigned, bool>>(opType)
      .Cases({"Add", "Sub", "Mul", "Div", "MatMul", "Pow"}, {2, true})
      .Cases({"SequenceInsert", "Expand", "Reshape", "Unsqueeze"}, {2, false})
      .Case("Slice", {3, false})
      .Case("Loop", {2, false})
      .Cases({"Constant", "SequenceEmpty"}, {0, false})
      .Default({1, false});
}

onnx::NodeOp raise::nodeOf(Value value, StringRef opType) {
  auto node = value.getDefiningOp<onnx::NodeOp>();
  if (!node || !node.isDefaultDomain() || node.getOpType() != opType)
    return nullptr;
  auto [count, exact] = inputsRead(opType);
  size_t actual = node.getInputs().size();
  if (actual < count || (exact && actual != count))
    return nullptr;
  return node;
}

static bool isFloatToFloatCast(onnx::NodeOp node) {
  auto in = dyn_cast<ShapedType>(node.getInputs()[0].getType());
  auto out = dyn_cast<ShapedType>(node->getResult(0).getType());
  return in && out && isa<FloatType>(in.getElementType()) &&
         in.getElementType() == out.getElementType();
}

/// True if `slice` keeps every element: starts 0, ends past every axis it
/// cuts (torch writes `x[:, :]` so, with INT64_MAX), steps 1.
bool raise::isWholeSlice(onnx::NodeOp slice) {
  auto inputs = slice.getInputs();
  if (inputs.size() < 3)
    return false;
  std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
  std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
  if (!starts || !ends || starts->size() != ends->size())
    return false;
  if (inputs.size() > 4 && !isa<NoneType>(inputs[4].getType())) {
    std::optional<SmallVector<int64_t>> steps = intConstant(inputs[4]);
    if (!steps || llvm::any_of(*steps, [](int64_t x) { return x != 1; }))
      return false;
  }
  auto type = dyn_cast<RankedTensorType>(inputs[0].getType());
  std::optional<SmallVector<int64_t>> axes;
  if (inputs.size() > 3 && !isa<NoneType>(inputs[3].getType())) {
    axes = intConstant(inputs[3]);
    if (!axes || axes->size() != starts->size())
      return false;
  }
  for (size_t i = 0; i < starts->size(); ++i) {
    if ((*starts)[i] != 0)
      return false;
    int64_t end = (*ends)[i];
    if (end >= (int64_t(1) << 62))
      continue;
    int64_t axis = axes ? (*axes)[i] : static_cast<int64_t>(i);
    if (!type || (axis < 0 && axis + type.getRank() < 0))
      return false;
    if (axis < 0)
      axis += type.getRank();
    if (axis >= type.getRank() || type.isDynamicDim(axis) ||
        end < type.getDimSize(axis))
      return false;
  }
  return true;
}

Value raise::skipLayout(Value value) {
  while (auto node = value.getDefiningOp<onnx::NodeOp>()) {
    if (!node.isDefaultDomain() || node.getInputs().empty() ||
        node->getNumResults() != 1)
      break;
    bool layoutOnly =
        llvm::StringSwitch<bool>(node.getOpType())
            .Cases({"Identity", "Unsqueeze", "Squeeze", "Expand", "Reshape"},
                   true)
            .Case("Cast", isFloatToFloatCast(node))
            // `torch.cat` of a list of one output.
            .Case("Concat", node.getInputs().size() == 1)
            .Case("Slice", isWholeSlice(node))
            .Default(false);
    if (!layoutOnly)
      break;
    value = node.getInputs()[0];
  }
  return value;
}

/// The elements attribute behind a Constant node or an initializer.
static ElementsAttr constantElements(Value value) {
  value = skipLayout(value);
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    return init.getValue();
  if (auto node = nodeOf(value, "Constant"))
    return dyn_cast_or_null<ElementsAttr>(node.getONNXAttr("value"));
  return nullptr;
}

std::optional<double> raise::scalarConstant(Value value) {
  if (auto node = nodeOf(skipLayout(value), "Constant"))
    if (auto f = dyn_cast_or_null<FloatAttr>(node.getONNXAttr("value_float")))
      return f.getValueAsDouble();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(constantElements(value));
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  Type element = dense.getElementType();
  if (isa<FloatType>(element))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (isa<IntegerType>(element)) {
    APInt value = *dense.getValues<APInt>().begin();
    // A bool true is the 1-bit 1, not -1.
    return static_cast<double>(element.isInteger(1) ? value.getZExtValue()
                                                    : value.getSExtValue());
  }
  return std::nullopt;
}

/// The integers of a resource blob of i64 or i32 elements.
static std::optional<SmallVector<int64_t>>
blobInts(DenseResourceElementsAttr blob) {
  auto type = dyn_cast<IntegerType>(blob.getElementType());
  AsmResourceBlob *data = blob.getRawHandle().getBlob();
  if (!type || !data || (type.getWidth() != 64 && type.getWidth() != 32))
    return std::nullopt;
  ArrayRef<char> bytes = data->getData();
  size_t width = type.getWidth() / 8;
  if (bytes.size() != blob.getNumElements() * width)
    return std::nullopt;
  SmallVector<int64_t> ints;
  ints.reserve(blob.getNumElements());
  for (size_t i = 0; i < bytes.size(); i += width) {
    if (width == 8) {
      int64_t x;
      std::memcpy(&x, &bytes[i], 8);
      ints.push_back(x);
    } else {
      int32_t x;
      std::memcpy(&x, &bytes[i], 4);
      ints.push_back(x);
    }
  }
  return ints;
}

std::optional<SmallVector<int64_t>> raise::readInts(ElementsAttr elements) {
  // Index and shape tensors are read whole; a larger one is a weight, or a
  // model's mistake, and is not read.
  if (!elements || elements.getNumElements() > kMaxIntConstantElements)
    return std::nullopt;
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(elements))
    return blobInts(blob);
  auto dense = dyn_cast<DenseElementsAttr>(elements);
  if (!dense || !isa<IntegerType>(dense.getElementType()))
    return std::nullopt;
  // A bool true is the 1-bit 1, not -1.
  bool isBool = dense.getElementType().isInteger(1);
  SmallVector<int64_t> ints;
  ints.reserve(dense.getNumElements());
  for (const APInt &element : dense.getValues<APInt>())
    ints.push_back(isBool ? element.getZExtValue() : element.getSExtValue());
  return ints;
}

std::optional<SmallVector<int64_t>> raise::intConstant(Value value) {
  return readInts(constantElements(value));
}

bool raise::isZeroConstant(Value value) {
  value = skipLayout(value);
  if (auto node = nodeOf(value, "ConstantOfShape")) {
    auto fill = dyn_cast_or_null<DenseElementsAttr>(node.getONNXAttr("value"));
    // Without a value attribute ConstantOfShape fills with float zeros.
    return !fill || (fill.isSplat() && isa<FloatType>(fill.getElementType()) &&
                     fill.getSplatValue<APFloat>().isZero());
  }
  ElementsAttr elements = constantElements(value);
  if (!elements || !isa<FloatType>(elements.getElementType()))
    return false;
  // Large initializers are resource blobs: all-zero bytes are +0.0.
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(elements)) {
    AsmResourceBlob *data = blob.getRawHandle().getBlob();
    return data &&
           llvm::all_of(data->getData(), [](char byte) { return byte == 0; });
  }
  auto dense = dyn_cast<DenseElementsAttr>(elements);
  return dense && llvm::all_of(dense.getValues<APFloat>(),
                               [](const APFloat &x) { return x.isZero(); });
}

Value raise::skipLayoutAndTransposes(Value value) {
  for (;;) {
    value = skipLayout(value);
    onnx::NodeOp turn = nodeOf(value, "Transpose");
    if (!turn || turn.getInputs().size() != 1)
      return value;
    value = turn.getInputs()[0];
  }
}

Value raise::transposedInput(Value value) {
  onnx::NodeOp node = nodeOf(value, "Transpose");
  if (!node)
    return nullptr;
  auto perm = dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("perm"));
  if (!perm || perm.size() < 2)
    return nullptr;
  ArrayRef<int64_t> p = perm.asArrayRef();
  int64_t n = p.size();
  for (int64_t i = 0; i < n - 2; ++i)
    if (p[i] != i)
      return nullptr;
  if (p[n - 2] != n - 1 || p[n - 1] != n - 2)
    return nullptr;
  return node.getInputs()[0];
}

/// True if the two innermost dims of `value` are static ones (or it is a
/// scalar): swapping them changes nothing.
static bool isTransposeInvariant(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  return llvm::all_of(shape.take_back(std::min<size_t>(2, shape.size())),
                      [](int64_t d) { return d == 1; });
}

namespace {
/// Decides `y == x^T` once per pair: a chain of updates (one per chunk)
/// reads the pairs below it many times over.
struct TransposeQuery {
  llvm::DenseMap<std::pair<Value, Value>, bool> known;

  bool operator()(Value y, Value x, int depth) {
    if (depth > kMaxDepth || !y || !x)
      return false;
    auto [it, inserted] = known.try_emplace({y, x}, false);
    if (!inserted)
      return it->second;
    bool result = compute(y, x, depth);
    known[{y, x}] = result;
    return result;
  }

  bool compute(Value y, Value x, int depth);

  /// Deeper than the update chain of any unrolled layer.
  static constexpr int kMaxDepth = 4096;
};
} // namespace

bool TransposeQuery::compute(Value y, Value x, int depth) {
  if (transposedInput(y) == x || transposedInput(x) == y)
    return true;
  // Zeros transposed are zeros (a folded transpose of a zero momentum).
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  auto yType = dyn_cast<RankedTensorType>(y.getType());
  if (xType && yType && xType.getRank() >= 2 && isZeroConstant(x) &&
      isZeroConstant(y)) {
    SmallVector<int64_t> swapped(xType.getShape());
    std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
    return ArrayRef<int64_t>(swapped) == yType.getShape();
  }
  // A constant next to the weight it was folded from (a stored W and the
  // folded W^T the outputs read).
  if (xType && yType && xType.getRank() >= 2 &&
      xType.getElementType() == yType.getElementType())
    if (auto xBytes = constantBytes(x))
      if (auto yBytes = constantBytes(y))
        return isInnerTransposeOf(yBytes->first, yBytes->second, xBytes->first,
                                  xBytes->second);
  // Two layouts of one tensor that differ by the inner-axes swap (k turned
  // to [B, H, D, T] next to k turned to [B, H, T, D]).
  onnx::NodeOp yTurn = nodeOf(y, "Transpose"), xTurn = nodeOf(x, "Transpose");
  if (yTurn && xTurn && yTurn.getInputs().size() == 1 &&
      xTurn.getInputs().size() == 1 &&
      yTurn.getInputs()[0] == xTurn.getInputs()[0]) {
    auto yPerm = dyn_cast_or_null<DenseI64ArrayAttr>(yTurn.getONNXAttr("perm"));
    auto xPerm = dyn_cast_or_null<DenseI64ArrayAttr>(xTurn.getONNXAttr("perm"));
    if (yPerm && xPerm && yPerm.size() == xPerm.size() && yPerm.size() >= 2) {
      SmallVector<int64_t> swapped(xPerm.asArrayRef());
      std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
      return ArrayRef<int64_t>(swapped) == yPerm.asArrayRef();
    }
  }
  auto yNode = y.getDefiningOp<onnx::NodeOp>();
  auto xNode = x.getDefiningOp<onnx::NodeOp>();
  if (!yNode || !xNode || yNode.getOpType() != xNode.getOpType() ||
      !yNode.isDefaultDomain() ||
      yNode.getInputs().size() != xNode.getInputs().size() ||
      yNode.getAttrs() != xNode.getAttrs())
    return false;
  // Elementwise functions of one value commute with the transpose.
  if (yNode.getInputs().size() == 1)
    return llvm::is_contained({"Neg", "Identity", "Cast", "Abs", "Exp", "Sqrt",
                               "Reciprocal", "Sigmoid", "Tanh", "Relu"},
                              yNode.getOpType()) &&
           (*this)(yNode.getInputs()[0], xNode.getInputs()[0], depth + 1);
  if (yNode.getInputs().size() != 2)
    return false;
  Value y0 = yNode.getInputs()[0], y1 = yNode.getInputs()[1];
  Value x0 = xNode.getInputs()[0], x1 = xNode.getInputs()[1];
  if (yNode.getOpType() == "MatMul")
    return (*this)(y0, x1, depth + 1) && (*this)(y1, x0, depth + 1);
  if (!llvm::is_contained({"Add", "Sub", "Mul", "Div"}, yNode.getOpType()))
    return false;
  auto operandOf = [&](Value a, Value b) {
    return (a == b && isTransposeInvariant(a)) || (*this)(a, b, depth + 1);
  };
  return operandOf(y0, x0) && operandOf(y1, x1);
}

bool raise::computesTransposeOf(Value y, Value x) {
  return TransposeQuery()(y, x, 0);
}

bool raise::matchCommutative(Value value, StringRef opType,
                             llvm::function_ref<bool(Value, Value)> match) {
  onnx::NodeOp node = nodeOf(value, opType);
  if (!node || node.getInputs().size() != 2)
    return false;
  Value a = node.getInputs()[0], b = node.getInputs()[1];
  return match(a, b) || match(b, a);
}

bool raise::isTimeAxis(int64_t axis, std::optional<int64_t> rank) {
  if (!rank)
    return axis == 2 || axis == -2;
  if (*rank < 3)
    return false;
  return axis == *rank - 2 || axis == -2;
}

std::optional<IndexWindow> raise::indexWindow(Value indices,
                                              ArrayRef<int64_t> bufferShape) {
  auto indexType = dyn_cast<RankedTensorType>(indices.getType());
  std::optional<SmallVector<int64_t>> values = intConstant(indices);
  if (!indexType || !values || !indexType.hasStaticShape())
    return std::nullopt;
  int64_t k = indexType.getShape().back();
  if (k < 1 || k > static_cast<int64_t>(bufferShape.size()) ||
      indexType.getRank() != k + 1)
    return std::nullopt;
  // The update's shape is the indices' leading dims and then the buffer's
  // trailing ones (ScatterND's rule; the checker saw the model).
  ArrayRef<int64_t> box = indexType.getShape().drop_back();
  // Entry (i_0, .., i_{k-1}) must be the point offset + (i_0, .., i_{k-1}).
  SmallVector<int64_t> offset(values->begin(), values->begin() + k);
  SmallVector<int64_t> point(k, 0);
  for (size_t entry = 0; entry * k < values->size(); ++entry) {
    for (int64_t d = 0; d < k; ++d)
      if ((*values)[entry * k + d] != offset[d] + point[d])
        return std::nullopt;
    for (int64_t d = k - 1; d >= 0; --d) {
      if (++point[d] < box[d])
        break;
      point[d] = 0;
    }
  }
  std::optional<IndexWindow> window;
  for (int64_t d = 0; d < k; ++d) {
    if (offset[d] == 0 && box[d] == bufferShape[d])
      continue;
    if (window || offset[d] < 0 || ShapedType::isDynamic(bufferShape[d]) ||
        offset[d] + box[d] > bufferShape[d])
      return std::nullopt;
    window = IndexWindow{d, offset[d], box[d]};
  }
  return window;
}

std::optional<int64_t> raise::staticTimeLength(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasRank() || type.getRank() < 3 ||
      type.isDynamicDim(type.getRank() - 2))
    return std::nullopt;
  return type.getDimSize(type.getRank() - 2);
}

std::optional<int64_t> raise::rankOf(Value value) {
  if (auto shaped = dyn_cast<ShapedType>(value.getType()))
    if (shaped.hasRank())
      return shaped.getRank();
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> raise::reduceAxes(onnx::NodeOp reduce) {
  if (reduce.getInputs().size() > 1)
    return intConstant(reduce.getInputs()[1]);
  if (auto attr =
          dyn_cast_or_null<DenseI64ArrayAttr>(reduce.getONNXAttr("axes")))
    return SmallVector<int64_t>(attr.asArrayRef());
  return std::nullopt;
}

/// A Split along the time axis: piece `index` covers [start, end).
static std::optional<SliceChain> splitPiece(Value value, bool timeLast) {
  onnx::NodeOp split = nodeOf(value, "Split");
  if (!split)
    return std::nullopt;
  auto axis = dyn_cast_or_null<IntegerAttr>(split.getONNXAttr("axis"));
  std::optional<int64_t> rank = rankOf(split.getInputs()[0]);
  int64_t a = axis ? axis.getInt() : 0;
  bool time =
      timeLast ? rank && (a == -1 || a == *rank - 1) : isTimeAxis(a, rank);
  if (!time)
    return std::nullopt;
  SliceChain chain;
  chain.root = split.getInputs()[0];
  chain.timeSlice = split;
  std::optional<SmallVector<int64_t>> sizes;
  if (split.getInputs().size() > 1)
    sizes = intConstant(split.getInputs()[1]);
  else if (auto attr =
               dyn_cast_or_null<DenseI64ArrayAttr>(split.getONNXAttr("split")))
    sizes = SmallVector<int64_t>(attr.asArrayRef());
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (sizes && index < sizes->size()) {
    int64_t start = 0;
    for (unsigned i = 0; i < index; ++i)
      start += (*sizes)[i];
    chain.start = start;
    chain.end = start + (*sizes)[index];
  }
  return chain;
}

std::optional<int64_t> raise::lastDimOf(Value value, unsigned depth) {
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    if (type.getRank() > 0 && !type.isDynamicDim(type.getRank() - 1))
      return type.getDimSize(type.getRank() - 1);
  if (depth > 32)
    return std::nullopt;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast_or_null<onnx::NodeOp>(arg.getOwner()->getParentOp());
    unsigned index = arg.getArgNumber();
    if (loop && loop.getOpType() == "Loop" && index >= 2 &&
        index < loop.getInputs().size())
      return lastDimOf(loop.getInputs()[index], depth + 1);
    return std::nullopt;
  }
  auto node = value.getDefiningOp<onnx::NodeOp>();
  if (!node || !node.isDefaultDomain() || node.getInputs().empty())
    return std::nullopt;
  StringRef op = node.getOpType();
  auto inputs = node.getInputs();
  if (op == "MatMul" && inputs.size() == 2)
    return lastDimOf(inputs[1], depth + 1);
  if (llvm::is_contained({"Add", "Sub", "Mul", "Div"}, op)) {
    std::optional<int64_t> widest;
    for (Value input : inputs)
      if (std::optional<int64_t> dim = lastDimOf(input, depth + 1))
        widest = std::max(widest.value_or(0), *dim);
    return widest;
  }
  if (llvm::is_contained({"Identity", "Cast", "Neg", "Expand", "Tanh",
                          "Sigmoid", "Sqrt", "Reciprocal"},
                         op))
    return lastDimOf(inputs[0], depth + 1);
  if (op == "Transpose") {
    // A perm that keeps the last axis last.
    auto perm = dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr("perm"));
    std::optional<int64_t> rank = rankOf(inputs[0]);
    if (!perm || !rank || perm.empty() || perm.asArrayRef().back() != *rank - 1)
      return std::nullopt;
    return lastDimOf(inputs[0], depth + 1);
  }
  if (op == "Gather" && inputs.size() == 2) {
    // Indexing another axis keeps the last.
    std::optional<int64_t> rank = rankOf(inputs[0]);
    int64_t axis = intAttr(node, "axis").value_or(0);
    if (!rank || axis == -1 || axis == *rank - 1)
      return std::nullopt;
    return lastDimOf(inputs[0], depth + 1);
  }
  if (op == "Reshape" && inputs.size() == 2) {
    // The target shape's last entry, a constant (maybe the last piece of
    // a Concat of dims).
    Value shape = inputs[1];
    if (onnx::NodeOp concat = nodeOf(shape, "Concat"))
      shape = concat.getInputs().back();
    std::optional<SmallVector<int64_t>> dims = intConstant(shape);
    if (!dims || dims->empty() || dims->back() <= 0)
      return std::nullopt;
    return dims->back();
  }
  if (op == "Slice" && inputs.size() > 3) {
    // A cut of other axes keeps the last.
    std::optional<int64_t> rank = rankOf(inputs[0]);
    std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
    if (!rank || !axes || llvm::any_of(*axes, [&](int64_t a) {
          return a == -1 || a == *rank - 1;
        }))
      return std::nullopt;
    return lastDimOf(inputs[0], depth + 1);
  }
  return std::nullopt;
}

Value raise::lowerTriangleOf(Value mask) {
  onnx::NodeOp trilu = nodeOf(skipLayout(mask), "Trilu");
  if (!trilu || intAttr(trilu, "upper").value_or(1) != 0)
    return nullptr;
  if (trilu.getInputs().size() > 1 &&
      !isa<NoneType>(trilu.getInputs()[1].getType())) {
    std::optional<SmallVector<int64_t>> k = intConstant(trilu.getInputs()[1]);
    if (!k || k->size() != 1 || (*k)[0] != 0)
      return nullptr;
  }
  return trilu.getInputs()[0];
}

std::optional<std::tuple<int64_t, int64_t, int64_t>>
raise::singleAxisCut(onnx::NodeOp slice) {
  auto inputs = slice.getInputs();
  if (inputs.size() < 4 || inputs.size() > 5)
    return std::nullopt;
  std::optional<int64_t> rank = rankOf(inputs[0]);
  if (!rank)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
  std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
  std::optional<SmallVector<int64_t>> axes = intConstant(inputs[3]);
  if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 ||
      axes->size() != 1)
    return std::nullopt;
  if (inputs.size() == 5 && !isa<NoneType>(inputs[4].getType()) &&
      intConstant(inputs[4]) != SmallVector<int64_t>{1})
    return std::nullopt;
  int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + *rank : (*axes)[0];
  if (axis < 0 || axis >= *rank)
    return std::nullopt;
  return std::make_tuple(axis, (*starts)[0], (*ends)[0]);
}

/// A Slice that keeps every element: from 0 to at least the size of each
/// of its axes (scripted exports write `x[:, :, s:e]` as a Slice of each
/// axis, the whole ones to INT64_MAX).
static bool takesEverything(onnx::NodeOp slice) {
  auto inputs = slice.getInputs();
  auto type = dyn_cast<RankedTensorType>(inputs[0].getType());
  std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
  std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
  std::optional<SmallVector<int64_t>> axes =
      inputs.size() < 4 ? std::nullopt : intConstant(inputs[3]);
  if (!type || !starts || !ends || starts->size() != ends->size())
    return false;
  constexpr int64_t kToTheEnd = std::numeric_limits<int32_t>::max();
  for (auto [i, start] : llvm::enumerate(*starts)) {
    int64_t axis =
        axes ? (i < axes->size() ? (*axes)[i] : -1) : static_cast<int64_t>(i);
    if (axis < 0)
      axis += type.getRank();
    if (start != 0 || axis < 0 || axis >= type.getRank())
      return false;
    int64_t end = (*ends)[i];
    if (end < kToTheEnd &&
        (type.isDynamicDim(axis) || end < type.getDimSize(axis)))
      return false;
  }
  return true;
}

std::optional<SliceChain> raise::sliceChain(Value value, bool timeLast) {
  if (std::optional<SliceChain> piece = splitPiece(value, timeLast))
    return piece;
  onnx::NodeOp slice = nodeOf(value, "Slice");
  if (!slice)
    return std::nullopt;
  SliceChain chain;
  // Slices keep the rank; the root's rank stands in for unranked links.
  Value root = value;
  while (onnx::NodeOp link = nodeOf(root, "Slice"))
    root = link.getInputs()[0];
  std::optional<int64_t> rootRank = rankOf(root);
  // A cut of other axes (a batch cut to another tensor's size) below the
  // time slice makes the sequence that cut tensor; one above it would make
  // the chunk no window of any sequence.
  auto otherCut = [&](onnx::NodeOp link) -> bool {
    if (!chain.timeSlice || takesEverything(link))
      return false;
    chain.root = link->getResult(0);
    return true;
  };
  for (; slice; slice = nodeOf(slice.getInputs()[0], "Slice")) {
    auto inputs = slice.getInputs();
    // A strided cut is no chunk of consecutive tokens.
    if (inputs.size() > 4) {
      std::optional<SmallVector<int64_t>> steps = intConstant(inputs[4]);
      if (!steps || llvm::any_of(*steps, [](int64_t s) { return s != 1; }))
        return std::nullopt;
    }
    std::optional<SmallVector<int64_t>> axes =
        inputs.size() < 4 ? std::nullopt : intConstant(inputs[3]);
    if (!axes || axes->size() != 1) {
      if (otherCut(slice))
        break;
      chain.root = inputs[0];
      continue;
    }
    chain.root = inputs[0];
    int64_t axis = (*axes)[0];
    std::optional<int64_t> rank = rankOf(inputs[0]);
    if (!rank)
      rank = rootRank;
    if (axis < 0 && rank)
      axis += *rank;
    std::optional<SmallVector<int64_t>> starts = intConstant(inputs[1]);
    std::optional<SmallVector<int64_t>> ends = intConstant(inputs[2]);
    bool lastAxis = (*axes)[0] == -1 || (rank && axis == *rank - 1);
    if (!timeLast && lastAxis && starts && ends && starts->size() == 1 &&
        (*ends)[0] == (*starts)[0] + 1) {
      chain.column = (*starts)[0];
      continue;
    }
    bool time = timeLast ? lastAxis : isTimeAxis(axis, rank);
    if (time && !chain.timeSlice) {
      chain.timeSlice = slice;
      if (starts && starts->size() == 1)
        chain.start = (*starts)[0];
      if (ends && ends->size() == 1)
        chain.end = (*ends)[0];
    } else if (otherCut(slice)) {
      break;
    }
  }
  return chain;
}

bool WholeSequences::holds(Value value) const {
  Value base = skipLayout(value);
  return llvm::none_of(weights, [&](Value weight) {
    return skipLayout(weight) == base || deps->dependsOn(value, weight);
  });
}

std::optional<SliceChain>
raise::tokenWindow(Value value, const WholeSequences *whole, bool timeLast) {
  if (!value)
    return std::nullopt;
  std::optional<SliceChain> chain = sliceChain(value, timeLast);
  if (!whole)
    return chain && chain->timeSlice ? chain : std::nullopt;
  // Every token of `value`, which may itself be a cut of a longer sequence
  // (LaCT-NVS updates on the input views' prefix of the tokens); one column
  // of a tensor is the tensor's column.
  SliceChain window;
  window.whole = true;
  window.root = value;
  onnx::NodeOp slice = nodeOf(value, "Slice");
  if (chain && chain->column && slice && !timeLast) {
    std::optional<SliceChain> inner = sliceChain(slice.getInputs()[0]);
    if (!inner || !inner->column) {
      window.root = slice.getInputs()[0];
      window.column = chain->column;
    }
  }
  // A sequence has a time axis before its feature axis.
  std::optional<int64_t> rank = rankOf(window.root);
  if ((rank && *rank < (timeLast ? 2 : 3)) || !whole->holds(window.root))
    return std::nullopt;
  return window;
}

std::optional<ShapeDim> raise::shapeDim(Value value) {
  value = skipLayout(value);
  if (onnx::NodeOp cast = nodeOf(value, "Cast"))
    value = skipLayout(cast.getInputs()[0]);
  onnx::NodeOp gather = nodeOf(value, "Gather");
  if (!gather || gather.getInputs().size() != 2)
    return std::nullopt;
  onnx::NodeOp shape = nodeOf(skipLayout(gather.getInputs()[0]), "Shape");
  if (!shape || shape.getInputs().size() != 1 || shape.getONNXAttr("start") ||
      shape.getONNXAttr("end"))
    return std::nullopt;
  auto gatherAxis = dyn_cast_or_null<IntegerAttr>(gather.getONNXAttr("axis"));
  if (gatherAxis && gatherAxis.getInt() != 0)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> index =
      intConstant(gather.getInputs()[1]);
  Value tensor = shape.getInputs()[0];
  std::optional<int64_t> rank = rankOf(tensor);
  if (!index || index->size() != 1 || !rank)
    return std::nullopt;
  int64_t axis = (*index)[0] < 0 ? (*index)[0] + *rank : (*index)[0];
  if (axis < 0 || axis >= *rank)
    return std::nullopt;
  return ShapeDim{tensor, axis};
}

bool raise::sameExtent(Value a, Value b, int64_t axis) {
  auto aType = dyn_cast<RankedTensorType>(a.getType());
  auto bType = dyn_cast<RankedTensorType>(b.getType());
  if (!aType || !bType || axis >= aType.getRank() || axis >= bType.getRank())
    return false;
  if (a == b)
    return true;
  int64_t aSize = aType.getDimSize(axis), bSize = bType.getDimSize(axis);
  if (!ShapedType::isDynamic(aSize) || !ShapedType::isDynamic(bSize))
    return aSize == bSize;
  auto symbol = [&](Value x) -> StringRef {
    auto arg = dyn_cast<BlockArgument>(x);
    auto graph =
        arg ? dyn_cast<onnx::GraphOp>(arg.getOwner()->getParentOp()) : nullptr;
    auto names = graph ? graph.getArgAttrOfType<ArrayAttr>(
                             arg.getArgNumber(), onnx::ONNXDialect::kDimParams)
                       : nullptr;
    auto name = names && axis < static_cast<int64_t>(names.size())
                    ? dyn_cast<StringAttr>(names[axis])
                    : nullptr;
    return name ? name.getValue() : StringRef();
  };
  StringRef aName = symbol(a);
  return !aName.empty() && aName == symbol(b);
}

bool raise::isTimeLengthOf(Value value, Value tensor) {
  if (std::optional<double> n = scalarConstant(value)) {
    std::optional<int64_t> length = staticTimeLength(tensor);
    return length && *n == static_cast<double>(*length);
  }
  std::optional<ShapeDim> dim = shapeDim(value);
  return dim && skipLayout(dim->tensor) == skipLayout(tensor) &&
         isTimeAxis(dim->axis, rankOf(tensor));
}

/// True if two cuts take the same tokens: equal constant bounds, or bounds
/// computed by the same nodes.
bool raise::sameWindow(const SliceChain &a, const SliceChain &b) {
  if (a.whole || b.whole)
    return a.whole && b.whole;
  if (a.start && a.end && b.start && b.end)
    return *a.start == *b.start && *a.end == *b.end;
  onnx::NodeOp x = a.timeSlice, y = b.timeSlice;
  if (!x || !y || x.getOpType() != y.getOpType())
    return false;
  if (x.getOpType() != "Slice")
    return x == y && a.start == b.start && a.end == b.end;
  return skipLayout(x.getInputs()[1]) == skipLayout(y.getInputs()[1]) &&
         skipLayout(x.getInputs()[2]) == skipLayout(y.getInputs()[2]);
}

const llvm::DenseSet<Value> &DependenceCache::computedFrom(Value source) {
  auto it = reached.find(source);
  if (it != reached.end())
    return it->second;
  llvm::DenseSet<Value> result;
  result.insert(source);
  SmallVector<Value> stack{source};
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    Operation *home = value.getParentRegion()->getParentOp();
    for (Operation *user : value.getUsers()) {
      // The user reads `value`, and so does every op around the user that
      // `value` is defined outside of: a subgraph reads its enclosing graph.
      for (Operation *reader = user; reader && !reader->isAncestor(home);
           reader = reader->getParentOp()) {
        // Shape and Size read only the shape of their input, not its numbers.
        if (reader == user && reader->getNumResults() == 1 &&
            (nodeOf(reader->getResult(0), "Shape") ||
             nodeOf(reader->getResult(0), "Size")))
          continue;
        for (Value next : reader->getResults())
          if (result.insert(next).second)
            stack.push_back(next);
      }
    }
  }
  return reached[source] = std::move(result);
}

bool DependenceCache::dependsOn(Value value, Value source) {
  return computedFrom(source).contains(value);
}
