//===- ONNXBuilder.h - one default-domain onnx.node per call ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A small builder for the passes that write ONNX nodes (the linattn export,
// the normalization of imported graphs, the raise): one call, one node, with
// the attribute and constant spellings of the current opsets.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXBUILDER_H
#define TTT_DIALECT_ONNX_IR_ONNXBUILDER_H

#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"
#include "ttt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/Sequence.h"

#include <limits>

namespace mlir::ttt::onnx {

//===----------------------------------------------------------------------===//

/// Builds default-domain onnx.node ops at one location for one float element
/// type. Results are ranked tensors whose dims are all dynamic (the exporter
/// writes no value_info for them; the runtime infers the shapes).
class OnnxBuilder {
public:
  OnnxBuilder(OpBuilder &b, Location loc, Type elem)
      : b(b), loc(loc), elem(elem) {}

  OpBuilder &builder() { return b; }
  Type elementType() const { return elem; }

  /// A float tensor type of `rank` dynamic dims.
  Type floats(int64_t rank) const { return dynamicType(rank, elem); }
  /// A 1-D i64 tensor of `n` elements (dynamic when n < 0).
  Type ints(int64_t n) const {
    return RankedTensorType::get({n < 0 ? ShapedType::kDynamic : n},
                                 b.getI64Type());
  }

  Value node(StringRef opType, ValueRange inputs, Type result,
             ArrayRef<NamedAttribute> attrs = {}) {
    return build(opType, inputs, TypeRange{result}, attrs, 0)->getResult(0);
  }
  NodeOp build(StringRef opType, ValueRange inputs, TypeRange results,
               ArrayRef<NamedAttribute> attrs, unsigned regions) {
    DictionaryAttr dict =
        attrs.empty() ? DictionaryAttr() : b.getDictionaryAttr(attrs);
    return NodeOp::create(b, loc, results, opType, /*domain=*/"", dict,
                          /*node_name=*/nullptr, /*outputs=*/nullptr,
                          /*doc_string=*/nullptr, inputs, regions);
  }

  NamedAttribute attr(StringRef name, int64_t value) {
    return b.getNamedAttr(name, b.getI64IntegerAttr(value));
  }
  NamedAttribute attr(StringRef name, ArrayRef<int64_t> values) {
    return b.getNamedAttr(name, b.getDenseI64ArrayAttr(values));
  }

  /// `onnx.node "Constant"` holding `value`.
  Value constant(DenseElementsAttr value) {
    return node("Constant", {}, value.getType(),
                {b.getNamedAttr("value", value)});
  }
  /// A 1-D i64 constant (shapes, axes, slice bounds).
  Value i64s(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      b.getI64Type());
    return constant(DenseElementsAttr::get(type, values));
  }
  /// A 0-D i64 constant.
  Value i64Scalar(int64_t value) {
    auto type = RankedTensorType::get({}, b.getI64Type());
    return constant(DenseElementsAttr::get(type, value));
  }
  /// A 0-D constant of the element type.
  Value scalar(double value) {
    auto type = RankedTensorType::get({}, elem);
    return constant(DenseElementsAttr::get(type, FloatAttr::get(elem, value)));
  }

  /// Dims [start, end) of `x` as a 1-D i64 tensor: a constant when they are
  /// static, a Shape node otherwise.
  Value shape(Value x, int64_t start, int64_t end) {
    auto type = cast<RankedTensorType>(x.getType());
    ArrayRef<int64_t> dims = type.getShape().slice(start, end - start);
    if (!ShapedType::isDynamicShape(dims))
      return i64s(dims);
    if (defaultOpset() >= 15)
      return node("Shape", {x}, ints(end - start),
                  {attr("start", start), attr("end", end)});
    // Shape takes start and end from opset 15 on; before, slice the shape.
    Value whole = node("Shape", {x}, ints(type.getRank()));
    Value from = i64s({start});
    Value to = i64s({end});
    Value axes = i64s({0});
    return node("Slice", {whole, from, to, axes}, ints(end - start));
  }

  /// The default-domain opset the enclosing model imports (the newest this
  /// builder writes when it does not say).
  int64_t defaultOpset() const {
    Block *block = b.getInsertionBlock();
    std::optional<int64_t> opset =
        block ? getDefaultOpset(block->getParentOp()) : std::nullopt;
    return opset.value_or(std::numeric_limits<int64_t>::max());
  }
  Value dim(Value x, int64_t d) { return shape(x, d, d + 1); }

  Value binary(StringRef opType, Value lhs, Value rhs) {
    auto l = cast<RankedTensorType>(lhs.getType());
    auto r = cast<RankedTensorType>(rhs.getType());
    return node(
        opType, {lhs, rhs},
        dynamicType(std::max(l.getRank(), r.getRank()), l.getElementType()));
  }
  Value add(Value l, Value r) { return binary("Add", l, r); }
  Value sub(Value l, Value r) { return binary("Sub", l, r); }
  Value mul(Value l, Value r) { return binary("Mul", l, r); }
  Value div(Value l, Value r) { return binary("Div", l, r); }
  Value matmul(Value l, Value r) { return binary("MatMul", l, r); }
  Value mul(Value x, double factor) {
    return factor == 1.0 ? x : mul(x, scalar(factor));
  }

  Value unary(StringRef opType, Value x) {
    return node(opType, {x}, x.getType());
  }
  Value sigmoid(Value x) { return unary("Sigmoid", x); }
  Value silu(Value x) { return mul(x, sigmoid(x)); }

  Value transpose(Value x, ArrayRef<int64_t> perm) {
    return node("Transpose", {x}, floats(perm.size()), {attr("perm", perm)});
  }
  /// Swaps the two innermost dims.
  Value transposeInner(Value x) {
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    return transpose(x, perm);
  }
  Value unsqueeze(Value x, ArrayRef<int64_t> axes) {
    auto type = cast<RankedTensorType>(x.getType());
    return node(
        "Unsqueeze", {x, i64s(axes)},
        dynamicType(type.getRank() + axes.size(), type.getElementType()));
  }
  Value squeeze(Value x, ArrayRef<int64_t> axes) {
    auto type = cast<RankedTensorType>(x.getType());
    return node(
        "Squeeze", {x, i64s(axes)},
        dynamicType(type.getRank() - axes.size(), type.getElementType()));
  }
  Value concat(ValueRange parts, int64_t axis) {
    auto type = cast<RankedTensorType>(parts.front().getType());
    if (type.getElementType().isInteger(64) && type.getRank() == 1)
      return node("Concat", parts, ints(-1), {attr("axis", axis)});
    return node("Concat", parts, sameRank(parts.front()), {attr("axis", axis)});
  }
  /// x[.., start:end, ..] on `axis`; bounds are 1-D i64 tensors of one value.
  Value slice(Value x, Value start, Value end, int64_t axis) {
    return node("Slice", {x, start, end, i64s({axis})}, sameRank(x));
  }
  Value reshape(Value x, Value shape, int64_t rank) {
    auto type = cast<RankedTensorType>(x.getType());
    return node("Reshape", {x, shape},
                dynamicType(rank, type.getElementType()));
  }
  Value reduceSum(Value x, ArrayRef<int64_t> axes, bool keepDims) {
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    return node("ReduceSum", {x, i64s(axes)},
                floats(keepDims ? rank : rank - axes.size()),
                {attr("keepdims", keepDims ? 1 : 0)});
  }
  /// A float tensor of `shape` (a 1-D i64 tensor) filled with `value`.
  Value full(Value shape, int64_t rank, double value) {
    auto type = RankedTensorType::get({1}, elem);
    auto fill = DenseElementsAttr::get(type, FloatAttr::get(elem, value));
    return node("ConstantOfShape", {shape}, floats(rank),
                {b.getNamedAttr("value", fill)});
  }
  /// `x` broadcast to `shape` (a 1-D i64 tensor).
  Value expand(Value x, Value shape, int64_t rank) {
    return node("Expand", {x, shape}, floats(rank));
  }
  /// The TensorProto data type code of a float type (f32 for any other).
  static int64_t floatTypeCode(Type type) {
    return type.isF64() ? 11 : type.isF16() ? 10 : type.isBF16() ? 16 : 1;
  }
  /// i64 -> the float element type (ONNX TensorProto data type codes).
  Value toFloat(Value x) {
    int64_t to = floatTypeCode(elem);
    return node("Cast", {x},
                RankedTensorType::get(
                    cast<RankedTensorType>(x.getType()).getShape(), elem),
                {attr("to", to)});
  }

  /// `v` as a value of `type`: a fresh value of this pattern (no use yet)
  /// gets the type in place, anything else goes through an Identity node.
  Value retype(Value v, Type type) {
    if (v.getType() == type)
      return v;
    if (v.use_empty() && v.getDefiningOp<NodeOp>()) {
      v.setType(type);
      return v;
    }
    return node("Identity", {v}, type);
  }

private:
  static Type dynamicType(int64_t rank, Type elem) {
    return RankedTensorType::get(
        SmallVector<int64_t>(rank, ShapedType::kDynamic), elem);
  }
  Type sameRank(Value x) const {
    auto type = cast<RankedTensorType>(x.getType());
    return dynamicType(type.getRank(), type.getElementType());
  }

  OpBuilder &b;
  Location loc;
  Type elem;
};

} // namespace mlir::ttt::onnx

#endif // TTT_DIALECT_ONNX_IR_ONNXBUILDER_H
