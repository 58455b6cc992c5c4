//===- ONNXTypes.cpp - onnx value types -----------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/ONNX/IR/ONNXTypes.h"
#include "ttt/Dialect/ONNX/IR/ONNXDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ttt::onnx;

#define GET_TYPEDEF_CLASSES
#include "ttt/Dialect/ONNX/IR/ONNXOpsTypes.cpp.inc"

void ONNXDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ttt/Dialect/ONNX/IR/ONNXOpsTypes.cpp.inc"
      >();
}

bool mlir::ttt::onnx::areCompatibleTypes(Type declared, Type actual) {
  if (declared == actual || isa<UnknownType>(declared) ||
      isa<UnknownType>(actual))
    return true;
  if (auto seq = dyn_cast<SequenceType>(declared)) {
    auto other = dyn_cast<SequenceType>(actual);
    return other &&
           areCompatibleTypes(seq.getElementType(), other.getElementType());
  }
  if (auto opt = dyn_cast<OptionalType>(declared)) {
    auto other = dyn_cast<OptionalType>(actual);
    return other &&
           areCompatibleTypes(opt.getElementType(), other.getElementType());
  }
  auto a = dyn_cast<TensorType>(declared);
  auto b = dyn_cast<TensorType>(actual);
  return a && b && a.getElementType() == b.getElementType() &&
         succeeded(verifyCompatibleShape(a, b));
}

bool mlir::ttt::onnx::isSupportedElementType(Type type) {
  if (type.isF16() || type.isBF16() || type.isF32() || type.isF64())
    return true;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (integer.isSignless())
      return width == 1 || width == 8 || width == 16 || width == 32 ||
             width == 64;
    return integer.isUnsigned() &&
           (width == 8 || width == 16 || width == 32 || width == 64);
  }
  if (auto complex = dyn_cast<ComplexType>(type))
    return complex.getElementType().isF32() || complex.getElementType().isF64();
  return false;
}
