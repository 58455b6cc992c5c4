//===- TypeConversion.cpp - ONNX types <-> MLIR types ---------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TypeConversion.h"

#include "ttt/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ttt::onnx;

Type mlir::ttt::onnx::convertElementType(int32_t dataType, MLIRContext *context,
                                         std::string &whyNot) {
  Builder b(context);
  switch (dataType) {
  case pb::TensorProto::FLOAT:
    return b.getF32Type();
  case pb::TensorProto::DOUBLE:
    return b.getF64Type();
  case pb::TensorProto::FLOAT16:
    return b.getF16Type();
  case pb::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case pb::TensorProto::BOOL:
    return b.getI1Type();
  case pb::TensorProto::INT8:
    return b.getIntegerType(8);
  case pb::TensorProto::INT16:
    return b.getIntegerType(16);
  case pb::TensorProto::INT32:
    return b.getIntegerType(32);
  case pb::TensorProto::INT64:
    return b.getIntegerType(64);
  case pb::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case pb::TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case pb::TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case pb::TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case pb::TensorProto::COMPLEX64:
    return ComplexType::get(b.getF32Type());
  case pb::TensorProto::COMPLEX128:
    return ComplexType::get(b.getF64Type());
  case pb::TensorProto::STRING:
    whyNot = "string tensors are not supported";
    return {};
  case pb::TensorProto::UNDEFINED:
    whyNot = "the element type is UNDEFINED";
    return {};
  default:
    whyNot = "element type " + std::to_string(dataType) +
             " is not supported (ttt reads types 1 to 16)";
    return {};
  }
}

int32_t mlir::ttt::onnx::getDataType(Type type) {
  if (type.isF32())
    return pb::TensorProto::FLOAT;
  if (type.isF64())
    return pb::TensorProto::DOUBLE;
  if (type.isF16())
    return pb::TensorProto::FLOAT16;
  if (type.isBF16())
    return pb::TensorProto::BFLOAT16;
  if (auto complex = dyn_cast<ComplexType>(type)) {
    if (complex.getElementType().isF32())
      return pb::TensorProto::COMPLEX64;
    if (complex.getElementType().isF64())
      return pb::TensorProto::COMPLEX128;
    return pb::TensorProto::UNDEFINED;
  }
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return pb::TensorProto::UNDEFINED;
  if (integer.isSignless()) {
    switch (integer.getWidth()) {
    case 1:
      return pb::TensorProto::BOOL;
    case 8:
      return pb::TensorProto::INT8;
    case 16:
      return pb::TensorProto::INT16;
    case 32:
      return pb::TensorProto::INT32;
    case 64:
      return pb::TensorProto::INT64;
    default:
      return pb::TensorProto::UNDEFINED;
    }
  }
  if (integer.isUnsigned()) {
    switch (integer.getWidth()) {
    case 8:
      return pb::TensorProto::UINT8;
    case 16:
      return pb::TensorProto::UINT16;
    case 32:
      return pb::TensorProto::UINT32;
    case 64:
      return pb::TensorProto::UINT64;
    default:
      return pb::TensorProto::UNDEFINED;
    }
  }
  return pb::TensorProto::UNDEFINED;
}

size_t mlir::ttt::onnx::getRawElementSize(int32_t dataType) {
  switch (dataType) {
  case pb::TensorProto::BOOL:
  case pb::TensorProto::INT8:
  case pb::TensorProto::UINT8:
    return 1;
  case pb::TensorProto::FLOAT16:
  case pb::TensorProto::BFLOAT16:
  case pb::TensorProto::INT16:
  case pb::TensorProto::UINT16:
    return 2;
  case pb::TensorProto::FLOAT:
  case pb::TensorProto::INT32:
  case pb::TensorProto::UINT32:
    return 4;
  case pb::TensorProto::DOUBLE:
  case pb::TensorProto::INT64:
  case pb::TensorProto::UINT64:
  case pb::TensorProto::COMPLEX64:
    return 8;
  case pb::TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

Type mlir::ttt::onnx::convertType(const pb::TypeProto &type,
                                  MLIRContext *context, std::string &whyNot) {
  switch (type.value_case()) {
  case pb::TypeProto::VALUE_NOT_SET:
    return UnknownType::get(context);
  case pb::TypeProto::kTensorType: {
    const pb::TypeProto::Tensor &tensor = type.tensor_type();
    if (!tensor.has_elem_type() ||
        tensor.elem_type() == pb::TensorProto::UNDEFINED)
      return UnknownType::get(context);
    Type element = convertElementType(tensor.elem_type(), context, whyNot);
    if (!element)
      return {};
    if (!tensor.has_shape())
      return UnrankedTensorType::get(element);
    SmallVector<int64_t> shape;
    for (const pb::TensorShapeProto::Dimension &dim : tensor.shape().dim()) {
      // An unknown size has neither a value nor a name; a negative value is
      // not a size (read as unknown, it would hide a broken exporter).
      if (dim.has_dim_value() && dim.dim_value() < 0) {
        whyNot = "dimension " + std::to_string(shape.size()) + " has size " +
                 std::to_string(dim.dim_value()) +
                 "; sizes are non-negative (leave the size unset, or name "
                 "it with dim_param, for an unknown one)";
        return {};
      }
      shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                          : ShapedType::kDynamic);
    }
    // Element counts are int64 everywhere (MLIR's getNumElements, the
    // runtime's buffers); a declared shape past that is no tensor.
    int64_t count = 1;
    for (int64_t size : shape)
      if (!ShapedType::isDynamic(size) &&
          llvm::MulOverflow(count, size, count)) {
        whyNot = "its shape declares more elements than a 64-bit count holds";
        return {};
      }
    return RankedTensorType::get(shape, element);
  }
  case pb::TypeProto::kSequenceType: {
    if (!type.sequence_type().has_elem_type())
      return SequenceType::get(context, UnknownType::get(context));
    Type element =
        convertType(type.sequence_type().elem_type(), context, whyNot);
    return element ? SequenceType::get(context, element) : Type();
  }
  case pb::TypeProto::kOptionalType: {
    if (!type.optional_type().has_elem_type())
      return OptionalType::get(context, UnknownType::get(context));
    Type element =
        convertType(type.optional_type().elem_type(), context, whyNot);
    return element ? OptionalType::get(context, element) : Type();
  }
  case pb::TypeProto::kMapType:
    whyNot = "map types are not supported";
    return {};
  case pb::TypeProto::kSparseTensorType:
    whyNot = "sparse tensors are not supported";
    return {};
  case pb::TypeProto::kOpaqueType:
    whyNot = "opaque types are not supported";
    return {};
  }
  whyNot = "the type is of a kind this build's ONNX library does not know";
  return {};
}

ArrayAttr mlir::ttt::onnx::getDimParams(const pb::TypeProto &type,
                                        MLIRContext *context) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return {};
  Builder b(context);
  SmallVector<Attribute> names;
  bool any = false;
  for (const pb::TensorShapeProto::Dimension &dim :
       type.tensor_type().shape().dim()) {
    StringRef name = dim.has_dim_param() ? StringRef(dim.dim_param()) : "";
    any |= !name.empty();
    names.push_back(b.getStringAttr(name));
  }
  return any ? b.getArrayAttr(names) : ArrayAttr();
}

bool mlir::ttt::onnx::fillTypeProto(Type type, ArrayAttr dimParams,
                                    pb::TypeProto &proto, std::string &whyNot) {
  if (isa<UnknownType>(type))
    return true;
  if (auto seq = dyn_cast<SequenceType>(type))
    return fillTypeProto(seq.getElementType(), {},
                         *proto.mutable_sequence_type()->mutable_elem_type(),
                         whyNot);
  if (auto opt = dyn_cast<OptionalType>(type))
    return fillTypeProto(opt.getElementType(), {},
                         *proto.mutable_optional_type()->mutable_elem_type(),
                         whyNot);
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor) {
    llvm::raw_string_ostream(whyNot) << "type " << type << " has no ONNX form";
    return false;
  }
  int32_t dataType = getDataType(tensor.getElementType());
  if (dataType == pb::TensorProto::UNDEFINED) {
    llvm::raw_string_ostream(whyNot)
        << "element type " << tensor.getElementType() << " has no ONNX form";
    return false;
  }
  pb::TypeProto::Tensor *out = proto.mutable_tensor_type();
  out->set_elem_type(dataType);
  auto ranked = dyn_cast<RankedTensorType>(tensor);
  if (!ranked)
    return true;
  pb::TensorShapeProto *shape = out->mutable_shape();
  for (auto [index, size] : llvm::enumerate(ranked.getShape())) {
    pb::TensorShapeProto::Dimension *dim = shape->add_dim();
    StringRef param;
    if (dimParams && index < dimParams.size())
      if (auto name = dyn_cast<StringAttr>(dimParams[index]))
        param = name.getValue();
    if (!ShapedType::isDynamic(size))
      dim->set_dim_value(size);
    else if (!param.empty())
      dim->set_dim_param(param.str());
  }
  return true;
}
