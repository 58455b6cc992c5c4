//===- TypeConversion.h - ONNX types <-> MLIR types -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_TARGET_ONNX_TYPECONVERSION_H
#define TTT_LIB_TARGET_ONNX_TYPECONVERSION_H

#include "ProtoUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"

#include <string>

namespace mlir::ttt::onnx {

/// The MLIR element type of ONNX data type `dataType` (signed integers are
/// signless, BOOL is i1), or null for types this dialect cannot hold; then
/// `whyNot` says why.
Type convertElementType(int32_t dataType, MLIRContext *context,
                        std::string &whyNot);

/// The ONNX data type of element type `type`, or 0 (UNDEFINED).
int32_t getDataType(Type type);

/// The size in bytes of one element of `dataType` in `raw_data`.
size_t getRawElementSize(int32_t dataType);

/// The MLIR type of a value ONNX declares with `type`: a ranked tensor
/// (dynamic or symbolic dimensions are `?`), an unranked tensor, a sequence
/// or optional of those, or `!onnx.unknown` when `type` is empty. Returns
/// null for types this dialect cannot hold (maps, sparse tensors, strings,
/// ...) and says why in `whyNot`.
Type convertType(const pb::TypeProto &type, MLIRContext *context,
                 std::string &whyNot);

/// The dimension names of a tensor `type` ("" for a dimension without one),
/// or null if it names none.
ArrayAttr getDimParams(const pb::TypeProto &type, MLIRContext *context);

/// Writes `type` (with the dimension names `dimParams`, if any) into
/// `proto`. `!onnx.unknown` leaves `proto` empty. Returns false, saying why
/// in `whyNot`, for types ONNX has no form for.
bool fillTypeProto(Type type, ArrayAttr dimParams, pb::TypeProto &proto,
                   std::string &whyNot);

} // namespace mlir::ttt::onnx

#endif // TTT_LIB_TARGET_ONNX_TYPECONVERSION_H
