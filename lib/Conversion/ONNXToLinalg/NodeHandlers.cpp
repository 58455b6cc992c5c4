//===- NodeHandlers.cpp - the handler table and shared builders ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "NodeHandlers.h"

#include "../ONNXToTTT/GraphQueries.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ttt;
using namespace mlir::ttt::onnx_to_linalg;

bool NodeView::hasInput(unsigned i) const {
  return i < numInputs() && !isa<NoneType>(node.getInputs()[i].getType()) &&
         !node.getInputs()[i].getDefiningOp<onnx::NoneOp>();
}

/// The elements of a Constant node or an initializer.
static ElementsAttr constantElementsOf(Value value) {
  if (auto init = value.getDefiningOp<onnx::InitializerOp>())
    return init.getValue();
  auto node = value.getDefiningOp<onnx::NodeOp>();
  if (node && node.isDefaultDomain() && node.getOpType() == "Constant")
    return dyn_cast_or_null<ElementsAttr>(node.getONNXAttr("value"));
  return {};
}

std::optional<SmallVector<int64_t>> NodeView::constantInts(unsigned i) const {
  if (!hasInput(i))
    return std::nullopt;
  ElementsAttr elements = constantElementsOf(node.getInputs()[i]);
  if (!elements || !elements.getElementType().isInteger())
    return std::nullopt;
  return raise::readInts(elements);
}

std::optional<double> NodeView::constantFloat(unsigned i) const {
  if (!hasInput(i))
    return std::nullopt;
  auto floats = dyn_cast_or_null<DenseFPElementsAttr>(
      constantElementsOf(node.getInputs()[i]));
  if (!floats || floats.getNumElements() != 1)
    return std::nullopt;
  return (*floats.value_begin<APFloat>()).convertToDouble();
}

int64_t NodeView::intAttr(StringRef name, int64_t otherwise) const {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(node.getONNXAttr(name)))
    return attr.getInt();
  return otherwise;
}

std::optional<SmallVector<int64_t>> NodeView::intsAttr(StringRef name) const {
  if (auto attr = dyn_cast_or_null<DenseI64ArrayAttr>(node.getONNXAttr(name)))
    return SmallVector<int64_t>(attr.asArrayRef());
  return std::nullopt;
}

std::optional<double> NodeView::floatAttr(StringRef name) const {
  if (auto attr = dyn_cast_or_null<FloatAttr>(node.getONNXAttr(name)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

static RankedTensorType staticType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() ? ranked : RankedTensorType();
}

RankedTensorType NodeView::resultType(unsigned i) const {
  return i < node->getNumResults() ? staticType(node->getResult(i).getType())
                                   : RankedTensorType();
}

RankedTensorType NodeView::inputType(unsigned i) const {
  return i < inputs.size() && inputs[i] ? staticType(inputs[i].getType())
                                        : RankedTensorType();
}

Handler onnx_to_linalg::findHandler(StringRef opType, int64_t opset) {
  Handler best = nullptr;
  int64_t bestSince = -1;
  for (ArrayRef<HandlerRow> table :
       {elementwiseHandlers(), contractionHandlers(), shapeHandlers(),
        reductionHandlers(), normalizationHandlers(), assemblyHandlers()})
    for (const HandlerRow &row : table)
      if (row.opType == opType && row.sinceVersion <= opset &&
          row.sinceVersion > bestSince) {
        best = row.handler;
        bestSince = row.sinceVersion;
      }
  return best;
}

Value onnx_to_linalg::scalarConstant(OpBuilder &b, Location loc, Type type,
                                     double value) {
  return arith::ConstantOp::create(b, loc, FloatAttr::get(type, value));
}

Value onnx_to_linalg::emptyTensor(OpBuilder &b, Location loc,
                                  RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value onnx_to_linalg::filledTensor(OpBuilder &b, Location loc,
                                   RankedTensorType type, double value) {
  Value scalar = scalarConstant(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, scalar, emptyTensor(b, loc, type))
      .getResult(0);
}

Value onnx_to_linalg::broadcastElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!inputType || !inputType.hasStaticShape() || inputType.getRank() > rank)
      return {};
    SmallVector<AffineExpr> exprs;
    int64_t lead = rank - inputType.getRank();
    for (int64_t d = 0; d < inputType.getRank(); ++d) {
      int64_t size = inputType.getDimSize(d);
      int64_t want = type.getDimSize(lead + d);
      if (size == want)
        exprs.push_back(b.getAffineDimExpr(lead + d));
      else if (size == 1)
        exprs.push_back(b.getAffineConstantExpr(0));
      else
        return {};
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value init = emptyTensor(b, loc, type);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

LogicalResult onnx_to_linalg::pushElementwise(
    OpBuilder &b, const NodeView &node, ValueRange inputs,
    RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    SmallVectorImpl<Value> &results, std::string &why) {
  Value result = broadcastElementwise(b, node.loc(), inputs, type, body);
  if (!result) {
    why = "its inputs do not broadcast to its result's shape";
    return failure();
  }
  results.push_back(result);
  return success();
}

/// Groups of contiguous dimensions of `from` and `to` with equal products,
/// dimensions of size 1 joining the group before them (or the first).
static bool groupDims(ArrayRef<int64_t> from, ArrayRef<int64_t> to,
                      SmallVectorImpl<ReassociationIndices> &fromGroups,
                      SmallVectorImpl<ReassociationIndices> &toGroups) {
  if (llvm::is_contained(from, 0) || llvm::is_contained(to, 0))
    return false;
  size_t i = 0, j = 0;
  auto skipOnes = [](ArrayRef<int64_t> dims, size_t &at,
                     ReassociationIndices &group) {
    while (at < dims.size() && dims[at] == 1)
      group.push_back(at++);
  };
  ReassociationIndices leadFrom, leadTo;
  skipOnes(from, i, leadFrom);
  skipOnes(to, j, leadTo);
  while (i < from.size() || j < to.size()) {
    if (i == from.size() || j == to.size())
      return false;
    ReassociationIndices f(leadFrom), t(leadTo);
    leadFrom.clear();
    leadTo.clear();
    int64_t pf = from[i];
    int64_t pt = to[j];
    f.push_back(i++);
    t.push_back(j++);
    while (pf != pt) {
      if (pf < pt) {
        if (i == from.size())
          return false;
        pf *= from[i];
        f.push_back(i++);
      } else {
        if (j == to.size())
          return false;
        pt *= to[j];
        t.push_back(j++);
      }
    }
    skipOnes(from, i, f);
    skipOnes(to, j, t);
    fromGroups.push_back(f);
    toGroups.push_back(t);
  }
  // All dims of size 1 on both sides: one group each, or none.
  if (!leadFrom.empty() || !leadTo.empty()) {
    if (!fromGroups.empty())
      return false;
    if (!leadFrom.empty() && !leadTo.empty()) {
      fromGroups.push_back(leadFrom);
      toGroups.push_back(leadTo);
    }
  }
  return true;
}

Value onnx_to_linalg::reshapeTo(OpBuilder &b, Location loc, Value source,
                                RankedTensorType type) {
  auto sourceType = dyn_cast<RankedTensorType>(source.getType());
  // Sizes a model declares may be anything; products are formed of
  // sizes below 2^31 only, so they cannot overflow.
  auto reasonable = [](RankedTensorType t) {
    return t && t.hasStaticShape() &&
           llvm::all_of(t.getShape(),
                        [](int64_t size) { return size < (int64_t(1) << 31); });
  };
  if (!reasonable(sourceType) || !reasonable(type) ||
      sourceType.getRank() > 16 || type.getRank() > 16 ||
      sourceType.getNumElements() != type.getNumElements())
    return {};
  if (sourceType.getShape() == type.getShape())
    return source;
  SmallVector<ReassociationIndices> fromGroups, toGroups;
  if (!groupDims(sourceType.getShape(), type.getShape(), fromGroups, toGroups))
    return {};
  SmallVector<int64_t> middle;
  for (const ReassociationIndices &group : fromGroups) {
    int64_t size = 1;
    for (int64_t d : group)
      size *= sourceType.getDimSize(d);
    middle.push_back(size);
  }
  auto middleType = RankedTensorType::get(middle, type.getElementType());
  Value value = source;
  if (middleType.getShape() != sourceType.getShape())
    value =
        tensor::CollapseShapeOp::create(b, loc, middleType, value, fromGroups);
  if (middleType.getShape() != type.getShape())
    value = tensor::ExpandShapeOp::create(b, loc, type, value, toGroups);
  return value;
}

Value onnx_to_linalg::insertBox(OpBuilder &b, Location loc, Value update,
                                Value data, ArrayRef<int64_t> offsets) {
  auto type = cast<RankedTensorType>(update.getType());
  SmallVector<OpFoldResult> offsetFolds, sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (auto [offset, size] : llvm::zip(offsets, type.getShape())) {
    offsetFolds.push_back(b.getIndexAttr(offset));
    sizes.push_back(b.getIndexAttr(size));
  }
  return tensor::InsertSliceOp::create(b, loc, update, data, offsetFolds, sizes,
                                       strides);
}
